package dev.cavesandbox.autoconfigure.observation;

import dev.cavesandbox.IsolatedExecutor;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Decorates every {@link IsolatedExecutor} bean, the auto-configured one and an
 * application's own, with an {@link ObservedIsolatedExecutor} when the context has an
 * {@link ObservationRegistry}. The registry and the convention are looked up lazily, when
 * the first executor is created.
 */
final class ObservedIsolatedExecutorPostProcessor implements BeanPostProcessor {

	private final ObjectProvider<ObservationRegistry> registry;

	private final ObjectProvider<SandboxExecutionObservationConvention> convention;

	private final ObjectProvider<EgressRecorder> egressRecorder;

	ObservedIsolatedExecutorPostProcessor(ObjectProvider<ObservationRegistry> registry,
			ObjectProvider<SandboxExecutionObservationConvention> convention,
			ObjectProvider<EgressRecorder> egressRecorder) {
		this.registry = registry;
		this.convention = convention;
		this.egressRecorder = egressRecorder;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof IsolatedExecutor executor && !(bean instanceof ObservedIsolatedExecutor)) {
			ObservationRegistry observationRegistry = this.registry.getIfUnique();
			if (observationRegistry != null) {
				return new ObservedIsolatedExecutor(executor, observationRegistry, this.convention.getIfUnique(),
						this.egressRecorder.getIfUnique());
			}
		}
		return bean;
	}

}
