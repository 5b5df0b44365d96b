package dev.cavesandbox.internal.process;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.FloodMain;
import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MarkedProcesses;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NewSession;
import dev.cavesandbox.ProcessTreeSurvivedException;
import dev.cavesandbox.SandboxHolderMain;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutorTests;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Process lifetime and stream handling of the runner, on real sandboxes of every Linux
 * mechanism and unisolated: JVM death, floods, stdin the child does not read, stdout
 * closed early, and the termination of a whole tree on timeout, interrupt and
 * cancellation.
 * <p>
 * The termination tests start a tree whose command traps SIGTERM (and writes a marker
 * into its working directory when it gets it), with a child that attempted a session of
 * its own ({@code setsid}, refused on every mechanism: {@link NewSession}; it runs once
 * the refusal has come) and a child that both ignore SIGTERM. They wait until every child
 * runs, then let the timeout, the interrupt or the cancel happen, and assert what only
 * the runner's own termination produces: the command's TERM marker and exit code (the
 * grace period reached it), and no child left (the SIGKILL after the grace period reached
 * the whole tree). The runner's last-resort reap (a SIGKILL to its direct child after 5
 * s) produces neither: it gives no SIGTERM, and unisolated it leaves the children alive.
 */
@EnabledOnOs(OS.LINUX)
public class ProcessRunnerTests {

	private static final Duration GRACE = Duration.ofMillis(400);

	/**
	 * The timeout of the timeout tests. It must cover spawning the sandbox and a few
	 * shells on a loaded machine before it fires; the tests check that everything had
	 * started.
	 */
	private static final Duration TIMEOUT = Duration.ofSeconds(3);

	/**
	 * The timeout of the tree of four processes, which must all be running before it
	 * strikes: on a machine loaded by other builds an unshare sandbox and its three
	 * children took longer than {@link #TIMEOUT} to start.
	 */
	private static final Duration TREE_TIMEOUT = Duration.ofSeconds(10);

