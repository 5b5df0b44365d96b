package dev.cavesandbox.internal.execution;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.process.ProcessRunner;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link LaunchOutcome}: outcomes built by hand, as the runner reports them.
 */
class LaunchOutcomeTests {

	private static final String TOKEN = "t0k3n";

	@Test
	void aCommandThatStartedIsAResultWhateverItsExitCode() {
		for (int exit : List.of(0, 1, 125, 137)) {
			assertThatCode(() -> LaunchOutcome.check(outcome(exit, "", true, false), "cmd", TOKEN, false, () -> false))
				.as("exit %d", exit)
				.doesNotThrowAnyException();
		}
	}

	@Test
	void theLaunchersFailureOfThisLaunchIsALaunchException() {
		String stderr = LauncherContract.MESSAGE_PREFIX + " cannot do it [launch " + TOKEN + "]";
		assertThatExceptionOfType(SandboxLaunchException.class)
			.isThrownBy(() -> LaunchOutcome.check(outcome(LauncherContract.SETUP_FAILED, stderr, false, false), "cmd",
					TOKEN, false, () -> false))
			.withMessageContaining("the sandbox for cmd could not be set up")
			.withMessageContaining("cannot do it");
	}

	@Test
	void aCommandsOwnExit125WithAForgedFailureLineIsAResult() {
		String stderr = LauncherContract.MESSAGE_PREFIX + " forged [launch other]";
		assertThatCode(() -> LaunchOutcome.check(outcome(LauncherContract.SETUP_FAILED, stderr, true, false), "cmd",
				TOKEN, false, () -> false))
			.doesNotThrowAnyException();
	}

	@Test
	void aSandboxKilledBeforeTheCommandStartedIsALaunchExceptionNamingTheSignal() {
		assertThatExceptionOfType(SandboxLaunchException.class)
			.isThrownBy(() -> LaunchOutcome.check(outcome(137, "", false, false), "cmd", TOKEN, true, () -> false))
			.withMessageContaining("the command cmd did not run: the warm sandbox's process was killed by signal 9")
			.withMessageContaining("OOM killer");
	}

	@Test
	void aTimeoutBeforeTheCommandStartedIsATimeoutResult() {
		assertThatCode(() -> LaunchOutcome.check(outcome(137, "", false, true), "cmd", TOKEN, false, () -> false))
			.doesNotThrowAnyException();
	}

	@Test
	void aSandboxThatTheExecutorsCloseEndedIsACancellation() {
		assertThatExceptionOfType(ExecutionCancelledException.class)
			.isThrownBy(() -> LaunchOutcome.check(outcome(137, "", false, false), "cmd", TOKEN, false, () -> true))
			.withMessageContaining("closed before the command started");
	}

	private static ProcessRunner.Outcome outcome(int exit, String stderr, boolean started, boolean timedOut) {
		return new ProcessRunner.Outcome(exit, new byte[0], stderr.getBytes(StandardCharsets.UTF_8), false, false,
				timedOut, Duration.ofMillis(1), List.of(), started);
	}

}
