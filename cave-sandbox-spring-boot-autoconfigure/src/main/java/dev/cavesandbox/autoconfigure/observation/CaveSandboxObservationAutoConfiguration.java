package dev.cavesandbox.autoconfigure.observation;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.autoconfigure.CaveSandboxProperties;
import dev.cavesandbox.autoconfigure.SandboxFacts;
import dev.cavesandbox.egress.EgressAllowList;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of cave-sandbox's Micrometer instrumentation, active when
 * Micrometer is on the class path:
 * <ul>
 * <li>every {@link IsolatedExecutor} bean records one
 * {@link SandboxObservationDocumentation#EXECUTION observation} per execution when the
 * context has an {@link ObservationRegistry} (Boot's, with
 * {@code spring-boot-micrometer-observation});
 * {@code management.observations.enable.cave.sandbox=false} switches them off;</li>
 * <li>the gauge {@code cave.sandbox.unisolated} when {@code micrometer-core} is present
 * (Boot binds it to every {@link io.micrometer.core.instrument.MeterRegistry}).</li>
 * <li>the counter {@code cave.sandbox.egress}: the egress proxy's decisions, counted by
 * the observed executor ({@link EgressMetrics}).</li>
 * <li>the pool of warm sandboxes' gauges, counters and timer
 * ({@code cave.sandbox.warm.*}, {@link WarmPoolMeterBinder}) when the executor has a
 * pool.</li>
 * </ul>
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class)
@ConditionalOnClass(ObservationRegistry.class)
public final class CaveSandboxObservationAutoConfiguration {

	@Bean
	static ObservedIsolatedExecutorPostProcessor caveSandboxObservedIsolatedExecutorPostProcessor(
			ObjectProvider<ObservationRegistry> registry,
			ObjectProvider<SandboxExecutionObservationConvention> convention,
			ObjectProvider<EgressRecorder> egressRecorder) {
		return new ObservedIsolatedExecutorPostProcessor(registry, convention, egressRecorder);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	@ConditionalOnBean({ IsolatedExecutor.class, IsolationCapability.class })
	static class SandboxMetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "caveSandboxMeterBinder")
		SandboxMeterBinder caveSandboxMeterBinder(IsolatedExecutor executor, IsolationCapability capability,
				CaveSandboxProperties properties) {
			return new SandboxMeterBinder(new SandboxFacts(executor, capability, properties.mode()));
		}

		@Bean
		@ConditionalOnMissingBean(name = "caveSandboxWarmPoolMeterBinder")
		WarmPoolMeterBinder caveSandboxWarmPoolMeterBinder(IsolatedExecutor executor) {
			return new WarmPoolMeterBinder(executor);
		}

		@Bean
		@ConditionalOnMissingBean(name = "caveSandboxEgressMetrics")
		EgressMetrics caveSandboxEgressMetrics(CaveSandboxProperties properties) {
			return new EgressMetrics(EgressAllowList.of(properties.egress().allowedHosts()));
		}

	}

}
