package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Exit codes are the same on every mechanism: {@code 128 + n} for a command that died of
 * signal n, even where the JVM thread that spawned it blocks the signal or a shell's
 * background job ignores it (the launcher resets both), 126 for a file that cannot be
 * executed (its {@code #!} interpreter is missing, or it lacks the execute permission).
 */
@EnabledOnOs(OS.LINUX)
class LauncherExitCodesTests {

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> executors = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor.unisolated(SandboxSettings.builder()
			.mechanism(MechanismChoice.NONE)
			.mode(SandboxMode.FALLBACK)
			.timeout(Duration.ofSeconds(30))
			.build());
	}

	@AfterAll
	static void closeExecutors() {
		executors.values().forEach(ProcessIsolatedExecutor::close);
		unisolated.close();
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.computeIfAbsent(mechanism,
				(key) -> LinuxMechanisms.isolated(key, (settings) -> settings.timeout(Duration.ofSeconds(30))));
	}

	/**
	 * On JDK 17 the JVM's threads block SIGQUIT and their children inherit the mask, so
	 * that a shell's SIGQUIT to itself could stay pending; isolated, the launcher clears
	 * the mask. (An unisolated control was dropped: whether the shell dies of the pending
	 * signal there depends on the JDK and on when dash changes its own mask, seen both
	 * ways in CI runs. With the launcher's signal reset removed by hand, the probe
	 * refuses the sandbox (SigIgn) and every test of this class goes red.) Run from the
	 * test's thread and from a thread of its own.
	 */
	@ForEachLinuxMechanism
	void commandKilledBySigquitExits131(MechanismChoice mechanism) throws Exception {
		String[] argv = { "sh", "-c", "kill -QUIT $$; echo survived" };
		assertDiedOf(isolated(mechanism).execute(argv), 131);
		assertDiedOf(inThreadOfItsOwn(() -> isolated(mechanism).execute(argv)), 131);
	}

	/**
	 * The unshare mechanism's set-up script runs the command as a background job, which
	 * starts with SIGINT and SIGQUIT ignored: the launcher resets them.
	 */
	@ForEachLinuxMechanism
	void commandKilledBySigintExits130(MechanismChoice mechanism) throws Exception {
		String[] argv = { "sh", "-c", "kill -INT $$; echo survived" };
		assertDiedOf(isolated(mechanism).execute(argv), 130);
		assertDiedOf(inThreadOfItsOwn(() -> isolated(mechanism).execute(argv)), 130);
	}

	@ForEachLinuxMechanism
	void scriptWhoseInterpreterIsMissingExits126(MechanismChoice mechanism, @TempDir Path directory) throws Exception {
		Path script = Files.writeString(directory.resolve("script"), "#!/nonexistent/interp\necho ran\n");
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("./script").workingDirectory(directory).build());
		assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(126);
		assertThat(result.stdoutText()).isEmpty();
		assertThat(result.stderrText())
			.isEqualTo("cave-sandbox: cannot execute ./script: its interpreter was not found\n");
	}

	/**
	 * The executor finds a file without the execute permission before anything is
	 * spawned; behind it, the launcher reports the same file with 126.
	 */
	@ForEachLinuxMechanism
	void fileWithoutExecutePermissionExits126(MechanismChoice choice, @TempDir Path directory) throws Exception {
		Path file = Files.writeString(directory.resolve("plain"), "echo ran\n");
		Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
		assertThatExceptionOfType(CommandNotExecutableException.class).isThrownBy(
				() -> isolated(choice).execute(ExecutionRequest.builder("./plain").workingDirectory(directory).build()))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo(CommandNotExecutableException.CODE));
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		NobodyCommandLines.Run run;
		try (java.io.Closeable grant = LinuxMechanisms.forCommandUser(mechanism, directory)) {
			run = NobodyCommandLines.run(mechanism.commandLine(List.of("./plain"), directory.toRealPath(), false),
					directory);
		}
		assertThat(run.exitCode()).as(run.output()).isEqualTo(126);
		assertThat(run.output()).isEqualTo("cave-sandbox: cannot execute ./plain: Permission denied\n");
	}

	/**
	 * The same four through the verified command line run by an unprivileged user.
	 */
	@ForEachLinuxMechanism
	void exitCodesAreTheSameForAnUnprivilegedUser(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory);
		Path script = Files.writeString(directory.resolve("script"), "#!/nonexistent/interp\necho ran\n");
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path plain = Files.writeString(directory.resolve("plain"), "echo ran\n");
		Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-r--r--"));
		NobodyCommandLines.giveToNobody(directory);
		Path real = directory.toRealPath();
		Map<List<String>, Integer> expected = Map.of(List.of("sh", "-c", "kill -QUIT $$; echo survived"), 131,
				List.of("sh", "-c", "kill -INT $$; echo survived"), 130, List.of("./script"), 126, List.of("./plain"),
				126);
		expected.forEach((argv, exitCode) -> {
			NobodyCommandLines.Run run = run(NobodyCommandLines.asNobody(mechanism.commandLine(argv, real, false)),
					directory);
			assertThat(run.exitCode()).as("%s: %s", argv, run.output()).isEqualTo(exitCode);
			assertThat(run.output()).doesNotContain("survived");
		});
	}

	private static NobodyCommandLines.Run run(List<String> command, Path directory) {
		try {
			return NobodyCommandLines.run(command, directory);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static ExecutionResult inThreadOfItsOwn(java.util.function.Supplier<ExecutionResult> execution)
			throws Exception {
		CompletableFuture<ExecutionResult> result = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				result.complete(execution.get());
			}
			catch (RuntimeException ex) {
				result.completeExceptionally(ex);
			}
		}, "exit-code-test");
		thread.start();
		return result.get(60, TimeUnit.SECONDS);
	}

	private static void assertDiedOf(ExecutionResult result, int exitCode) {
		assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(exitCode);
		assertThat(result.stdoutText()).as("the shell died before its echo").isEmpty();
		assertThat(result.timedOut()).isFalse();
	}

}
