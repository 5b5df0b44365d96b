package dev.cavesandbox.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Verdicts of real probes on this host, for the tests of this package: one that verifies
 * isolation, and one made unavailable for real by an unshare path that does not exist.
 */
final class HostSandboxes {

	static final Path MISSING_UNSHARE = Path.of("/nonexistent/cave5/unshare");

	/** Restricts the mechanism to unshare, so that a missing unshare makes isolation unavailable. */
	static final String ONLY_UNSHARE = "cave.sandbox.mechanism=unshare";

	/** With {@link #ONLY_UNSHARE}: the property that makes isolation unavailable in a context. */
	static final String MISSING_UNSHARE_PROPERTY = "cave.sandbox.linux.unshare-path=" + MISSING_UNSHARE;

	private HostSandboxes() {
	}

	static SandboxSettings settings() {
		return SandboxSettings.builder().timeout(Duration.ofSeconds(20)).killGracePeriod(Duration.ofMillis(200)).build();
	}

	static IsolationCapability verified() {
		IsolationCapability capability = new NetworkIsolationProbe(settings()).probe();
		assertThat(capability.available()).as("probe verdict %s", capability).isTrue();
		return capability;
	}

	static IsolationCapability missingUnshare() {
		IsolationCapability capability = new NetworkIsolationProbe(
				SandboxSettings.builder().mechanism(MechanismChoice.UNSHARE).unsharePath(MISSING_UNSHARE).build())
			.probe();
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING);
		return capability;
	}

}
