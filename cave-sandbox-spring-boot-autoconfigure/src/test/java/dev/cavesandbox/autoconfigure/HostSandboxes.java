package dev.cavesandbox.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Verdicts of real probes on this host, for the tests of this module: one that verifies
 * isolation, and one made unavailable for real by an unshare path that does not exist
 * (which needs no working sandbox on the host). Public for the tests of the role packages
 * ({@code health}, {@code info}, {@code observation}), with the seams of this package
 * they need.
 */
public final class HostSandboxes {

	/**
	 * The JUnit tag of the tests that need a working sandbox on this host: a context with
	 * the real probe that verifies isolation, or real isolated execution.
	 */
	public static final String SANDBOX = "sandbox";

	private static IsolationCapability missingUnshare;

	public static final Path MISSING_UNSHARE = Path.of("/nonexistent/cave5/unshare");

	/**
	 * Restricts the mechanism to unshare, so that a missing unshare makes isolation
	 * unavailable.
	 */
	public static final String ONLY_UNSHARE = "cave.sandbox.mechanism=unshare";

	/**
	 * With {@link #ONLY_UNSHARE}: the property that makes isolation unavailable in a
	 * context.
	 */
	public static final String MISSING_UNSHARE_PROPERTY = "cave.sandbox.linux.unshare-path=" + MISSING_UNSHARE;

	private HostSandboxes() {
	}

	public static SandboxSettings settings() {
		return SandboxSettings.builder()
			.timeout(Duration.ofSeconds(20))
			.killGracePeriod(Duration.ofMillis(200))
			.build();
	}

	public static IsolationCapability verified() {
		IsolationCapability capability = new NetworkIsolationProbe(settings()).probe();
		assertThat(capability.available()).as("probe verdict %s", capability).isTrue();
		return capability;
	}

	public static synchronized IsolationCapability missingUnshare() {
		if (missingUnshare == null) {
			IsolationCapability capability = new NetworkIsolationProbe(
					SandboxSettings.builder().mechanism(MechanismChoice.UNSHARE).unsharePath(MISSING_UNSHARE).build())
				.probe();
			assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING);
			missingUnshare = capability;
		}
		return missingUnshare;
	}

	/**
	 * Return an initializer with which a context takes the real verdict of
	 * {@link #missingUnshare()} instead of probing
	 * ({@link ProbedCapability#supplyUnavailable}): for the tests that only need a
	 * verdict of unavailable isolation, not a sandbox.
	 * @return the initializer
	 */
	public static ApplicationContextInitializer<ConfigurableApplicationContext> withoutIsolation() {
		IsolationCapability verdict = missingUnshare();
		return (context) -> ProbedCapability.supplyUnavailable(context.getBeanFactory(), verdict);
	}

	/**
	 * Return what {@link PropertyFixes#fix} tells an operator about a cause, for the
	 * tests of other packages that compare a reported fix with it.
	 * @param cause the cause
	 * @return the fix
	 */
	public static String propertyFix(UnavailabilityCause cause) {
		return PropertyFixes.fix(cause);
	}

}
