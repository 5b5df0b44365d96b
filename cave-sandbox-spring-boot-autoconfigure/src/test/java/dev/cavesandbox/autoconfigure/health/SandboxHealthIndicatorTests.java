package dev.cavesandbox.autoconfigure.health;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.WarmPoolState;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import dev.cavesandbox.autoconfigure.SandboxFacts;
import dev.cavesandbox.autoconfigure.WarmPoolReporting;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.UnavailableIsolatedExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code sandbox} health of real executors, with verdicts of real probes on this
 * host: one that verifies isolation and one whose unshare binary does not exist. The
 * tests tagged {@value HostSandboxes#SANDBOX} need a working sandbox on this host (the
 * verified verdict, taken only when one of them runs); the others need none.
 * {@code ./mvnw verify} runs both.
 */
@EnabledOnOs(OS.LINUX)
class SandboxHealthIndicatorTests {

	private static IsolationCapability available;

	private static IsolationCapability unavailable;

	private static ProcessIsolatedExecutor isolated;

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void probe() {
		unavailable = HostSandboxes.missingUnshare();
		unisolated = ProcessIsolatedExecutor.unisolated(HostSandboxes.settings());
	}

	@AfterAll
	static void close() {
		if (isolated != null) {
			isolated.close();
		}
		unisolated.close();
	}

	/**
	 * Probe for real the first time a test of the {@value HostSandboxes#SANDBOX} group
	 * needs it.
	 */
	private static synchronized void verify() {
		if (available == null) {
			available = HostSandboxes.verified();
			isolated = ProcessIsolatedExecutor.isolated(HostSandboxes.settings(), available);
		}
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void verifiedIsolationIsUpWithWhatTheProbeVerified() {
		verify();
		Health health = health(isolated, available, SandboxMode.STRICT);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("mode", "strict")
			.containsEntry("isolated", true)
			.containsEntry("mechanism", available.mechanismName())
			.doesNotContainKey("error");
		assertThat(probe(health)).containsEntry("available", true)
			.containsEntry("mechanism", available.mechanismName())
			.containsEntry("verified", available.verified())
			.containsEntry("time", available.probeTime().toMillis() + "ms")
			.doesNotContainKey("cause");
		assertThat(available.verified()).contains("only interface: lo");
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void verifiedIsolationInFallbackModeIsUp() {
		verify();
		Health health = health(isolated, available, SandboxMode.FALLBACK);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("mode", "fallback").containsEntry("isolated", true);
	}

	@Test
	void fallbackWithoutIsolationIsUnisolatedWithTheCauseAndItsFix() {
		Health health = health(unisolated, unavailable, SandboxMode.FALLBACK);
		assertThat(health.getStatus()).isEqualTo(SandboxHealthIndicator.UNISOLATED);
		assertThat(health.getStatus().getCode()).isEqualTo("UNISOLATED");
		assertThat(health.getDetails()).containsEntry("mode", "fallback")
			.containsEntry("isolated", false)
			.containsEntry("mechanism", "none");
		assertThat(probe(health)).containsEntry("available", false)
			.containsEntry("cause", "BINARY_MISSING")
			.containsEntry("description", UnavailabilityCause.BINARY_MISSING.description())
			.containsEntry("fix", HostSandboxes.propertyFix(UnavailabilityCause.BINARY_MISSING))
			.containsEntry("detail", unavailable.detail())
			.doesNotContainKey("verified");
		assertThat((String) probe(health).get("fix"))
			.contains("cave.sandbox.linux.bwrap-path / unshare-path / setpriv-path")
			.isNotEqualTo(UnavailabilityCause.BINARY_MISSING.fix());
	}

	@Test
	void strictWithoutIsolationIsDownAndNamesTheRefusal() {
		Health health = health(new UnavailableIsolatedExecutor(unavailable), unavailable, SandboxMode.STRICT);
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsEntry("mode", "strict")
			.containsEntry("isolated", false)
			.containsEntry("mechanism", "none")
			.containsEntry("error", NetworkIsolationUnavailableException.CODE);
		assertThat(probe(health)).containsEntry("cause", "BINARY_MISSING");
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void executorClaimingIsolationThatTheProbeDidNotVerifyIsUnknown() {
		verify();
		Health health = health(isolated, unavailable, SandboxMode.STRICT);
		assertThat(health.getStatus()).isEqualTo(Status.UNKNOWN);
		assertThat(health.getDetails()).containsEntry("isolated", true);
		assertThat(probe(health)).containsEntry("available", false);
	}

	@Test
	void detailsKeepAStableOrder() {
		Health health = health(new UnavailableIsolatedExecutor(unavailable), unavailable, SandboxMode.STRICT);
		assertThat(List.copyOf(health.getDetails().keySet())).containsExactly("mode", "isolated", "mechanism", "error",
				"probe");
		assertThat(List.copyOf(probe(health).keySet())).containsExactly("available", "cause", "description", "fix",
				"detail", "time");
	}

	@Test
	@SuppressWarnings("unchecked")
	void aPoolOfWarmSandboxesIsShownButNeverChangesTheStatus() {
		WarmPoolState state = new WarmPoolState(2, 0, 1, 4, Map.of(WarmPoolState.Miss.EMPTY, 3L), Map.of(), 6,
				Duration.ofMillis(60), "3 preparations failed in a row: launcher exit 125");
		Health health = health(new WarmPoolReporting(unisolated, () -> state), unavailable, SandboxMode.FALLBACK);
		assertThat(health.getStatus()).isEqualTo(SandboxHealthIndicator.UNISOLATED);
		assertThat(List.copyOf(health.getDetails().keySet())).containsExactly("mode", "isolated", "mechanism", "probe",
				"warm");
		assertThat((Map<String, Object>) health.getDetails().get("warm")).containsExactly(Map.entry("size", 2),
				Map.entry("ready", 0), Map.entry("preparing", 1), Map.entry("hits", 4L), Map.entry("misses", 3L),
				Map.entry("suspended", "3 preparations failed in a row: launcher exit 125"));
		Health without = health(unisolated, unavailable, SandboxMode.FALLBACK);
		assertThat(without.getDetails()).doesNotContainKey("warm");
	}

	private static Health health(IsolatedExecutor executor, IsolationCapability capability, SandboxMode mode) {
		return new SandboxHealthIndicator(new SandboxFacts(executor, capability, mode)).health();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> probe(Health health) {
		return (Map<String, Object>) health.getDetails().get("probe");
	}

}
