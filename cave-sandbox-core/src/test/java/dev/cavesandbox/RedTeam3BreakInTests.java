package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Red team 3 on the teardown of launcher 13 (setsid refused on every rung, PID 1 in a
 * user namespace of its own, {@code close()} that reports survivors): trees that need no
 * CPU race at all to outlive the bound of issue 26, because their death itself takes CPU
 * time.
 * <ul>
 * <li>{@code mapped-tree.c}: one process writes 2 GiB of private memory in 4 KiB pages
 * and forks 300 children that share it copy-on-write and sleep. A SIGKILL reaches them at
 * once, but each dying child frees its address space in its own exit (every page-table
 * entry visited, each page's map count dropped), in its own scheduler group, the
 * command's one session.</li>
 * </ul>
 * Each asserts the bound: the result within the timeout plus the kill grace
 * period plus one second, without {@link ProcessTreeSurvivedException}, nothing of the
 * tree left.
 */
@Tag("slow")
@EnabledOnOs(OS.LINUX)
class RedTeam3BreakInTests {

	private static final String MAPPED_TREE = "mapped-tree";

	/** Long enough for the tree to set itself up (it prints "mapped:" when it has). */
	private static final Duration TIMEOUT = Duration.ofSeconds(15);

	/** The kill grace period of this JVM's executors: the default. */
	private static final Duration GRACE = Duration.ofSeconds(1);

	/** What the issue allows beyond the timeout and the grace period. */
	private static final Duration SLACK = Duration.ofSeconds(1);

	/** How long a call that missed its bound gets once its tree was told to stop. */
	private static final Duration PATIENCE = Duration.ofSeconds(70);

	private static Path mappedTree;

	private final String marker = "red-team-3-" + UUID.randomUUID();

	private final List<Path> workingDirectories = new ArrayList<>();

	@BeforeAll
	static void compile(@TempDir Path directory) throws IOException, InterruptedException {
		mappedTree = CompiledPrograms.compile(MAPPED_TREE, directory);
	}

	@AfterEach
	void stopWhatIsLeft() throws IOException, InterruptedException {
		for (Path directory : this.workingDirectories) {
			if (Files.isDirectory(directory)) {
				Files.writeString(directory.resolve(MAPPED_TREE + ".stop"), "stop\n");
			}
		}
		Thread.sleep(200);
		MarkedProcesses.stopAndKill(this.marker);
		for (Path directory : this.workingDirectories) {
			Files.deleteIfExists(directory.resolve(MAPPED_TREE + ".stop"));
		}
	}

	/**
	 * A root JVM: a tree of 301 processes that share 2 GiB of written memory, two of them
	 * spinning, is timed out and gone within the timeout plus the grace period plus one
	 * second.
	 */
	@Disabled("finding (red team 3, 2026-12-03): root JVM, 301 processes sharing 2 GiB copy-on-write "
			+ "(the tree was still forking when the 15 s timeout struck: set-up took 15-21 s here): the result "
			+ "came after 23758 ms (bwrap), 23759 ms (unshare), 23727 ms (namespaces), 23699 ms (seccomp), bound "
			+ "17000 ms, each a ProcessTreeSurvivedException naming 227-304 processes of the tree in state R "
			+ "(running, not D), the sandbox's PID 1 in S with PPid 1; on seccomp the tree's processes had PPid 1 "
			+ "(contain gone). A SIGKILLed tree frees its address space in its own exit, seconds of CPU. Since "
			+ "the runner waits while processes of the tree are dying (exiting or SIGKILL pending, up to 5 s): "
			+ "timed out, no survivor, nothing left, but after 24202-25812 ms for 17000 ms")
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aRootJvmsTreeThatMapsMuchMemoryIsGoneWithinTheGracePeriodOfItsTimeout(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		install(work);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings)) {
			long start = System.nanoTime();
			TeardownBreakInTests.Timed<ExecutionResult> execution = TeardownBreakInTests.Timed.call(
					() -> executor.execute(ExecutionRequest.builder("./" + MAPPED_TREE, this.marker, "2048", "300", "2")
						.workingDirectory(work)
						.timeout(TIMEOUT)
						.build()));
			Duration bound = TIMEOUT.plus(GRACE).plus(SLACK);
			boolean inTime = execution.awaitUntil(start + bound.toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			if (!inTime) {
				execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
			}
			String report = mechanism + ", root JVM, 301 processes sharing 2 GiB, 2 spinning: "
					+ execution.report(start) + ", bound " + bound.toMillis()
					+ " ms, processes of the tree [pid state ppid uid] at the bound " + left.size() + " "
					+ left.stream().limit(3).toList();
			System.out.println(RedTeam3BreakInTests.class.getSimpleName() + " " + report);
			assertThat(inTime).as("ended within the bound: %s", report).isTrue();
			assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
			assertThat(execution.value().stdoutText()).as("the tree was set up before the timeout: %s", report)
				.contains("mapped:");
			assertThat(execution.value().timedOut()).as(report).isTrue();
		}
	}

	/**
	 * A root JVM: {@code close()} of the executor once the same tree is set up returns,
	 * and the execution ends, within the grace period plus one second; nothing of the
	 * tree is left.
	 */
	@Disabled("finding (red team 3, 2026-12-03): root JVM, close() once 303 processes sharing 2 GiB were set up, "
			+ "3 runs of the 4 rungs: in 8 of 12, close returned after 1510-1586 ms and execute after 2511-2587 ms "
			+ "(bound 2000 ms) with ProcessTreeSurvivedException (the sandbox's PID 1 in S with PPid 1, or on "
			+ "seccomp mapped-tree in R with PPid 1); in 4 of 12 (namespaces, bwrap, unshare, seccomp, one each) "
			+ "close returned after 4-15 ms and execute after 1007-1015 ms with exit 137 and no survivor reported, "
			+ "while 1-3 processes of the tree were still there 2 s after close (R with the tree's parent as PPid; "
			+ "on seccomp contain itself, uid 0, S, PPid 1), gone 5 s later. Since close() waits for the dying "
			+ "tree and its run for the close: 4 of 4 closes returned after 6408-6518 ms and execute after "
			+ "6005-6016 ms with nothing left (bound 2000 ms)")
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aClosedExecutorsTreeThatMapsMuchMemoryIsGoneWithinTheGracePeriod(MechanismChoice mechanism, @TempDir Path work)
			throws Exception {
		install(work);
		ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings);
		try (executor) {
			ByteArrayOutputStream stdout = new ByteArrayOutputStream();
			TeardownBreakInTests.Timed<ExecutionResult> execution = TeardownBreakInTests.Timed.call(
					() -> executor.execute(ExecutionRequest.builder("./" + MAPPED_TREE, this.marker, "2048", "300", "2")
						.workingDirectory(work)
						.stdoutSink(stdout)
						.build()));
			await().atMost(Duration.ofSeconds(50))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> stdout.toString(StandardCharsets.UTF_8).contains("mapped:") || execution.ended());
			long closed = System.nanoTime();
			TeardownBreakInTests.Timed<Boolean> closing = TeardownBreakInTests.Timed.call(() -> {
				executor.close();
				return Boolean.TRUE;
			});
			Duration bound = GRACE.plus(SLACK);
			boolean inTime = closing.awaitUntil(closed + bound.toNanos())
					& execution.awaitUntil(closed + bound.toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			List<String> detail = new ArrayList<>();
			for (String line : left.stream().limit(3).toList()) {
				long pid = Long.parseLong(line.split(" ")[0]);
				try {
					detail.add(pid + " NSpid " + MarkedProcesses.statusField(pid, "NSpid:") + " ShdPnd "
							+ MarkedProcesses.statusField(pid, "ShdPnd:") + " SigPnd "
							+ MarkedProcesses.statusField(pid, "SigPnd:"));
				}
				catch (IOException ex) {
					detail.add(pid + " gone");
				}
			}
			if (!inTime) {
				closing.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
				execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
			}
			Thread.sleep(5000);
			List<String> leftLater = MarkedProcesses.leftovers(this.marker);
			String report = mechanism + ", root JVM, executor closed under 301 processes sharing 2 GiB ("
					+ stdout.toString(StandardCharsets.UTF_8).trim() + "): close " + closing.report(closed)
					+ ", execute " + execution.report(closed) + ", bound " + bound.toMillis()
					+ " ms, processes of the tree at the bound " + left.size() + " " + left.stream().limit(5).toList()
					+ " " + detail + ", 5 s after both had returned " + leftLater.size() + " "
					+ leftLater.stream().limit(5).toList();
			System.out.println(RedTeam3BreakInTests.class.getSimpleName() + " " + report);
			assertThat(inTime).as("ended within the bound: %s", report).isTrue();
			assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
		}
	}

	/**
	 * A root JVM: a smaller tree (1 GiB shared by 201 processes, two spinning) that has
	 * set itself up well before its 20 s timeout (it prints "mapped:", read as it comes)
	 * is gone within the timeout plus the grace period plus one second.
	 */
	@Disabled("finding (red team 3, 2026-12-03): root JVM, 201 processes sharing 1 GiB, set up after 4.0-4.4 s, "
			+ "20 s timeout: the result (timed out, exit 137, no survivor reported) came after 23982 ms (bwrap), "
			+ "23758 ms (unshare), 23786 ms (namespaces), 23871 ms (seccomp), bound 22000 ms; on seccomp contain "
			+ "(uid 0, S, PPid 1) was still there at the bound. Unchanged by the runner's wait for dying "
			+ "processes (it adds no time when the tree dies on its own)")
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aRootJvmsTreeThatHasMappedItsMemoryBeforeItsTimeoutIsGoneWithinTheGracePeriod(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		install(work);
		Duration timeout = Duration.ofSeconds(20);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings)) {
			ByteArrayOutputStream stdout = new ByteArrayOutputStream();
			long start = System.nanoTime();
			TeardownBreakInTests.Timed<ExecutionResult> execution = TeardownBreakInTests.Timed.call(
					() -> executor.execute(ExecutionRequest.builder("./" + MAPPED_TREE, this.marker, "1024", "200", "2")
						.workingDirectory(work)
						.stdoutSink(stdout)
						.timeout(timeout)
						.build()));
			await().atMost(timeout.plusSeconds(5))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> stdout.toString(StandardCharsets.UTF_8).contains("mapped:") || execution.ended());
			long setUp = System.nanoTime() - start;
			Duration bound = timeout.plus(GRACE).plus(SLACK);
			boolean inTime = execution.awaitUntil(start + bound.toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			if (!inTime) {
				execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
			}
			String report = mechanism + ", root JVM, 201 processes sharing 1 GiB, 2 spinning, set up after "
					+ setUp / 1_000_000 + " ms (" + stdout.toString(StandardCharsets.UTF_8).trim() + "): "
					+ execution.report(start) + ", bound " + bound.toMillis()
					+ " ms, processes of the tree [pid state ppid uid] at the bound " + left.size() + " "
					+ left.stream().limit(3).toList();
			System.out.println(RedTeam3BreakInTests.class.getSimpleName() + " " + report);
			assertThat(setUp).as("set up before the timeout: %s", report)
				.isLessThan(timeout.toNanos() - 2_000_000_000L);
			assertThat(inTime).as("ended within the bound: %s", report).isTrue();
			assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
			assertThat(execution.value().timedOut()).as(report).isTrue();
		}
	}

	/**
	 * What a JVM of nobody's command tries on every process of its uid that it can see in
	 * {@code /proc} (on {@code namespaces} and {@code seccomp} the host's, the JVM
	 * included), outside its own session: write 19 to its {@code autogroup} (the session
	 * of the JVM, which times the command out and tears it down) and to its
	 * {@code timerslack_ns}.
	 */
	private static final String RENICE_EVERY_PROCESS_OF_MY_UID = "me=$(id -u); my=$(cut -d' ' -f6 /proc/$$/stat); for d in /proc/[0-9]*; do "
			+ "p=${d#/proc/}; [ \"$(stat -c %u $d 2>/dev/null)\" = \"$me\" ] || continue; "
			+ "[ \"$(cut -d' ' -f6 $d/stat 2>/dev/null)\" = \"$my\" ] && continue; "
			+ "c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null | cut -c1-40); "
			+ "if (echo 19 > $d/autogroup) 2>/dev/null; then echo \"reniced $p ($c): $(cat $d/autogroup)\"; fi; "
			+ "if (echo 100000000 > $d/timerslack_ns) 2>/dev/null; then echo \"slacked $p ($c)\"; fi; "
			+ "done; echo done";

	/**
	 * A JVM of nobody: a command that writes 19 to the {@code autogroup} of every process
	 * of its uid it can see leaves the JVM's session as it was.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aNobodyJvmsCommandCannotReniceAnyProcessOfItsUidItSees(MechanismChoice mechanism, @TempDir Path directory)
			throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(directory, ContainerConfinement.Profile.UNCONFINED,
				ContainerConfinement.User.NOBODY, mechanism)) {
			Path autogroup = Path.of("/proc", Long.toString(Pid1ProcFilesBreakInTests.javaOf(jvm)), "autogroup");
			String before = Pid1ProcFilesBreakInTests.autogroupOf(autogroup);
			try {
				ContainerJvm.Result result = jvm.isolated("/bin/sh", "-c", RENICE_EVERY_PROCESS_OF_MY_UID);
				String after = Files.readString(autogroup).trim();
				String report = mechanism + ", nobody's JVM: command printed " + result.stdout().lines().toList()
						+ " (stderr " + result.stderr().trim() + "); the JVM's autogroup " + before + " before, "
						+ after + " after";
				System.out.println(RedTeam3BreakInTests.class.getSimpleName() + " " + report);
				assertThat(result.stdout()).as(report).contains("done");
				assertThat(after).as(report).isEqualTo(before);
				assertThat(result.stdout()).as(report).doesNotContain("reniced").doesNotContain("slacked");
			}
			finally {
				Files.writeString(autogroup, before.replaceAll(".* nice ", "") + "\n");
			}
		}
	}

	private void install(Path directory) throws IOException {
		this.workingDirectories.add(directory);
		CompiledPrograms.install(mappedTree, directory);
	}

}
