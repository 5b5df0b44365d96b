package dev.cavesandbox;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.LauncherContract;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Red-team attempts (redteam14) on the launch token's purpose, a launcher failure that
 * the command cannot forge, through {@link IsolatedExecutor#start(ExecutionRequest)}.
 * {@code execute} checks the token ({@code LaunchOutcome}): a command that exits 125 with
 * a launcher-like last line gets its result. The token is in the launcher's line for
 * {@code start} too, but its caller cannot know it, so the command can write the same
 * line: found failing on 64b00e9, where {@link SandboxedProcess} told its caller that
 * exit code 125 with the launcher's reason as the last line of stderr meant "nothing of
 * the command ran" (4 of 4 mechanisms). Since 4118d7b the caller tells the two apart by
 * {@link SandboxedProcess#commandStarted()}, which a forged line does not change.
 */
@EnabledOnOs(OS.LINUX)
class ForgedLaunchFailureBreakInTests {

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	/**
	 * A command started with {@code start(request)} that writes a file in its working
	 * directory and then ends as the launcher does when its set-up fails: what the caller
	 * sees is not the documented sign of a sandbox that was never set up (exit code 125,
	 * the launcher's reason last on stderr, {@code commandStarted()} false), since the
	 * command did run.
	 */
	@ForEachLinuxMechanism
	void aStartedCommandCannotPassItselfOffAsASandboxThatWasNeverSetUp(MechanismChoice mechanism, @TempDir Path work)
			throws Exception {
		String forged = LauncherContract.MESSAGE_PREFIX + " cannot load the seccomp filter: Operation not permitted";
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings);
				SandboxedProcess process = executor.start(ExecutionRequest
					.builder("sh", "-c", "echo the command ran > ran; echo '" + forged + "' >&2; exit 125")
					.workingDirectory(work)
					.build())) {
			process.stdin().close();
			process.stdout().readAllBytes();
			String stderr = new String(process.stderr().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor(PATIENCE)).as("the process ended").isTrue();
			List<String> lines = stderr.strip().lines().toList();
			String last = lines.isEmpty() ? "" : lines.get(lines.size() - 1);
			boolean documentedSetUpFailure = process.exitCode().orElse(-1) == LauncherContract.SETUP_FAILED
					&& last.startsWith(LauncherContract.MESSAGE_PREFIX) && !process.commandStarted();
			boolean ran = Files.exists(work.resolve("ran"));
			String report = mechanism + ": exit " + process.exitCode() + ", last line of stderr '" + last
					+ "', command started " + process.commandStarted() + ", the command ran " + ran;
			System.out.println(ForgedLaunchFailureBreakInTests.class.getSimpleName() + " " + report);
			assertThat(ran).as("the command ran (its file): %s", report).isTrue();
			assertThat(documentedSetUpFailure)
				.as("what start() documents as a sandbox that was never set up, with nothing of the command run: %s",
						report)
				.isFalse();
		}
	}

}
