package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.probe.LinuxProbe;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Break-in attempts on the launcher's {@code contain} run in place (launcher 20: outer's
 * forked child runs contain itself instead of executing the launcher again as
 * {@code /proc/self/fd/4 contain}), and on the executor's close with warm sandboxes on by
 * default (its close kills the running trees and the waiting sandboxes at once). In
 * place, contain keeps outer's memory and its original environment block, in which the
 * launch token the executor handed outer was still written until outer zeroed it there
 * too (it only took it out of its environment array at first), and so does the command's
 * process until its execve(2); contain is outer's child before it has made itself
 * anything, so an outer killed at once leaves an orphan. Attempts the sandbox withstands
 * are passing tests. Every process a test starts ends by itself within a minute.
 */
@EnabledOnOs(OS.LINUX)
class ContainInPlaceBreakInTests {

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	private static final String SCAN = "launch-token-scan.py";

	/** Rounds of executions racing a close, per mechanism. */
	private static final int ROUNDS = 8;

	/**
	 * Callers per round: half through {@code executeAsync}, half on threads of their own.
	 */
	private static final int CALLERS = 4;

	/**
	 * A root JVM's command (the command user) looks for its launch token in every
	 * {@code environ} and {@code cmdline} under {@code /proc}, threads included, and
	 * tries the ptrace-mode files of every ancestor (contain and outer on seccomp, PID 1
	 * elsewhere): nothing is found, nothing opened. (On bwrap, unshare and namespaces the
	 * command user's {@code CAP_DAC_OVERRIDE} in its user namespace lists the numbers in
	 * PID 1's {@code /proc/1/fd}, a directory of mode 0500 of that namespace's root, but
	 * resolves none of them: that needs ptrace access, which PID 1, not dumpable, does
	 * not give.)
	 */
	@ForEachLinuxMechanism
	void aRootJvmsCommandFindsNoLaunchTokenAndOpensNothingOfItsAncestors(MechanismChoice choice) throws IOException {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.timeout(PATIENCE))) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder("python3", SCAN).inputFile(SCAN, resource(SCAN)).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertNothingRead(choice, result.stdoutText(), null);
		}
	}

	/**
	 * Outer zeroes the launch token where execve(2) wrote it, not only in its environment
	 * array: {@code /proc/PID/environ} reads that original block, of outer and of every
	 * process forked from it (contain in place on seccomp; the launcher's dumpable
	 * attempt of unix sockets in a probe). Read by this JVM (root: ptrace-mode access to
	 * any process) from outer and every process under it while the started command
	 * sleeps: the variable is there in outer's block, with no value left.
	 */
	@ForEachLinuxMechanism
	void noProcessOfASandboxHoldsTheLaunchTokenInItsOriginalEnvironment(MechanismChoice choice) throws IOException {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.timeout(PATIENCE));
				SandboxedProcess process = executor.start(ExecutionRequest.of("sh", "-c", "echo up; exec sleep 30"))) {
			// Read once the command runs: outer took the token before it started
			// anything.
			assertThat(new String(process.stdout().readNBytes(3), StandardCharsets.UTF_8)).isEqualTo("up\n");
			ProcessHandle outer = ProcessHandle.of(process.pid()).orElseThrow();
			List<String> values = new ArrayList<>(tokenValues(outer.pid()));
			assertThat(values).as("outer's token variable").isNotEmpty();
			outer.descendants().forEach((descendant) -> values.addAll(tokenValues(descendant.pid())));
			System.out.println(ContainInPlaceBreakInTests.class.getSimpleName() + " " + choice + ": "
					+ outer.descendants().count() + " processes under outer, token variables " + values.size());
			assertThat(values).as("the token variable in outer and every process under it").allSatisfy((value) -> {
				assertThat(value).as("what is left of its value").isEmpty();
			});
		}
	}

	/**
	 * The values of the launch token's variable in a process's original environment block
	 * ({@code /proc/PID/environ}); none where it has none or has ended.
	 */
	private static List<String> tokenValues(long pid) {
		byte[] environ;
		try {
			environ = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
		}
		catch (IOException ex) {
			return List.of();
		}
		String prefix = LauncherContract.TOKEN_VARIABLE + "=";
		return Stream.of(new String(environ, StandardCharsets.ISO_8859_1).split("\\x00"))
			.filter((entry) -> entry.startsWith(prefix))
			.map((entry) -> entry.substring(prefix.length()))
			.toList();
	}

	/**
	 * The same from a JVM of nobody (the mechanism's verified command line run as nobody,
	 * with a launch token in outer's environment as the executor gives it): on seccomp
	 * contain and outer then are of the command's own uid, and contain holds outer's
	 * original environment block with the token. The control, the same script run as
	 * nobody outside any sandbox under a shell whose environment has a token, finds that
	 * token and opens the shell's files: the scan would see one.
	 */
	@ForEachLinuxMechanism
	void anUnprivilegedJvmsCommandFindsNoLaunchTokenAndOpensNothingOfItsAncestors(MechanismChoice choice,
			@TempDir Path work, @TempDir Path launcherDirectory) throws IOException, InterruptedException {
		Files.write(work.resolve(SCAN), resource(SCAN));
		NobodyCommandLines.giveToNobody(work);
		SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory);
		String token = "contain-in-place-" + UUID.randomUUID();
		List<String> command = NobodyCommandLines
			.asNobody(mechanism.commandLine(List.of("python3", SCAN), work.toRealPath(), false));
		String output = run(command, work, token);
		assertNothingRead(choice, output, token);
		String control = "control-" + UUID.randomUUID();
		String unsandboxed = run(NobodyCommandLines.asNobody(List.of("/bin/sh", "-c", "python3 " + SCAN + "; :")), work,
				control);
		assertThat(unsandboxed).as("the control finds the token of its shell").contains(control);
		assertThat(unsandboxed.lines().filter((line) -> line.startsWith("READ ")))
			.as("the control opens its shell's files")
			.isNotEmpty();
	}

	/**
	 * Executions racing the executor's close, on every mechanism, with the default pool
	 * of two warm sandboxes being prepared, waiting and claimed, while a CPU hog loads
	 * every core: for each round an executor, four callers (two through
	 * {@code executeAsync}, two calling {@code execute} on threads of their own) of a
	 * command that sleeps 40 s, at once or (every other round) once both sandboxes wait,
	 * and the close after a random 0-150 ms. The close returns within a bound, each
	 * caller ends within it with a result its command produced or an executor's exception
	 * (cancelled or launch failure, never a process tree that survived), no process of
	 * any round is left, and no private working directory.
	 */
	@ForEachLinuxMechanism
	void executionsRacingTheExecutorsCloseEndCleanlyAndLeaveNothing(MechanismChoice choice, @TempDir Path parent)
			throws Exception {
		List<String> outcomes = new ArrayList<>();
		try (CpuHog hog = CpuHog.start()) {
			for (int round = 0; round < ROUNDS; round++) {
				Path work = Files.createDirectory(parent.resolve("round-" + round));
				String seconds = "40." + ThreadLocalRandom.current().nextInt(10_000_000, 99_999_999);
				try {
					outcomes.add(race(choice, work, seconds, round % 2 == 1));
					await().atMost(PATIENCE).untilAsserted(() -> {
						assertThat(MarkedProcesses.leftovers(seconds)).as("the commands of round %s", seconds)
							.isEmpty();
						assertThat(WarmPoolTests.processesNaming(work)).as("the sandboxes of the round").isEmpty();
					});
					assertThat(privateDirectories(work)).as("private working directories left").isEmpty();
				}
				finally {
					MarkedProcesses.stopAndKill(seconds);
				}
			}
		}
		System.out.println(getClass().getSimpleName() + " close race " + choice + ": " + outcomes);
	}

	private static String race(MechanismChoice choice, Path work, String seconds, boolean warm) throws Exception {
		ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 2, (settings) -> settings);
		if (warm) {
			// Both sandboxes waiting: two callers claim them, two go cold, and the
			// replacements are being prepared when the close comes.
			WarmPoolTests.awaitReady(executor, 2);
		}
		ExecutionRequest request = ExecutionRequest.builder("/bin/sh", "-c", "echo started; sleep " + seconds)
			.timeout(PATIENCE)
			.build();
		List<CompletableFuture<ExecutionResult>> calls = new ArrayList<>();
		List<Thread> threads = new ArrayList<>();
		List<Object> direct = new CopyOnWriteArrayList<>();
		for (int i = 0; i < CALLERS; i++) {
			if (i % 2 == 0) {
				calls.add(executor.executeAsync(request));
			}
			else {
				Thread thread = new Thread(() -> {
					try {
						direct.add(executor.execute(request));
					}
					catch (RuntimeException ex) {
						direct.add(ex);
					}
				});
				thread.start();
				threads.add(thread);
			}
		}
		Thread.sleep(ThreadLocalRandom.current().nextLong(150));
		long start = System.nanoTime();
		executor.close();
		Duration closing = Duration.ofNanos(System.nanoTime() - start);
		assertThat(closing).as("the close").isLessThan(Duration.ofSeconds(20));
		List<Object> ends = new ArrayList<>();
		for (CompletableFuture<ExecutionResult> call : calls) {
			try {
				ends.add(call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
			}
			catch (ExecutionException ex) {
				ends.add(ex.getCause());
			}
			catch (TimeoutException ex) {
				throw new AssertionError("an executeAsync racing the close hung", ex);
			}
		}
		for (Thread thread : threads) {
			thread.join(PATIENCE.toMillis());
			assertThat(thread.isAlive()).as("an execute racing the close hung").isFalse();
		}
		ends.addAll(direct);
		assertThat(ends).hasSize(CALLERS);
		List<String> kinds = new ArrayList<>();
		for (Object end : ends) {
			if (end instanceof ExecutionResult result) {
				assertThat(result.stdoutText()).as("a result of the command: %s", result.stderrText())
					.isIn("", "started\n");
				assertThat(result.exitCode()).as("killed by the close, not ended: %s", result.stderrText()).isNotZero();
				kinds.add((result.warm() ? "warm " : "cold ") + "result " + result.exitCode());
			}
			else {
				assertThat(end).as("what a caller racing the close got")
					.isInstanceOfAny(ExecutionCancelledException.class, SandboxLaunchException.class);
				kinds.add(end.getClass().getSimpleName());
			}
		}
		assertThat(catchAfterClose(executor, request)).isInstanceOf(ExecutionCancelledException.class);
		return (warm ? "after the pool was ready, " : "at once, ") + "closed in " + closing.toMillis() + " ms: "
				+ kinds;
	}

	private static Throwable catchAfterClose(ProcessIsolatedExecutor executor, ExecutionRequest request) {
		try {
			executor.execute(request);
			return new AssertionError("a closed executor ran a command");
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	/**
	 * The private directories (working directories, shared-memory directories) left in
	 * the executor's home of the work directory ({@code cave-sandbox-<uid>}): the entries
	 * named as {@code OwnerLock} names them, a tag of 3 and 6 random base-36 characters
	 * (the launcher's and the preload library's directories and the lock file are named
	 * otherwise).
	 */
	private static List<Path> privateDirectories(Path work) throws IOException {
		List<Path> left = new ArrayList<>();
		try (Stream<Path> homes = Files.list(work)) {
			for (Path home : homes.filter((path) -> path.getFileName().toString().matches("cave-sandbox-[0-9]+"))
				.toList()) {
				try (Stream<Path> entries = Files.list(home)) {
					entries.filter((entry) -> entry.getFileName().toString().matches("[0-9a-z]{9}")).forEach(left::add);
				}
			}
		}
		return left;
	}

	/**
	 * Assert that the scan found no launch token (none at all, or, given the token, not
	 * that one) and opened nothing of its ancestors, and that it did scan and found the
	 * ancestors it should have (contain and outer on seccomp).
	 */
	private static void assertNothingRead(MechanismChoice choice, String output, String token) {
		System.out.println(ContainInPlaceBreakInTests.class.getSimpleName() + " " + choice + ": "
				+ output.lines().filter((line) -> !line.startsWith("TOKEN ")).toList());
		String scanned = output.lines().filter((line) -> line.startsWith("SCANNED ")).findFirst().orElse("");
		assertThat(scanned).as("the scan ran to its end: %s", output).isNotEmpty();
		String[] fields = scanned.split(" ");
		assertThat(Integer.parseInt(fields[1])).as("environments read (its own at least)").isPositive();
		int ancestors = (fields.length > 3) ? fields[3].split(",").length : 0;
		assertThat(ancestors).as("ancestors found").isGreaterThanOrEqualTo((choice == MechanismChoice.SECCOMP) ? 2 : 1);
		List<String> tokens = output.lines()
			.filter((line) -> line.startsWith("TOKEN "))
			.filter((line) -> token == null || line.contains(token))
			.toList();
		assertThat(tokens).as("launch tokens read").isEmpty();
		assertThat(output.lines().filter((line) -> line.startsWith("READ ")))
			.as("files of the sandbox's processes opened")
			.isEmpty();
	}

	/** Run a command line with a launch token in its environment; its merged output. */
	private static String run(List<String> command, Path directory, String token)
			throws IOException, InterruptedException {
		ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true);
		builder.environment().put(LauncherContract.TOKEN_VARIABLE, token);
		Process process = builder.start();
		process.getOutputStream().close();
		try (InputStream output = process.getInputStream()) {
			String text = new String(output.readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as("did not hang: %s", text).isTrue();
			assertThat(process.exitValue()).as(text).isZero();
			return text;
		}
		finally {
			process.destroyForcibly();
		}
	}

	private static byte[] resource(String name) throws IOException {
		try (InputStream in = Objects.requireNonNull(ContainInPlaceBreakInTests.class.getResourceAsStream(name),
				name)) {
			return in.readAllBytes();
		}
	}

}
