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
 * Runs the network-isolation probe once per application context and keeps the verdict as
 * a singleton of the bean factory, so that conditions (evaluated before any bean exists)
 * and beans share one measurement. Before it probes, it warns of {@code cave.sandbox.*}
 * keys that no property binds ({@link UnknownProperties}).
 * <p>
 * Tests of this module that only need a verdict of unavailable isolation supply it with
 * {@link #supplyUnavailable} instead of running the probe. Nothing can supply a verdict
 * of available isolation: only the probe verifies it.
 */
final class ProbedCapability {

	static final String BEAN_NAME = "dev.cavesandbox.autoconfigure.probedCapability";

	private static final String PREFIX = "cave.sandbox";

	/**
	 * The start of the probe's fact that a set process limit does not hold: the JVM runs
	 * as the host's root, which the kernel exempts from it.
	 */
	static final String PROCESS_LIMIT_NOT_GIVEN = "not given: the process limit";

	/**
	 * Where the facts of a verified mechanism are, for the one short INFO line at startup
	 * (the facts themselves, about 2,000 characters, are logged at DEBUG).
	 */
	static final String FACTS_POINTER = "at DEBUG (logging.level.dev.cavesandbox.autoconfigure.ProbedCapability"
			+ "=debug), or in the info endpoint (sandbox.probe.verified, with management.info.sandbox.enabled=true)";

	private static final Logger logger = LoggerFactory.getLogger(ProbedCapability.class);

	private final IsolationCapability capability;

	private ProbedCapability(IsolationCapability capability) {
		this.capability = capability;
	}

	/**
	 * The fix for a process limit that a root JVM does not get: a work directory that the
	 * command user can reach, where that was missing (the seccomp mechanism); else a JVM
	 * of another user, or a command user.
	 */
	static String processLimitFix(String fact) {
		return fact.contains("cannot reach the work directory")
				? "give others search permission (x) on the work directory and its parents, or choose another "
						+ "cave.sandbox.work-directory"
				: "run the JVM as a non-root user, or keep cave.sandbox.linux.command-user at its default (65534) and "
						+ "give the JVM CAP_SETUID and CAP_SETGID";
	}

	static IsolationCapability get(ConfigurableListableBeanFactory beanFactory, Environment environment) {
		synchronized (beanFactory) {
			if (beanFactory.containsSingleton(BEAN_NAME)) {
				return ((ProbedCapability) beanFactory.getSingleton(BEAN_NAME)).capability;
			}
			UnknownProperties.warn(environment, beanFactory.getBeanClassLoader());
			IsolationCapability capability = new NetworkIsolationProbe(probeSettings(environment)).probe();
			if (capability.available()) {
				logger.info("Network isolation verified in {} ms: mechanism {}; its {} facts: {}",
						capability.probeTime().toMillis(), capability.mechanismName(), capability.verified().size(),
						FACTS_POINTER);
				logger.debug("Network isolation verified: mechanism {}: {}", capability.mechanismName(),
						String.join("; ", capability.verified()));
				capability.verified()
					.stream()
					.filter((fact) -> fact.startsWith(PROCESS_LIMIT_NOT_GIVEN))
					.findFirst()
					.ifPresent((fact) -> logger.warn(
							"cave-sandbox: {} (cave.sandbox.limits.processes does not hold); fix: {}", fact,
							processLimitFix(fact)));
				capability.verified()
					.stream()
					.filter((fact) -> fact.contains(" left out: "))
					.forEach((fact) -> logger.warn("cave-sandbox: {}; commands do not see it (fix the path in "
							+ "cave.sandbox.filesystem.readable-paths or writable-paths)", fact));
			}
			else {
				logger.info("Network isolation unavailable (probe took {} ms): {}{}; fix: {}",
						capability.probeTime().toMillis(), capability.cause(),
						capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")",
						PropertyFixes.fix(capability.cause()));
			}
			beanFactory.registerSingleton(BEAN_NAME, new ProbedCapability(capability));
			return capability;
		}
	}

	/**
	 * Test seam: make a bean factory use the given verdict of unavailable isolation
	 * instead of probing, as if the probe had returned it. Call it before the context is
	 * refreshed (for example from an {@code ApplicationContextInitializer}). It refuses a
	 * verdict of available isolation, so it cannot make the starter claim isolation that
	 * the probe did not verify.
	 * @param beanFactory the bean factory of a context that is not refreshed yet
	 * @param capability a verdict of unavailable isolation
	 * @throws IllegalArgumentException if the verdict says isolation is available
	 * @throws IllegalStateException if the bean factory already holds a verdict
	 */
	static void supplyUnavailable(ConfigurableListableBeanFactory beanFactory, IsolationCapability capability) {
		if (capability.available()) {
			throw new IllegalArgumentException("only the probe can verify isolation, but was given " + capability);
		}
		synchronized (beanFactory) {
			if (beanFactory.containsSingleton(BEAN_NAME)) {
				throw new IllegalStateException("this bean factory already holds a verdict");
			}
			beanFactory.registerSingleton(BEAN_NAME, new ProbedCapability(capability));
		}
	}

	/**
	 * Bind {@code cave.sandbox.*} to the properties record, as Boot binds the properties
	 * bean, with the rules of each value ({@link CaveSandboxBindHandler}): a bad value
	 * fails startup with Boot's report before anything is probed, and the probe sees the
	 * settings the executor will use.
	 */
	private static SandboxSettings probeSettings(Environment environment) {
		Bindable<CaveSandboxProperties> target = Bindable.of(CaveSandboxProperties.class);
		CaveSandboxProperties properties = Binder.get(environment)
			.bindOrCreate(PREFIX, target, new CaveSandboxBindHandler(BindHandler.DEFAULT));
		return properties.toSettings();
	}

}