	/** A generous "it did not hang" limit on a call, far above timeout and grace. */
	private static final Duration NO_HANG = Duration.ofSeconds(90);

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> isolated = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor.unisolated(SandboxSettings.builder().killGracePeriod(GRACE).build());
	}

	@AfterAll
	static void closeExecutors() {
		unisolated.close();
		isolated.values().forEach(ProcessIsolatedExecutor::close);
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return isolated.computeIfAbsent(mechanism,
				(choice) -> LinuxMechanisms.isolated(choice, (settings) -> settings.killGracePeriod(GRACE)));
	}

	@ForEachLinuxMechanism
	@Timeout(180)
	void killedJvmLeavesNoSandboxBehindWhateverThreadStartedIt(MechanismChoice mechanism, @TempDir Path workDirectory)
			throws Exception {
		String marker = "7" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000) + "0";
		// A work directory of its own: other JVMs' executors clean up the dead JVM's
		// directories in /tmp.
		Process jvm = childJvm(List.of(), SandboxHolderMain.class, marker, mechanism.name(), workDirectory.toString())
			.start();
		try (BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream()))) {
			String ready = out.readLine();
			assertThat(ready).as("child JVM output").startsWith("READY");
			int expected = Integer.parseInt(ready.substring("READY ".length()));
			// Not killed early: the short-lived thread has ended, the sandboxes still
			// run.
			Thread.sleep(500);
			assertThat(SandboxHolderMain.running(marker)).hasSize(expected);
			jvm.destroyForcibly();
			assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
			// The kernel's parent-death signal takes them down; the bound only says "not
			// left running".
			await().atMost(Duration.ofSeconds(30)).until(() -> SandboxHolderMain.anyNaming(marker).isEmpty());
			// The killed JVM never removed its private working directories; the next
			// executor does.
			// The work directory is the test's own: every private directory in it was
			// the killed JVM's, a working directory per sandbox and, without a mount
			// namespace, a shared-memory directory per sandbox too.
			Path home = PrivateHome.of(workDirectory);
			int perSandbox = LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT) ? 1 : 2;
			// And those of the executor's waiting sandboxes (at most the default pool).
			assertThat(privateDirectories(home)).hasSizeBetween(expected * perSandbox,
					(expected + WarmPoolSettings.DEFAULT_SIZE) * perSandbox);
			ProcessIsolatedExecutor.unisolated(SandboxSettings.builder().workDirectory(workDirectory).build()).close();
			assertThat(privateDirectories(home)).isEmpty();
		}
		finally {
			jvm.destroyForcibly();
			SandboxHolderMain.anyNaming(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@Tag("slow")
	@ForEachLinuxMechanism
	@Timeout(300)
	void floodOfOneGibibytePerStreamRunsInASmallHeapAndKeepsOnlyTheCap(MechanismChoice mechanism) throws Exception {
		Process jvm = childJvm(List.of("-Xmx48m"), FloodMain.class, mechanism.name()).redirectErrorStream(true).start();
		String output = new String(jvm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(jvm.waitFor(120, TimeUnit.SECONDS)).isTrue();
		assertThat(jvm.exitValue()).as(output).isZero();
		assertThat(output).contains("exit=0 stdout=1048576 stderr=1048576 truncated=true,true");
		Matcher heap = Pattern.compile("heapBefore=(\\d+) heapPeak=(\\d+)").matcher(output);
		assertThat(heap.find()).as(output).isTrue();
		long growth = Long.parseLong(heap.group(2)) - Long.parseLong(heap.group(1));
		// Two streams of 1 MiB each, buffered with doubling arrays: a few MiB at most.
		assertThat(growth).as(output).isLessThan(16L * 1024 * 1024);
	}

	/**
	 * {@code close()} while a run's tree holds a process that SIGKILL cannot end yet (a
	 * task frozen by the cgroup v1 freezer dies only once thawed, freezer-subsystem.rst):
	 * the run's outcome comes once the close has torn the tree down (and waited for what
	 * is dying), and names that process as a survivor, which the executor turns into a
	 * {@link ProcessTreeSurvivedException}; the process counts as dying (its SIGKILL is
	 * pending).
	 */
	@Test
	void aRunThatCloseEndedNamesWhatOutlivedTheClose(@TempDir Path directory) throws Exception {
		Path freezer = Path.of("/sys/fs/cgroup/freezer");
		assumeTrue(Files.isWritable(freezer.resolve("cgroup.procs")), "no writable cgroup v1 freezer here");
		Path group = Files.createDirectory(freezer.resolve("cave-sandbox-test-" + UUID.randomUUID()));
		String marker = uniqueSleep();
		long frozen = -1;
		try {
			ProcessRunner runner = new ProcessRunner(GRACE);
			CompletableFuture<ProcessRunner.Outcome> run = CompletableFuture.supplyAsync(() -> {
				try {
					return runner.run(new ProcessRunner.Spec(List.of("sh", "-c", marker + " & echo $! > pid; wait"),
							directory, Map.of("PATH", SandboxSettings.BASELINE_PATH), null, Duration.ofSeconds(60),
							1024, null, null, false));
				}
				catch (IOException | InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			});
			await().atMost(NO_HANG)
				.until(() -> Files.exists(directory.resolve("pid"))
						&& !Files.readString(directory.resolve("pid")).isBlank());
			frozen = Long.parseLong(Files.readString(directory.resolve("pid")).trim());
			Files.writeString(group.resolve("cgroup.procs"), frozen + "\n");
			Files.writeString(group.resolve("freezer.state"), "FROZEN\n");
			await().atMost(NO_HANG)
				.until(() -> Files.readString(group.resolve("freezer.state")).trim().equals("FROZEN"));
			runner.close();
			ProcessRunner.Outcome outcome = run.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
			assertThat(outcome.survivors()).as("the frozen process %d", frozen).containsExactly(frozen);
			assertThat(ProcFs.dying(ProcessHandle.of(frozen).orElseThrow()))
				.as("the frozen process %d, its SIGKILL pending", frozen)
				.isTrue();
			assertThat(ProcFs.dying(ProcessHandle.current())).as("this JVM").isFalse();
		}
		finally {
			Files.writeString(group.resolve("freezer.state"), "THAWED\n");
			if (frozen > 0) {
				ProcessHandle.of(frozen).ifPresent(ProcessHandle::destroyForcibly);
			}
			await().atMost(NO_HANG).until(() -> Files.readString(group.resolve("cgroup.procs")).isBlank());
			Files.delete(group);
		}
	}

	/**
	 * Runs racing the runner's close (a red team's, {@code ContainInPlaceBreakInTests}
	 * saw it through the executor on unshare): each run ends with an outcome or the
	 * cancellation, never with the I/O pool's own {@code RejectedExecutionException},
	 * which a run whose process was spawned as the close began got when it started its
	 * streams after the close had shut the pool down; and no process of any run is left.
	 * 300 rounds, each a runner, two runs of a unique sleep, and its close after a random
	 * 0-3 ms. (Unisolated and exec'd: the direct child is the whole tree; a shell that
	 * forked its sleep would leave it where the close or the spawn's own check killed the
	 * shell before listing it, as fallback mode contains nothing.)
	 */
	@Test
	void runsRacingTheCloseEndWithAnOutcomeOrTheCancellation(@TempDir Path directory) throws Exception {
		Map<String, Integer> ends = new ConcurrentHashMap<>();
		for (int round = 0; round < 300; round++) {
			String marker = uniqueSleep();
			ProcessRunner runner = new ProcessRunner(GRACE);
			List<CompletableFuture<String>> runs = List.of(1, 2)
				.stream()
				.map((run) -> CompletableFuture.supplyAsync(() -> {
					try {
						ProcessRunner.Outcome outcome = runner
							.run(new ProcessRunner.Spec(List.of("sh", "-c", "exec " + marker), directory,
									Map.of("PATH", SandboxSettings.BASELINE_PATH), null, Duration.ofSeconds(60), 1024,
									null, null, false));
						return "outcome " + outcome.exitCode();
					}
					catch (ExecutionCancelledException ex) {
						return "cancelled";
					}
					catch (IOException | InterruptedException ex) {
						throw new IllegalStateException(ex);
					}
				}))
				.toList();
			Thread.sleep(ThreadLocalRandom.current().nextInt(4));
			runner.close();
			for (CompletableFuture<String> run : runs) {
				ends.merge(run.get(NO_HANG.toSeconds(), TimeUnit.SECONDS), 1, Integer::sum);
			}
			await().atMost(NO_HANG).until(() -> MarkedProcesses.leftovers(marker.split(" ")[1]).isEmpty());
		}
		System.out.println("ProcessRunnerTests runs racing the close: " + ends);
		assertThat(ends).isNotEmpty();
	}

	/**
	 * A stand-in for a launcher of {@code --handover} (a shell that writes the markers
	 * itself) killed before its started marker: the outcome says the command never
	 * started, cold and claimed warm; one killed after it is a result of a started
	 * command, whose own output keeps a copy of the marker.
	 */
	@Test
	void launcherKilledBeforeItsStartedMarkerIsAnOutcomeOfACommandNeverStarted(@TempDir Path directory)
			throws Exception {
		byte[] frame = "frame".getBytes(StandardCharsets.US_ASCII);
		try (ProcessRunner runner = new ProcessRunner(GRACE)) {
			ProcessRunner.Outcome beforeCold = runner.run(launcher(directory, "printf CAVE-RDY; kill -9 $$"), frame);
			assertThat(beforeCold.exitCode()).isEqualTo(137);
			assertThat(beforeCold.commandStarted()).isFalse();
			assertThat(beforeCold.stdout()).isEmpty();
			ProcessRunner.Spec waiting = launcher(directory, "printf CAVE-RDY; head -c 5 >/dev/null; kill -9 $$");
			Process prepared = runner.spawnPrepared(waiting);
			assertThat(ReadyMarker.await(prepared.getInputStream())).isTrue();
			ProcessRunner.Outcome beforeWarm = runner.runPrepared(prepared, waiting, frame);
			assertThat(beforeWarm.exitCode()).isEqualTo(137);
			assertThat(beforeWarm.commandStarted()).isFalse();
			ProcessRunner.Outcome after = runner.run(launcher(directory,
					"printf CAVE-RDY; head -c 5 >/dev/null; printf CAVE-RUNCAVE-RUNmine; kill -9 $$"), frame);
			assertThat(after.exitCode()).isEqualTo(137);
			assertThat(after.commandStarted()).isTrue();
			assertThat(new String(after.stdout(), StandardCharsets.US_ASCII)).isEqualTo("CAVE-RUNmine");
			ProcessRunner.Outcome unmarked = runner.run(launcher(directory, "printf plain; kill -9 $$"), null);
			assertThat(unmarked.commandStarted()).as("no frame, no launcher: the command itself").isTrue();
			assertThat(new String(unmarked.stdout(), StandardCharsets.US_ASCII)).isEqualTo("plain");
		}
	}

	/**
	 * A process started with a frame gives its caller stdout without both markers, and
	 * keeps a copy of the started marker that the command writes itself.
	 */
	@Test
	void startedProcessWithAFrameReadsWithoutTheMarkers(@TempDir Path directory) throws Exception {
		try (ProcessRunner runner = new ProcessRunner(GRACE)) {
			WatchedProcess started = runner.start(
					launcher(directory, "printf CAVE-RDY; head -c 5 >/dev/null; printf CAVE-RUNCAVE-RUNmine"),
					"frame".getBytes(StandardCharsets.US_ASCII), (ended) -> {
					});
			assertThat(new String(started.stdout().readAllBytes(), StandardCharsets.US_ASCII))
				.isEqualTo("CAVE-RUNmine");
			started.ended().get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
		}
	}

	private static ProcessRunner.Spec launcher(Path directory, String script) {
		return new ProcessRunner.Spec(List.of("sh", "-c", script), directory,
				Map.of("PATH", SandboxSettings.BASELINE_PATH), null, TIMEOUT, 1024, null, null, false);
	}

	@ForEachLinuxMechanism
	void stdinLargerThanTheChildReadsNeitherBlocksNorFails(MechanismChoice mechanism) {
		assertLargeStdinIsNotFatal(isolated(mechanism));
	}

	@Test
	void stdinLargerThanTheChildReadsNeitherBlocksNorFailsUnisolated() {
		assertLargeStdinIsNotFatal(unisolated);
	}

	private static void assertLargeStdinIsNotFatal(ProcessIsolatedExecutor executor) {
		byte[] input = new byte[16 * 1024 * 1024];
		java.util.Arrays.fill(input, (byte) 'x');
		ExecutionResult result = executor.execute(ExecutionRequest.builder("head", "-c", "3").stdin(input).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo("xxx");
		assertThat(result.timedOut()).isFalse();
	}

	@ForEachLinuxMechanism
	void stdinCanBeAStreamAndIsClosedAfterIt(MechanismChoice mechanism) {
		// wc reads to the end of its input: it would wait for the timeout if stdin stayed
		// open.
		ExecutionResult result = isolated(mechanism).execute(
				ExecutionRequest.builder("wc", "-c").stdin(() -> new ByteArrayInputStream(new byte[123_456])).build());
		assertThat(result.timedOut()).isFalse();
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().trim()).isEqualTo("123456");
	}

	@ForEachLinuxMechanism
	void commandThatClosesStdoutEarlyButKeepsRunningIsWaitedFor(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute("sh", "-c",
				"echo early; exec 1>&-; sleep 1; echo late >&2");
		assertThat(result.exitCode()).isZero();
		assertThat(result.timedOut()).isFalse();
		assertThat(result.stdoutText()).isEqualTo("early\n");
		assertThat(result.stderrText()).isEqualTo("late\n");
	}

	/**
	 * Unisolated, a background process of the command can keep the output pipes open
	 * after the command has exited: the call still returns after the grace period, with
	 * what was read.
	 */
	@Test
	void unisolatedBackgroundProcessHoldingThePipesDoesNotHoldTheCall() {
		String marker = uniqueSleep();
		try {
			ExecutionResult result = unisolated.execute("sh", "-c", "echo kept; " + marker + " & exit 0");
			assertThat(result.exitCode()).isZero();
			assertThat(result.stdoutText()).isEqualTo("kept\n");
			assertThat(ProcessIsolatedExecutorTests.processesWith(marker))
				.as("the background process outlives the call")
				.isNotEmpty();
		}
		finally {
			ProcessIsolatedExecutorTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * Closing the executor while a caller waits in {@code execute} kills the command's
	 * whole tree, background processes included, and the waiting call returns.
	 */
	@Test
	void closingTheExecutorKillsTheTreesStillRunning() throws Exception {
		String marker = uniqueSleep();
		ProcessIsolatedExecutor executor = ProcessIsolatedExecutor
			.unisolated(SandboxSettings.builder().killGracePeriod(GRACE).timeout(Duration.ofMinutes(10)).build());
		CompletableFuture<ExecutionResult> call = new CompletableFuture<>();
		Thread caller = new Thread(() -> {
			try {
				call.complete(executor.execute("sh", "-c", marker + " & " + marker + "; :"));
			}
			catch (RuntimeException ex) {
				call.completeExceptionally(ex);
			}
		});
		try {
			caller.start();
			await().atMost(Duration.ofSeconds(60))
				.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).size() == 3);
			executor.close();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
			assertThat(call).succeedsWithin(NO_HANG)
				.satisfies((result) -> assertThat(result.exitCode()).isEqualTo(137));
		}
		finally {
			ProcessIsolatedExecutorTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/** A {@code sleep} whose command line no other process has: its own marker. */
	private static String uniqueSleep() {
		return "sleep 7" + (100000 + Math.abs(UUID.randomUUID().getLeastSignificantBits() % 800000));
	}

	@ForEachLinuxMechanism
	void timeoutTerminatesTheCommandGracefullyAndKillsTheWholeTree(MechanismChoice mechanism, @TempDir Path directory)
			throws Exception {
		assertTimeoutTerminatesTheTree(isolated(mechanism), directory, NewSession.refused(mechanism));
	}

	@Test
	void timeoutTerminatesTheCommandGracefullyAndKillsTheWholeTreeUnisolated(@TempDir Path directory) throws Exception {
		assertTimeoutTerminatesTheTree(unisolated, directory, false);
	}

	private static void assertTimeoutTerminatesTheTree(ProcessIsolatedExecutor executor, Path directory,
			boolean sessionRefused) throws Exception {
		Tree tree = new Tree(directory, sessionRefused);
		try {
			CompletableFuture<ExecutionResult> call = executor.executeAsync(tree.request(TREE_TIMEOUT));
			tree.awaitRunning();
			ExecutionResult result = call.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
			assertThat(result.timedOut()).isTrue();
			tree.assertTerminatedGracefullyThenKilled();
			assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(3);
			assertThat(result.stdoutText()).isEqualTo("started\ngot-term\n");
			assertThat(result.wallTime()).isGreaterThanOrEqualTo(TREE_TIMEOUT);
		}
		finally {
			tree.kill();
		}
	}

	@ForEachLinuxMechanism
	void commandIgnoringTermIsKilledAfterTheGracePeriod(MechanismChoice mechanism, @TempDir Path directory)
			throws Exception {
		assertTermIgnoringCommandIsKilledAfterTheGracePeriod(isolated(mechanism), directory);
	}

	@Test
	void commandIgnoringTermIsKilledAfterTheGracePeriodUnisolated(@TempDir Path directory) throws Exception {
		assertTermIgnoringCommandIsKilledAfterTheGracePeriod(unisolated, directory);
	}

	private static void assertTermIgnoringCommandIsKilledAfterTheGracePeriod(ProcessIsolatedExecutor executor,
			Path directory) throws Exception {
		String marker = marker("35");
		try {
			CompletableFuture<ExecutionResult> call = executor.executeAsync(
					ExecutionRequest.builder("sh", "-c", "trap '' TERM; echo ignoring > ignoring; exec sleep " + marker)
						.workingDirectory(directory)
						.timeout(TIMEOUT)
						.build());
			await().atMost(NO_HANG).until(() -> sleeping(marker).size() == 1);
			ExecutionResult result = call.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
			assertThat(directory.resolve("ignoring")).as("the trap was set before the timeout").hasContent("ignoring");
			assertThat(result.timedOut()).isTrue();
			assertThat(result.exitCode()).as("killed by SIGKILL").isEqualTo(137);
			// The grace period is a minimum: the SIGKILL comes only after it.
			assertThat(result.wallTime()).isGreaterThanOrEqualTo(TIMEOUT.plus(GRACE));
			await().atMost(Duration.ofSeconds(30)).until(() -> processesWith(marker).isEmpty());
		}
		finally {
			processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@ForEachLinuxMechanism
	void interruptingTheCallerKillsTheTree(MechanismChoice mechanism, @TempDir Path directory) throws Exception {
		assertInterruptTerminatesTheTree(isolated(mechanism), directory, NewSession.refused(mechanism));
	}

	@Test
	void interruptingTheCallerKillsTheTreeUnisolated(@TempDir Path directory) throws Exception {
		assertInterruptTerminatesTheTree(unisolated, directory, false);
	}

	private static void assertInterruptTerminatesTheTree(ProcessIsolatedExecutor executor, Path directory,
			boolean sessionRefused) throws Exception {
		Tree tree = new Tree(directory, sessionRefused);
		AtomicReference<Throwable> thrown = new AtomicReference<>();
		Thread caller = new Thread(() -> {
			try {
				executor.execute(tree.request(NO_HANG));
			}
			catch (Throwable ex) {
				thrown.set(ex);
			}
		});
		try {
			caller.start();
			tree.awaitRunning();
			caller.interrupt();
			caller.join(NO_HANG.toMillis());
			assertThat(caller.isAlive()).as("the caller returned").isFalse();
			assertThat(thrown.get()).isInstanceOf(ExecutionCancelledException.class);
			assertThat(((CaveSandboxException) thrown.get()).code()).isEqualTo("cave_sandbox_execution_cancelled");
			tree.assertTerminatedGracefullyThenKilled();
		}
		finally {
			tree.kill();
		}
	}

	@ForEachLinuxMechanism
	void cancellingAnAsynchronousExecutionKillsTheTree(MechanismChoice mechanism, @TempDir Path directory)
			throws Exception {
		assertCancelTerminatesTheTree(isolated(mechanism), directory, NewSession.refused(mechanism));
	}

	@Test
	void cancellingAnAsynchronousExecutionKillsTheTreeUnisolated(@TempDir Path directory) throws Exception {
		assertCancelTerminatesTheTree(unisolated, directory, false);
	}

	private static void assertCancelTerminatesTheTree(ProcessIsolatedExecutor executor, Path directory,
			boolean sessionRefused) throws Exception {
		Tree tree = new Tree(directory, sessionRefused);
		try {
			CompletableFuture<ExecutionResult> call = executor.executeAsync(tree.request(NO_HANG));
			tree.awaitRunning();
			assertThat(call.cancel(true)).isTrue();
			assertThatExceptionOfType(CancellationException.class).isThrownBy(call::join);
			// The future is done at once; the tree is terminated on the worker thread.
			tree.assertTerminatedGracefullyThenKilled();
		}
		finally {
			tree.kill();
		}
	}

	private static String marker(String prefix) {
		return prefix + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
	}

	/**
	 * A command that traps SIGTERM (writes {@code got-term} into the file
	 * {@code term-received} and to stdout, exits 3), with three children that sleep
	 * "forever": one that attempted a session of its own ({@code setsid}, refused on
	 * every mechanism: it runs once the refusal has come, which the file
	 * {@code setsid-attempt} shows) and one in the same session that both ignore SIGTERM,
	 * and one that does not.
	 */
	private static final class Tree {

		private final String marker = marker("30");

		private final Path directory;

		private final Path termMarker;

		private final boolean sessionRefused;

		Tree(Path directory, boolean sessionRefused) {
			this.directory = directory;
			this.termMarker = directory.resolve("term-received");
			this.sessionRefused = sessionRefused;
		}

		ExecutionRequest request(Duration timeout) {
			String script = "trap 'echo got-term > term-received; echo got-term; exit 3' TERM\n"
					+ NewSession.setsid(this.sessionRefused, "sh -c 'trap \"\" TERM; exec sleep " + this.marker + "1'")
					+ " 2> setsid-attempt &\n" + "sh -c 'trap \"\" TERM; exec sleep " + this.marker + "2' &\n"
					+ "sleep " + this.marker + "3 &\n" + "echo started\n" + "wait\n";
			return ExecutionRequest.builder("sh", "-c", script)
				.workingDirectory(this.directory)
				.timeout(timeout)
				.build();
		}

		/**
		 * Wait until all three children run (their shells have exec'd into sleep), the
		 * first one in a session of its own or after its refusal.
		 */
		void awaitRunning() throws IOException {
			await().atMost(NO_HANG).until(() -> sleeping(this.marker).size() == 3);
			assertThat(this.termMarker).doesNotExist();
			NewSession.assertAttempted(this.sessionRefused, Files.readString(this.directory.resolve("setsid-attempt")));
		}

		/**
		 * Every process of the tree (the command's shell names the marker too) is gone,
		 * and the command had got SIGTERM before that.
		 */
		void assertTerminatedGracefullyThenKilled() {
			// Not a speed bound: a child left alive would stay for ever.
			await().atMost(Duration.ofSeconds(30)).until(this::allGone);
			assertThat(this.termMarker).as("the command got SIGTERM before the SIGKILL").hasContent("got-term");
		}

		boolean allGone() {
			return processesWith(this.marker).isEmpty();
		}

		void kill() {
			processesWith(this.marker).forEach(ProcessHandle::destroyForcibly);
		}

	}

	/**
	 * The {@code sleep} processes (not the shells that start them) whose arguments name
	 * the marker.
	 */
	public static List<ProcessHandle> sleeping(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info().command().orElse("").endsWith("/sleep"))
			.filter((process) -> process.info().commandLine().orElse("").contains(marker))
			.toList();
	}

	public static List<ProcessHandle> processesWith(String marker) {
		return ProcessIsolatedExecutorTests.processesWith(marker);
	}

	/**
	 * The private directories in a home: a tag of three characters and six random ones.
	 */
	private static List<Path> privateDirectories(Path home) throws java.io.IOException {
		try (var files = Files.list(home)) {
			return files.filter((file) -> file.getFileName().toString().matches("[0-9a-z]{9}")).toList();
		}
	}

	public static ProcessBuilder childJvm(List<String> jvmOptions, Class<?> main, String... args) {
		List<String> command = new java.util.ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmOptions);
		command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
		command.addAll(List.of(args));
		return new ProcessBuilder(command);
	}

}
