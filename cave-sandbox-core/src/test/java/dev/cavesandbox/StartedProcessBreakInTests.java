package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.process.ProcessRunnerTests;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Break-in attempts on {@link IsolatedExecutor#start(ExecutionRequest)} and on input
 * files ({@link ExecutionRequest.Builder#inputFile(String, byte[])}): processes that try
 * to outlive destroy, their own end or the executor's close; processes that keep their
 * slot or make the JVM hang; a long-running process that reaches a later execution's
 * input files or process; races of exit, timeout, destroy and close; descriptors the
 * command inherits; input-file paths that try to make the root JVM write elsewhere.
 * Loopback only: nothing here opens a network connection.
 */
@EnabledOnOs(OS.LINUX)
class StartedProcessBreakInTests {

	private static final Duration GRACE = Duration.ofMillis(300);

	private static final Duration NO_HANG = Duration.ofSeconds(60);

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> isolated = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor
			.unisolated(SandboxSettings.builder().killGracePeriod(GRACE).maxConcurrent(4).build());
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

	private static ProcessIsolatedExecutor oneSlot(MechanismChoice mechanism) {
		return LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).queueTimeout(Duration.ofSeconds(2)).killGracePeriod(GRACE));
	}

	// ---------------------------------------------------------------- descriptors

	/**
	 * The started command holds its three standard streams and nothing else, as an
	 * executed one does: no descriptor of the launcher, of the egress bridge or of the
	 * JVM.
	 */
	@ForEachLinuxMechanism
	void aStartedCommandInheritsOnlyItsStandardStreams(MechanismChoice mechanism) throws Exception {
		String list = "exec ls -l /proc/self/fd | grep -- ' -> ' | sed 's/.* \\([0-9][0-9]*\\) -> /\\1 /'";
		ExecutionResult executed = isolated(mechanism).execute(ExecutionRequest.of("sh", "-c", list));
		SandboxedProcess started = isolated(mechanism).start(ExecutionRequest.of("sh", "-c", list));
		String startedFds = new String(started.stdout().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(started.waitFor()).isZero();
		System.out
			.println(mechanism + " execute fds:\n" + executed.stdoutText() + mechanism + " start fds:\n" + startedFds);
		// 3 is the directory that ls reads
		assertThat(fdNumbers(startedFds)).containsExactly("0", "1", "2", "3");
		assertThat(fdNumbers(executed.stdoutText())).containsExactly("0", "1", "2", "3");
	}

	private static List<String> fdNumbers(String listing) {
		return listing.lines().map((line) -> line.split(" ")[0]).toList();
	}

	// ---------------------------------------------------------------- survivors

	/**
	 * A daemon made the classic way (fork, setsid, fork again, the middle one exits;
	 * TERM, HUP and INT ignored) is no longer the wrapper's descendant on a host without
	 * a PID namespace of the sandbox: destroy() still ends it before it returns. Every
	 * mechanism refuses the new session ({@link NewSession}): the daemon is orphaned in
	 * the command's session once its {@code setsid} has been refused, which the command's
	 * stderr shows.
	 */
	@ForEachLinuxMechanism
	void aDoubleForkedDaemonIgnoringTermAndHupDiesWithDestroy(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		boolean refused = NewSession.refused(mechanism);
		SandboxedProcess process = isolated(mechanism).start(
				ExecutionRequest.of("sh", "-c", daemon(marker, refused) + "echo started; exec sleep " + marker + "0"));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			assertSetsidAttempted(process, refused);
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 2);
			process.destroy();
			assertThat(process.isAlive()).isFalse();
			assertThat(described(ProcessRunnerTests.processesWith(marker))).isEmpty();
		}
		finally {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * The same daemon, left by a command that then exits by itself: the end is reported
	 * only once the daemon is gone too.
	 */
	@ForEachLinuxMechanism
	void aDoubleForkedDaemonDiesWhenTheStartedCommandExitsByItself(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		boolean refused = NewSession.refused(mechanism);
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.of("sh", "-c", daemon(marker, refused) + "sleep 0.5; echo started; exit 4"));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			assertSetsidAttempted(process, refused);
			assertThat(process.waitFor(NO_HANG)).isTrue();
			assertThat(process.exitCode()).hasValue(4);
			assertThat(described(ProcessRunnerTests.processesWith(marker))).isEmpty();
		}
		finally {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@ForEachLinuxMechanism
	void aDoubleForkedDaemonDiesWithTheExecutorsClose(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		boolean refused = NewSession.refused(mechanism);
		ProcessIsolatedExecutor executor = oneSlot(mechanism);
		try {
			SandboxedProcess process = executor.start(ExecutionRequest.of("sh", "-c",
					daemon(marker, refused) + "echo started; exec sleep " + marker + "0"));
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			assertSetsidAttempted(process, refused);
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 2);
			executor.close();
			assertThat(process.isAlive()).isFalse();
			await().atMost(Duration.ofSeconds(10)).until(() -> ProcessRunnerTests.processesWith(marker).isEmpty());
		}
		finally {
			executor.close();
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * A chain whose every process forks the next and exits (ignoring TERM and HUP) never
	 * keeps a pid that the JVM listed: destroy() still ends it.
	 */
	@ForEachLinuxMechanism
	void aRespawningChainIgnoringTermDiesWithDestroy(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		String chain = "trap '' TERM HUP INT\nsleep 0.02\nsh ./chain.sh \"$1\" &\nexit 0\n";
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.builder("sh", "-c", "sh ./chain.sh " + marker + "; echo started; exec cat")
				.inputFile("chain.sh", chain.getBytes(StandardCharsets.UTF_8))
				.build());
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			Thread.sleep(1000);
			process.destroy();
			assertThat(process.isAlive()).isFalse();
			assertThat(described(ProcessRunnerTests.processesWith(marker))).isEmpty();
			Thread.sleep(500);
			assertThat(described(ProcessRunnerTests.processesWith(marker))).isEmpty();
		}
		finally {
			stopAndKill(marker);
		}
	}

	/**
	 * A loop that keeps forking children that ignore TERM while the tree is being torn
	 * down: nothing is left once destroy() returns.
	 */
	@ForEachLinuxMechanism
	void aLoopForkingDuringTheTeardownDiesWithDestroy(MechanismChoice mechanism) throws Exception {
		for (int round = 0; round < 4; round++) {
			aLoopForkingDuringTheTeardownDiesWithDestroy(mechanism, marker());
		}
	}

	private void aLoopForkingDuringTheTeardownDiesWithDestroy(MechanismChoice mechanism, String marker)
			throws Exception {
		SandboxedProcess process = isolated(mechanism).start(ExecutionRequest.of("sh", "-c",
				"trap '' TERM HUP INT; echo started; while :; do (trap '' TERM HUP INT; exec sleep " + marker
						+ ") & sleep 0.01; done"));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			Thread.sleep(700);
			process.destroy();
			assertThat(process.isAlive()).isFalse();
			List<String> left = described(ProcessRunnerTests.processesWith(marker));
			Thread.sleep(1000);
			System.out.println(mechanism + " left after destroy: " + left + "; 1 s later: "
					+ described(ProcessRunnerTests.processesWith(marker)));
			assertThat(left).isEmpty();
		}
		finally {
			stopAndKill(marker);
		}
	}

	/**
	 * The same fork loop, left to run: whatever escaped destroy() on the seccomp
	 * mechanism is not killed later either (it is init's now), keeps forking, and reads
	 * the input file of the next execution, which gets the same (reused) private
	 * directory, granted to the same command user's group.
	 */
	@ForEachLinuxMechanism
	void whatEscapesDestroyCannotReadTheNextExecutionsInputFiles(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		String spy = "trap '' TERM HUP INT\nd=$(pwd)\nwhile :; do\n  if read l < \"$d/secret.txt\"; then exec sleep "
				+ marker + "9; fi\n  sleep 0.0$1\ndone\n";
		try (ProcessIsolatedExecutor executor = oneSlot(mechanism)) {
			SandboxedProcess process = executor.start(
					ExecutionRequest
						.builder("sh", "-c",
								"trap '' TERM HUP INT; pwd; while :; do sh ./spy.sh 5 " + marker
										+ " & sleep 0.005; done")
						.inputFile("spy.sh", spy.getBytes(StandardCharsets.UTF_8))
						.build());
			String directory = reader(process.stdout()).readLine();
			Thread.sleep(700);
			process.destroy();
			Thread.sleep(1000);
			List<String> survivors = described(ProcessRunnerTests.processesWith(marker));
			System.out.println(mechanism + " survivors 1 s after destroy: " + survivors.size() + " " + survivors);
			SandboxedProcess next = executor.start(ExecutionRequest.builder("sh", "-c", "pwd; exec cat")
				.inputFile("secret.txt", "secret\n".getBytes(StandardCharsets.UTF_8))
				.build());
			String nextDirectory = reader(next.stdout()).readLine();
			Thread.sleep(1500);
			List<String> readers = described(ProcessRunnerTests.sleeping(marker + "9"));
			System.out.println(
					mechanism + " first " + directory + ", next " + nextDirectory + "; read the secret: " + readers);
			next.destroy();
			assertThat(readers).isEmpty();
			assertThat(survivors).isEmpty();
		}
		finally {
			stopAndKill(marker);
		}
	}

	/**
	 * destroy() sends SIGTERM to every process of the tree that the JVM lists, the
	 * seccomp mechanism's subreaper ({@code contain}) included: it must survive that (it
	 * is what kills the tree), or at least take the tree with it.
	 */
	@ForEachLinuxMechanism
	void theSandboxsOwnProcessesSurviveTheTermThatDestroySends(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		SandboxedProcess process = isolated(mechanism).start(ExecutionRequest.of("sh", "-c",
				"trap '' TERM; (trap '' TERM; exec sleep " + marker + ") & echo started; exec sleep " + marker + "0"));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 2);
			List<ProcessHandle> wrappers = ProcessHandle.of(process.pid())
				.orElseThrow()
				.descendants()
				.filter((handle) -> !handle.info().command().orElse("").endsWith("/sleep"))
				.filter((handle) -> handle.info().user().orElse("").equals("root"))
				.toList();
			System.out.println(mechanism + " wrappers: " + described(wrappers));
			wrappers.forEach(ProcessHandle::destroy);
			Thread.sleep(500);
			List<String> orphans = ProcessRunnerTests.processesWith(marker)
				.stream()
				.filter((handle) -> handle.parent().map(ProcessHandle::pid).orElse(1L) == 1L)
				.map((handle) -> handle.pid() + " " + handle.info().commandLine().orElse("?"))
				.toList();
			System.out.println(mechanism + " after SIGTERM to the wrappers, alive: "
					+ described(wrappers.stream().filter(ProcessHandle::isAlive).toList()) + ", orphaned to init: "
					+ orphans);
			assertThat(orphans).isEmpty();
		}
		finally {
			process.destroy();
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * Unisolated (fallback mode) a started process's tree is still "terminated" by
	 * destroy(): a daemon whose parent exited is no longer a descendant of the direct
	 * child, so the JVM's list of the tree misses it.
	 */
	@Disabled("documented limit of fallback mode (SandboxedProcess Javadoc, README threat model): unisolated, a double-forked setsid daemon ignoring TERM survives destroy(): /usr/bin/sleep <marker>1 ppid 1")
	@Test
	void unisolatedDestroyKillsADoubleForkedDaemon() throws Exception {
		String marker = marker();
		SandboxedProcess process = unisolated
			.start(ExecutionRequest.of("sh", "-c", daemon(marker, false) + "echo started; exec sleep " + marker + "0"));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 2);
			process.destroy();
			assertThat(process.isAlive()).isFalse();
			assertThat(described(ProcessRunnerTests.processesWith(marker))).isEmpty();
		}
		finally {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * The daemon: {@code sleep <marker>1}, orphaned, in a session of its own unless the
	 * mechanism refuses one ({@link NewSession}; unisolated, in fallback mode, it never
	 * does).
	 */
	private static String daemon(String marker, boolean sessionRefused) {
		return "( " + NewSession.setsid(sessionRefused, "sh -c \"trap '' TERM HUP INT; exec sleep " + marker + "1\"")
				+ " & ) ; ";
	}

	/**
	 * Where the mechanism refuses the daemon a new session (every mechanism:
	 * {@link NewSession}), the refusal is the first line of the command's stderr
	 * (setsid(1) fails at once, before the daemon starts). Elsewhere stderr stays empty
	 * and is not read, which would block.
	 */
	private static void assertSetsidAttempted(SandboxedProcess process, boolean refused) throws IOException {
		if (refused) {
			assertThat(reader(process.stderr()).readLine()).contains(NewSession.REFUSED);
		}
	}

	// ---------------------------------------------------------------- slots, streams

	/**
	 * A process blocked in a write to a stderr that the caller never reads holds its slot
	 * only until destroy(), which does not hang.
	 */
	@ForEachLinuxMechanism
	void aProcessBlockedOnAFullStderrIsDestroyedAndGivesItsSlotBack(MechanismChoice mechanism) throws Exception {
		try (ProcessIsolatedExecutor executor = oneSlot(mechanism)) {
			SandboxedProcess process = executor
				.start(ExecutionRequest.of("sh", "-c", "echo started; head -c 10000000 /dev/zero >&2; echo done"));
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			Thread.sleep(500);
			assertThat(process.isAlive()).isTrue();
			assertThat(CompletableFuture.runAsync(process::destroy)).succeedsWithin(NO_HANG);
			assertThat(executor.execute("true").exitCode()).isZero();
		}
	}

	/**
	 * The caller closes stdout early: the writer gets SIGPIPE, ends, and the slot comes
	 * back; the caller that writes to a process that has exited gets an IOException, not
	 * a hang, and the slot comes back too.
	 */
	@ForEachLinuxMechanism
	void closedStreamsAndWritesAfterTheExitEndWithTheSlotGivenBack(MechanismChoice mechanism) throws Exception {
		try (ProcessIsolatedExecutor executor = oneSlot(mechanism)) {
			SandboxedProcess yes = executor.start(ExecutionRequest.of("yes"));
			yes.stdout().read();
			yes.stdout().close();
			assertThat(yes.waitFor(NO_HANG)).isTrue();
			assertThat(yes.exitCode()).hasValue(128 + 13);
			SandboxedProcess quitter = executor.start(ExecutionRequest.of("true"));
			byte[] chunk = new byte[65536];
			Throwable thrown = catchThrowable(() -> {
				OutputStream stdin = quitter.stdin();
				for (int i = 0; i < 1000; i++) {
					stdin.write(chunk);
				}
				stdin.flush();
			});
			assertThat(thrown).isInstanceOf(IOException.class);
			assertThat(quitter.waitFor(NO_HANG)).isTrue();
			assertThat(executor.execute("true").exitCode()).isZero();
		}
	}

	/**
	 * After destroy() the streams give what was written and then end of file, at once;
	 * stdin refuses further writes.
	 */
	@ForEachLinuxMechanism
	void theStreamsEndAfterDestroy(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.of("sh", "-c", "echo err >&2; echo out; exec sleep " + marker));
		BufferedReader stdout = reader(process.stdout());
		assertThat(stdout.readLine()).isEqualTo("out");
		process.destroy();
		assertThat(CompletableFuture.supplyAsync(() -> {
			try {
				return stdout.readLine() + "|" + new String(process.stderr().readAllBytes(), StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				return ex.toString();
			}
		})).succeedsWithin(Duration.ofSeconds(5)).asString().startsWith("null|err\n");
		assertThat(catchThrowable(() -> {
			process.stdin().write(new byte[70000]);
			process.stdin().flush();
		})).isInstanceOf(IOException.class);
		assertThat(ProcessRunnerTests.processesWith(marker)).isEmpty();
	}

	// ---------------------------------------------------------------- races

	/**
	 * The timeout, the command's own exit and two destroy() calls strike at about the
	 * same moment, again and again: each process ends once, with an exit code, and leaves
	 * no process behind.
	 */
	@ForEachLinuxMechanism
	void destroyRacingTheTimeoutAndTheExitEndsOnceAndLeavesNothing(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		try {
			for (int i = 0; i < 6; i++) {
				SandboxedProcess process = isolated(
						mechanism)
					.start(ExecutionRequest
						.builder("sh", "-c",
								"trap '' TERM; (trap '' TERM; exec sleep " + marker + ") & sleep 0.3; exit 3")
						.timeout(Duration.ofMillis(300))
						.build());
				Thread.sleep(250 + 20 * i);
				CompletableFuture<Void> other = CompletableFuture.runAsync(process::destroy);
				process.destroy();
				assertThat(other).succeedsWithin(NO_HANG);
				assertThat(process.isAlive()).isFalse();
				assertThat(process.exitCode()).isPresent();
				assertThat(described(ProcessRunnerTests.processesWith(marker))).as("round %d", i).isEmpty();
			}
		}
		finally {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * Starts racing the executor's close: each either fails or returns a process that is
	 * dead once close() has returned; nothing runs afterwards, and start() on the closed
	 * executor is refused.
	 */
	@ForEachLinuxMechanism
	void startsRacingCloseLeaveNothingRunning(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(16).killGracePeriod(GRACE));
		List<SandboxedProcess> processes = new CopyOnWriteArrayList<>();
		List<Throwable> failures = new CopyOnWriteArrayList<>();
		CountDownLatch go = new CountDownLatch(1);
		List<Thread> threads = new ArrayList<>();
		try {
			for (int i = 0; i < 8; i++) {
				Thread thread = new Thread(() -> {
					try {
						go.await();
						for (int j = 0; j < 3; j++) {
							processes.add(executor.start(ExecutionRequest.of("sleep", marker)));
						}
					}
					catch (Throwable ex) {
						failures.add(ex);
					}
				});
				thread.start();
				threads.add(thread);
			}
			go.countDown();
			Thread.sleep(150);
			executor.close();
			for (Thread thread : threads) {
				thread.join(NO_HANG.toMillis());
			}
			System.out.println(mechanism + ": " + processes.size() + " started, failures "
					+ failures.stream().map((ex) -> ex.getClass().getSimpleName()).distinct().toList());
			assertThat(failures).allSatisfy((ex) -> assertThat(ex).isInstanceOf(CaveSandboxException.class));
			for (SandboxedProcess process : processes) {
				assertThat(process.waitFor(Duration.ofSeconds(10))).as("%s", process).isTrue();
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> ProcessRunnerTests.processesWith(marker).isEmpty());
			assertThatExceptionOfType(ExecutionCancelledException.class)
				.isThrownBy(() -> executor.start(ExecutionRequest.of("true")));
		}
		finally {
			executor.close();
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	// ---------------------------------------------------------------- other executions

	/**
	 * A long-running started process, told the exact host path of a LATER execution's
	 * input file and its pid, cannot read the file (by path or through
	 * {@code /proc/PID/cwd}, {@code /proc/PID/root}), list its directory's parent, nor
	 * stop it.
	 */
	@ForEachLinuxMechanism
	void aStartedProcessCannotReachALaterExecutionsInputFilesOrProcess(MechanismChoice mechanism) throws Exception {
		String secret = "secret-" + UUID.randomUUID();
		String marker = marker();
		String attack = "while read target pid; do " + "cat \"$target/secret.txt\" 2>&1; "
				+ "ls -a \"$(dirname \"$target\")\" 2>&1; " + "cat /proc/$pid/cwd/secret.txt 2>&1; "
				+ "cat /proc/$pid/root$target/secret.txt 2>&1; " + "for d in /proc/[0-9]*; do "
				+ "cat $d/cwd/secret.txt $d/environ 2>/dev/null; done; " + "kill -STOP $pid 2>&1; echo end; done";
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(2).killGracePeriod(GRACE))) {
			SandboxedProcess attacker = executor.start(ExecutionRequest.of("sh", "-c", attack));
			SandboxedProcess victim = executor.start(ExecutionRequest.builder("sh", "-c", "pwd; exec sleep " + marker)
				.inputFile("secret.txt", secret.getBytes(StandardCharsets.UTF_8))
				.environment("VICTIM_SECRET", secret)
				.build());
			try {
				String target = reader(victim.stdout()).readLine();
				await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 1);
				ProcessHandle sleeper = ProcessRunnerTests.sleeping(marker).get(0);
				attacker.stdin().write((target + " " + sleeper.pid() + "\n").getBytes(StandardCharsets.UTF_8));
				attacker.stdin().close();
				String seen = new String(attacker.stdout().readAllBytes(), StandardCharsets.UTF_8);
				System.out
					.println(mechanism + " attacker saw (victim " + target + ", pid " + sleeper.pid() + "):\n" + seen);
				assertThat(seen).endsWith("end\n").doesNotContain(secret);
				assertThat(Files.readString(Path.of("/proc/" + sleeper.pid() + "/stat"))).as("victim not stopped")
					.doesNotContain(") T ");
				assertThat(victim.isAlive()).isTrue();
			}
			finally {
				victim.destroy();
				attacker.destroy();
			}
		}
	}

	// ---------------------------------------------------------------- input files

	@Test
	void inputFilePathsThatAreNotPlainRelativeNamesAreRefused() {
		for (String path : List.of("../x", "a/../../x", "/etc/cron.d/x", "a//b", "./a", "a/.", "a/", "..", ".", "a\0b",
				"//x", "a/b/../../../x")) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class).as(path)
				.isThrownBy(() -> ExecutionRequest.builder("true").inputFile(path, new byte[0]));
		}
	}

	/**
	 * A name that the JVM cannot turn into a file name (a lone UTF-16 surrogate) passes
	 * the builder's checks; the execution must then fail as a bad request (or at least as
	 * a sandbox exception), give its slot back and write nothing.
	 */
	@Test
	void anInputFileNameThatNoFileNameCanSpellIsABadRequest() {
		try (ProcessIsolatedExecutor executor = oneSlot(MechanismChoice.BWRAP)) {
			Throwable thrown = catchThrowable(() -> executor
				.execute(ExecutionRequest.builder("true").inputFile("a\uD800b", new byte[] { 1 }).build()));
			System.out.println("lone surrogate: " + thrown);
			assertThat(executor.execute("true").exitCode()).as("slot given back").isZero();
			assertThat(thrown).isInstanceOf(InvalidExecutionRequestException.class);
		}
	}

	/**
	 * A very deep input file path (each name short, the whole longer than PATH_MAX) fails
	 * as a launch failure and leaves neither its directory nor its slot taken.
	 */
	@Test
	void aVeryDeepInputFileFailsCleanly() throws Exception {
		try (ProcessIsolatedExecutor executor = oneSlot(MechanismChoice.BWRAP)) {
			String deep = "d/".repeat(2100) + "f";
			Throwable thrown = catchThrowable(
					() -> executor.execute(ExecutionRequest.builder("true").inputFile(deep, new byte[] { 1 }).build()));
			System.out.println("deep input file: " + thrown);
			assertThat(thrown).isInstanceOf(SandboxLaunchException.class);
			ExecutionResult next = executor.execute("sh", "-c", "pwd; ls -A");
			assertThat(next.stdoutText().lines().toList()).hasSize(1);
		}
	}

	/**
	 * The previous command of a one-slot executor planted symbolic links, a FIFO and a
	 * directory in its private directory, which is then reused; the next execution's
	 * input files with the same names land in its own fresh directory and the root JVM
	 * writes nothing where the links point.
	 */
	@ForEachLinuxMechanism
	void inputFilesIgnoreWhatThePreviousCommandPlantedInTheReusedDirectory(MechanismChoice mechanism) throws Exception {
		Path target = Files.createTempDirectory("cave-target-");
		try (ProcessIsolatedExecutor executor = oneSlot(mechanism)) {
			String plant = "pwd; ln -s " + target + " x; mkdir y; ln -s " + target + "/z y/z; mkfifo f; "
					+ "ln -s /etc/cave-pwned g; chmod 777 y";
			ExecutionResult first = executor.execute("sh", "-c", plant);
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			Thread.sleep(300);
			ExecutionResult second = executor.execute(ExecutionRequest
				.builder("sh", "-c", "pwd; cat x/pwned y/z f g; echo; ls -la . y; stat -c '%a %U' . ")
				.inputFile("x/pwned", "1".getBytes(StandardCharsets.UTF_8))
				.inputFile("y/z", "2".getBytes(StandardCharsets.UTF_8))
				.inputFile("f", "3".getBytes(StandardCharsets.UTF_8))
				.inputFile("g", "4".getBytes(StandardCharsets.UTF_8))
				.build());
			System.out.println(mechanism + " first: " + first.stdoutText() + "second: " + second.stdoutText()
					+ second.stderrText());
			assertThat(second.exitCode()).as(second.stderrText()).isZero();
			assertThat(second.stdoutText()).contains("1234");
			try (var left = Files.list(target)) {
				assertThat(left.toList()).isEmpty();
			}
			assertThat(Path.of("/etc/cave-pwned")).doesNotExist();
		}
		finally {
			DirectoryTrees.delete(target);
		}
	}

	// ---------------------------------------------------------------- helpers

	private static List<String> described(List<ProcessHandle> processes) {
		return processes.stream()
			.map((process) -> process.pid() + " " + process.info().commandLine().orElse("?") + " ppid "
					+ process.parent().map(ProcessHandle::pid).orElse(-1L))
			.toList();
	}

	private static void stopAndKill(String marker) throws InterruptedException {
		for (int i = 0; i < 20 && !ProcessRunnerTests.processesWith(marker).isEmpty(); i++) {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
			Thread.sleep(50);
		}
	}

	private static BufferedReader reader(InputStream stream) {
		return new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
	}

	/** A number that no other process's command line has: a sleep's duration. */
	private static String marker() {
		return "7" + (100000 + Math.abs(UUID.randomUUID().getLeastSignificantBits() % 800000));
	}

}
