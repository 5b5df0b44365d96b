package dev.cavesandbox.autoconfigure;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Runs the network-isolation probe once per application context and keeps the verdict as a
 * singleton of the bean factory, so that conditions (evaluated before any bean exists) and beans
 * share one measurement.
 */
final class ProbedCapability {

	static final String BEAN_NAME = "dev.cavesandbox.autoconfigure.probedCapability";

	private static final String PREFIX = "cave.sandbox";

	private static final Logger logger = LoggerFactory.getLogger(ProbedCapability.class);

	private final IsolationCapability capability;

	private ProbedCapability(IsolationCapability capability) {
		this.capability = capability;
	}

	static IsolationCapability get(ConfigurableListableBeanFactory beanFactory, Environment environment) {
		synchronized (beanFactory) {
			if (beanFactory.containsSingleton(BEAN_NAME)) {
				return ((ProbedCapability) beanFactory.getSingleton(BEAN_NAME)).capability;
			}
			IsolationCapability capability = new NetworkIsolationProbe(probeSettings(environment)).probe();
			if (capability.available()) {
				logger.info("Network isolation verified in {} ms: mechanism {}, {}", capability.probeTime().toMillis(),
						capability.mechanismName(), capability.verified());
			}
			else {
				logger.info("Network isolation unavailable (probe took {} ms): {}{}", capability.probeTime().toMillis(),
						capability.cause(), capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")");
			}
			beanFactory.registerSingleton(BEAN_NAME, new ProbedCapability(capability));
			return capability;
		}
	}

	/**
	 * Bind {@code cave.sandbox.*} to the properties record, as Boot binds the properties bean, with
	 * the rules of each value ({@link CaveSandboxBindHandler}): a bad value fails startup with Boot's
	 * report before anything is probed, and the probe sees the settings the executor will use.
	 */
	private static SandboxSettings probeSettings(Environment environment) {
		Bindable<CaveSandboxProperties> target = Bindable.of(CaveSandboxProperties.class);
		CaveSandboxProperties properties = Binder.get(environment)
			.bindOrCreate(PREFIX, target, new CaveSandboxBindHandler(BindHandler.DEFAULT));
		return properties.toSettings();
	}

}
