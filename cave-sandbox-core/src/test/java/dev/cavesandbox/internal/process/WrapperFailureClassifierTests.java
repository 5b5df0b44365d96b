package dev.cavesandbox.internal.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.RestrictedHost;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class WrapperFailureClassifierTests {

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "unshare: unshare failed: Operation not permitted|KERNEL_REFUSED",
			"unshare: unshare failed: No space left on device|NAMESPACE_LIMIT",
			"unshare: unshare failed: Invalid argument|USER_NAMESPACES_UNSUPPORTED",
			"unshare: write failed /proc/self/uid_map: Operation not permitted|UID_MAP_REFUSED",
			"unshare: cannot open /proc/self/setgroups: Permission denied|UID_MAP_REFUSED",
			"bwrap: setting up uid map: Permission denied|UID_MAP_REFUSED",
			"bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted|UID_MAP_REFUSED",
			"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged "
					+ "user namespaces. On e.g. debian this can be enabled with 'sysctl "
					+ "kernel.unprivileged_userns_clone=1'.|KERNEL_REFUSED",
			"bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded "
					+ "(ENOSPC)|NAMESPACE_LIMIT",
			"bwrap: Creating new namespace failed: Invalid argument|USER_NAMESPACES_UNSUPPORTED",
			"bwrap: Can't mount tmpfs on /newroot/var/run: No such file or directory|MOUNT_REFUSED",
			"mount: /run: permission denied.|MOUNT_REFUSED",
			"bwrap: Failed to make / slave: Operation not permitted|MOUNT_REFUSED",
			"unshare: cannot change root filesystem propagation: Operation not permitted|MOUNT_REFUSED",
			"bwrap: Can't mount proc on /newroot/proc: Operation not permitted|MOUNT_REFUSED",
			"cave-sandbox-launcher: cannot load the seccomp filter: Invalid argument|SECCOMP_UNAVAILABLE",
			"cave-sandbox-launcher: cannot set no_new_privs: Invalid argument|SECCOMP_UNAVAILABLE",
			"cave-sandbox-launcher: cannot create the command user's namespace: unshare failed: No space left on "
					+ "device|NAMESPACE_LIMIT",
			"cave-sandbox-launcher: cannot create the command user's namespace: unshare failed: Operation not "
					+ "permitted|KERNEL_REFUSED",
			"cave-sandbox-launcher: cannot switch to the command user 65534: Invalid argument|NOT_VERIFIED",
			"sandbox-exec: sandbox_apply: Operation not permitted|NESTED_SANDBOX_REFUSED",
			"setpriv: something unexpected|UNKNOWN" })
	void wrapperMessagesAreClassified(String stderr, UnavailabilityCause cause) {
		assertThat(WrapperFailureClassifier.classify(stderr)).isEqualTo(cause);
	}

	/**
	 * The real unshare where the kernel refuses a new user namespace (see
	 * {@link RestrictedHost}): the cause comes from its stderr, and the detail keeps its
	 * exit code and message.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void aWrapperThatExitsWithAnErrorIsJudgedByItsStderr(@TempDir Path directory) throws Exception {
		Path unshare = RestrictedHost.unshareWithNamespaceLimitZero(directory);
		ProcessRunner.Outcome outcome = run(
				List.of(unshare.toString(), "--user", "--map-root-user", "--net", "--", "/bin/true"), directory,
				Duration.ofSeconds(30));
		IsolationCapability capability = WrapperFailureClassifier.failure(outcome, Duration.ofMillis(5));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.NAMESPACE_LIMIT);
		assertThat(capability.detail()).isEqualTo("exit 1: unshare: unshare failed: No space left on device");
		assertThat(capability.probeTime()).isEqualTo(Duration.ofMillis(5));
	}

	/**
	 * A wrapper that never answers is a timeout, whatever it wrote: the sleep would last
	 * 100 times the timeout.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void aWrapperThatTimedOutIsAProbeTimeout(@TempDir Path directory) throws Exception {
		Path hanging = RestrictedHost.script(directory, "hanging",
				"echo 'unshare: unshare failed: Operation not permitted' >&2; exec sleep 30");
		ProcessRunner.Outcome outcome = run(List.of(hanging.toString()), directory, Duration.ofMillis(300));
		assertThat(outcome.timedOut()).isTrue();
		IsolationCapability capability = WrapperFailureClassifier.failure(outcome, Duration.ofMillis(1234));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.PROBE_TIMEOUT);
		assertThat(capability.detail()).isEqualTo("no answer within 1234 ms");
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void aMissingWrapperThatCannotBeStartedIsMissing(@TempDir Path directory) {
		IOException ex = launch(directory.resolve("missing").toString());
		IsolationCapability capability = WrapperFailureClassifier.launchFailure(ex, Duration.ofMillis(5));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING);
		assertThat(capability.detail()).isEqualTo(ex.getMessage()).containsPattern("error(=|: )2\\b");
	}

	@Test
	@EnabledOnOs(OS.LINUX)
	void aWrapperWithoutExecutePermissionIsNotExecutable(@TempDir Path directory) throws IOException {
		Path file = Files.writeString(directory.resolve("not-a-program"), "not a program");
		IOException ex = launch(file.toString());
		IsolationCapability capability = WrapperFailureClassifier.launchFailure(ex, Duration.ofMillis(5));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.BINARY_NOT_EXECUTABLE);
		assertThat(capability.detail()).isEqualTo(ex.getMessage()).containsPattern("error(=|: )13\\b");
	}

	/**
	 * An argument longer than the kernel takes (E2BIG) says nothing about the wrapper's
	 * binary.
	 */
	@Test
	@EnabledOnOs(OS.LINUX)
	void anotherLaunchFailureIsUnknown() {
		IOException ex = launch("/bin/true", "x".repeat(256 * 1024));
		IsolationCapability capability = WrapperFailureClassifier.launchFailure(ex, Duration.ofMillis(5));
		assertThat(capability.cause()).isEqualTo(UnavailabilityCause.UNKNOWN);
		// E2BIG: "error=7, ..." on JDK 17, "error: 7 (...)" on JDK 25.
		assertThat(capability.detail()).isEqualTo(ex.getMessage()).containsPattern("error(=|: )7\\b");
	}

	private static ProcessRunner.Outcome run(List<String> commandLine, Path directory, Duration timeout)
			throws Exception {
		try (ProcessRunner runner = new ProcessRunner(Duration.ofMillis(100))) {
			return runner.run(new ProcessRunner.Spec(commandLine, directory,
					Map.of("PATH", SandboxSettings.BASELINE_PATH), null, timeout, 64 * 1024, null, null, true));
		}
	}

	private static IOException launch(String... commandLine) {
		IOException ex = catchThrowableOfType(() -> new ProcessBuilder(commandLine).start().waitFor(),
				IOException.class);
		assertThat(ex).as("starting %s fails", commandLine[0]).isNotNull();
		return ex;
	}

}
