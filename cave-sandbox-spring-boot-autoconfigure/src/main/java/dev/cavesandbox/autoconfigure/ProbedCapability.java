package dev.cavesandbox.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Runs the network-isolation probe once per application context and keeps the verdict as a
 * singleton of the bean factory, so that conditions (evaluated before any bean exists) and beans
 * share one measurement. The probe binds only the properties it needs, so that a mistake in
 * another property is still reported by Boot's binding report.
 */
final class ProbedCapability {

	static final String BEAN_NAME = "dev.cavesandbox.autoconfigure.probedCapability";

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
						capability.mechanism(), capability.verified());
			}
			else {
				logger.info("Network isolation unavailable (probe took {} ms): {}{}", capability.probeTime().toMillis(),
						capability.cause(), capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")");
			}
			beanFactory.registerSingleton(BEAN_NAME, new ProbedCapability(capability));
			return capability;
		}
	}

	private static SandboxSettings probeSettings(Environment environment) {
		Binder binder = Binder.get(environment);
		SandboxSettings.Builder builder = SandboxSettings.builder();
		binder.bind("cave.sandbox.linux.unshare-path", Path.class).ifBound(builder::unsharePath);
		binder.bind("cave.sandbox.linux.setpriv-path", Path.class).ifBound(builder::setprivPath);
		binder.bind("cave.sandbox.linux.bwrap-path", Path.class).ifBound(builder::bwrapPath);
		binder.bind("cave.sandbox.linux.ip-path", Path.class).ifBound(builder::ipPath);
		binder.bind("cave.sandbox.macos.sandbox-exec-path", Path.class).ifBound(builder::sandboxExecPath);
		binder.bind("cave.sandbox.mechanism", MechanismChoice.class).ifBound(builder::mechanism);
		binder.bind("cave.sandbox.loopback", Boolean.class).ifBound(builder::loopback);
		binder.bind("cave.sandbox.read-only-root", Boolean.class).ifBound(builder::readOnlyRoot);
		binder.bind("cave.sandbox.hidden-directories", Bindable.listOf(String.class)).ifBound((directories) -> {
			List<Path> paths = directories.stream().map(Path::of).toList();
			if (paths.stream().allMatch((directory) -> directory.isAbsolute() && directory.getParent() != null)) {
				builder.hiddenDirectories(paths);
			}
		});
		binder.bind("cave.sandbox.work-directory", Path.class).ifBound(builder::workDirectory);
		binder.bind("cave.sandbox.probe-timeout", Duration.class).ifBound((timeout) -> {
			if (!timeout.isNegative() && !timeout.isZero()) {
				builder.probeTimeout(timeout);
			}
		});
		return builder.build();
	}

}
