package dev.cavesandbox.internal.execution;

import java.util.function.BooleanSupplier;

import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.launcher.LauncherFailure;
import dev.cavesandbox.internal.process.ProcessRunner;

/**
 * What the outcome of an isolated execution says of its launch before it is taken as the
 * command's result: a sandbox that could not be set up, or whose process ended before the
 * launcher started the command, is a launch failure ({@code cave_sandbox_launch_failed}),
 * never an exit code the command did not produce.
 */
final class LaunchOutcome {

	private LaunchOutcome() {
	}

	/**
	 * Throw where the outcome is not the command's result.
	 * @param outcome the outcome of an isolated execution
	 * @param command the command, for the messages
	 * @param token the launch token that the launcher's failure of this launch names
	 * @param warm whether the execution took a warm sandbox
	 * @param closed whether the executor's runner was closed
	 * @throws SandboxLaunchException if the sandbox could not be set up or its process
	 * ended before the command started
	 * @throws ExecutionCancelledException if the executor's close ended the sandbox
	 * before the command started
	 */
	static void check(ProcessRunner.Outcome outcome, String command, String token, boolean warm,
			BooleanSupplier closed) {
		checkSetUp(outcome, command, token);
		checkStarted(outcome, command, warm, closed);
	}

	/**
	 * Throw where the sandbox could not be set up: the launcher then exits with
	 * {@value LauncherContract#SETUP_FAILED} and its last line on stderr is its failure
	 * of this launch ({@link LauncherFailure#endsLaunch}). A timeout that struck while
	 * the sandbox was being set up is a timeout.
	 */
	private static void checkSetUp(ProcessRunner.Outcome outcome, String command, String token) {
		if (outcome.exitCode() != LauncherContract.SETUP_FAILED || outcome.timedOut()) {
			return;
		}
		LauncherFailure failure = LauncherFailure.of(outcome.stderr());
		if (failure.endsLaunch(token)) {
			throw new SandboxLaunchException("the sandbox for " + command + " could not be set up, the command did "
					+ "not run: " + failure.joined());
		}
	}

	/**
	 * Throw where the sandbox's process ended before the launcher started the command
	 * (its started marker, {@link LauncherContract#HANDOVER_STARTED}, never came): the
	 * exit code is then the sandbox's, not the command's (the wrapper killed from outside
	 * during its set-up, or while a warm sandbox waited for its frame). A timeout that
	 * struck before the command started is a timeout, as in {@link #checkSetUp}; a
	 * command that was started and then killed is a result; a sandbox that the executor's
	 * close ended first is a cancellation.
	 */
	private static void checkStarted(ProcessRunner.Outcome outcome, String command, boolean warm,
			BooleanSupplier closed) {
		if (outcome.commandStarted() || outcome.timedOut()) {
			return;
		}
		if (closed.getAsBoolean()) {
			throw new ExecutionCancelledException("the executor was closed before the command started", null);
		}
		int exit = outcome.exitCode();
		String ended = (exit > 128) ? "was killed by signal " + (exit - 128) : "exited with " + exit;
		String stderr = LauncherFailure.of(outcome.stderr()).joined();
		throw new SandboxLaunchException("the command " + command + " did not run: the " + (warm ? "warm " : "")
				+ "sandbox's process " + ended + " before the command started"
				+ (stderr.isEmpty() ? "" : " (its stderr: " + stderr + ")")
				+ "; check what kills the JVM's child processes from outside (the kernel's OOM killer: its log, "
				+ "dmesg; a memory limit of the JVM's cgroup; an operator or a process supervisor)");
	}

}
