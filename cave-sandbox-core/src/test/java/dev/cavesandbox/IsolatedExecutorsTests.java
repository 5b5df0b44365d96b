package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.internal.execution.UnavailableIsolatedExecutor;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The policy as a plain Java program uses it: this module's class path holds no Spring
 * (the build's enforcer rule), so each test here is the core working alone. Unavailable
 * hosts are made for real by a wrapper that runs the real {@code unshare} where the user
 * namespace limit is 0.
 */
@EnabledOnOs(OS.LINUX)
class IsolatedExecutorsTests {

	private static final ExecutionRequest READ_UID = ExecutionRequest.builder("id", "-u")
		.timeout(Duration.ofSeconds(20))
		.build();

	/**
	 * The command runs as the JVM's uid, except a host root JVM's: as the command user
	 * (65534 by default; on seccomp a uid of the command user range of its own), so that
	 * the process limit holds, on every mechanism (the default work directory,
	 * {@code java.io.tmpdir}, is one the command user can reach).
	 */
	@ForEachLinuxMechanism
	void whereIsolationIsVerifiedTheExecutorRunsIsolated(MechanismChoice mechanism) throws IOException {
		int jvmUid = (int) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
		int expected = (jvmUid == 0 && LinuxProbe.initialUserNamespace()) ? SandboxSettings.Linux.DEFAULT_COMMAND_USER
				: jvmUid;
		try (IsolatedExecutor executor = IsolatedExecutors
			.create(SandboxSettings.builder().mechanism(mechanism).build())) {
			ExecutionResult result = executor.execute(READ_UID);
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			if (expected != jvmUid && mechanism == MechanismChoice.SECCOMP) {
				// on seccomp a uid of the command user range of its own
				SandboxSettings.CommandUserRange range = SandboxSettings.CommandUserRange.DEFAULT;
				assertThat(Long.parseLong(result.stdoutText().trim())).isBetween(range.first(), range.last());
			}
			else {
				assertThat(result.stdoutText()).isEqualTo(expected + "\n");
			}
			assertThat(result.isolation())
				.isEqualTo(new Isolation(mechanism.name().toLowerCase(java.util.Locale.ROOT), true));
			assertThat(executor.isolation().networkIsolated()).isTrue();
		}
	}

	@Test
	void strictModeOnAnUnavailableHostFailsClosed(@TempDir Path directory) throws IOException {
		SandboxSettings settings = refused(directory).mode(SandboxMode.STRICT).build();
		try (IsolatedExecutor executor = IsolatedExecutors.create(settings)) {
			assertThat(executor).isInstanceOf(UnavailableIsolatedExecutor.class);
			assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
				.isThrownBy(() -> executor.execute(READ_UID))
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_os_network_isolation_unavailable"))
				.satisfies((ex) -> assertThat(ex.capability().cause()).isEqualTo(UnavailabilityCause.NAMESPACE_LIMIT));
		}
	}

	@Test
	void fallbackModeOnAnUnavailableHostRunsUnisolatedAndSaysSo(@TempDir Path directory) throws IOException {
		SandboxSettings settings = refused(directory).mode(SandboxMode.FALLBACK).build();
		try (IsolatedExecutor executor = IsolatedExecutors.create(settings)) {
			ExecutionResult result = executor.execute(READ_UID);
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.isolation()).isEqualTo(Isolation.NONE);
			assertThat(executor.isolation()).isEqualTo(Isolation.NONE);
		}
	}

	/**
	 * The wrapper sets the limit for its own user namespace: a root JVM's command user
	 * would have the launcher create it before the wrapper runs.
	 */
	private SandboxSettings.Builder refused(Path directory) throws IOException {
		return SandboxSettings.builder()
			.commandUser(0)
			.mechanism(MechanismChoice.UNSHARE)
			.unsharePath(RestrictedHost.unshareWithNamespaceLimitZero(directory));
	}

}
