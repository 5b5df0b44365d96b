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

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Red team 3 on the teardown of launcher 13 (setsid refused on every mechanism, PID 1 in
 * a user namespace of its own, {@code close()} that reports survivors): trees that need
 * no CPU race at all to outlive the bound of issue 26, because their death itself takes
 * CPU time.
 * <ul>
 * <li>{@code mapped-tree.c}: one process writes 1-2 GiB of private memory in 4 KiB pages
 * and forks 200-300 children that share it copy-on-write and sleep. A SIGKILL reaches
 * them at once, but each dying child frees its address space in its own exit (every
 * page-table entry visited, each page's map count dropped): seconds of kernel time for
 * the tree (red team 3 saw a result 7-9 s past the timeout plus the grace period for 2
 * GiB in 301 processes, 2-4 s for 1 GiB in 201), which no signal can shorten.</li>
 * </ul>
 * What holds instead, and what each test asserts: from the timeout (or the close) plus
 * the kill grace period plus one second on, no process of the tree runs code of its own
 * (each left is exiting or has SIGKILL pending, {@link MarkedProcesses#notDying}); the
 * result is honest (it arrives once nothing of the tree is left, or it is a
 * {@link ProcessTreeSurvivedException}); nothing of the tree is left soon after.
 */
@Tag("slow")
@EnabledOnOs(OS.LINUX)
class RedTeam3BreakInTests {

	private static final String MAPPED_TREE = "mapped-tree";

	/** The kill grace period of this JVM's executors: the default. */
	private static final Duration GRACE = Duration.ofSeconds(1);

	/** What the issue allows beyond the timeout and the grace period. */
	private static final Duration SLACK = Duration.ofSeconds(1);

	/** How long a call gets to return once its tree was killed. */
	private static final Duration PATIENCE = Duration.ofSeconds(70);

	/** How long a tree that was killed gets to be gone after the call returned. */
	private static final Duration GONE = Duration.ofSeconds(30);

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
	 * A root JVM: a tree still forking 300 processes that share 2 GiB (it needs 15-21 s
	 * for that here) when its 8 s timeout strikes runs no code of its own past the
	 * timeout plus the grace period plus one second, and its result is honest.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aTreeStillForkingMuchSharedMemoryAtItsTimeoutRunsNothingPastTheBound(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		Duration timeout = Duration.ofSeconds(8);
		ByteArrayOutputStream stdout = new ByteArrayOutputStream();
		assertDiesWithinTheBound(mechanism, "2048 MiB in up to 301 processes, still forking", work,
				request(work, "2048", "300", stdout).timeout(timeout), timeout, null);
	}

	/**
	 * A root JVM: a tree of 201 processes that share 1 GiB, set up well before its 10 s
	 * timeout, runs no code of its own past the timeout plus the grace period plus one
	 * second, and its result is honest.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aTreeThatHasMappedItsMemoryBeforeItsTimeoutRunsNothingPastTheBound(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		Duration timeout = Duration.ofSeconds(10);
		ByteArrayOutputStream stdout = new ByteArrayOutputStream();
		assertDiesWithinTheBound(mechanism, "1024 MiB in 201 processes", work,
				request(work, "1024", "200", stdout).timeout(timeout), timeout, null);
		assertThat(stdout.toString(StandardCharsets.UTF_8)).as("set up before the timeout").contains("mapped:");
	}

	/**
	 * A root JVM: {@code close()} of the executor once a tree of 201 processes that share
	 * 1 GiB is set up: no process of the tree runs code of its own past the grace period
	 * plus one second, the close and the execution return, and both are honest (red team
	 * 3 saw 4 closes in 12 return within 15 ms with the tree still there: the spawn
	 * threads, shut down first, had fired the sandboxes' parent-death signal before the
	 * close saw their trees).
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aClosedExecutorsTreeThatMapsMuchMemoryRunsNothingPastTheGracePeriod(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		ByteArrayOutputStream stdout = new ByteArrayOutputStream();
		assertDiesWithinTheBound(mechanism, "1024 MiB in 201 processes, executor closed", work,
				request(work, "1024", "200", stdout), Duration.ZERO, stdout);
	}

	private ExecutionRequest.Builder request(Path work, String mib, String children, ByteArrayOutputStream stdout)
			throws IOException {
		install(work);
		return ExecutionRequest.builder("./" + MAPPED_TREE, this.marker, mib, children, "2")
			.workingDirectory(work)
			.stdoutSink(stdout);
	}

	/**
	 * Run the request; when {@code closeOnceMapped} is given, close the executor once the
	 * tree printed "mapped:" into it and count the bound from the close, otherwise from
	 * the start plus the timeout.
	 */
	private void assertDiesWithinTheBound(MechanismChoice mechanism, String tree, Path work,
			ExecutionRequest.Builder request, Duration timeout, @Nullable ByteArrayOutputStream closeOnceMapped)
			throws Exception {
		ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings);
		try (executor) {
			long start = System.nanoTime();
			TeardownBreakInTests.Timed<Outcome> execution = TeardownBreakInTests.Timed
				.call(() -> Outcome.of(executor, request.build(), this.marker));
			long from = start;
			TeardownBreakInTests.Timed<List<String>> closing = null;
			if (closeOnceMapped != null) {
				await().atMost(Duration.ofSeconds(50))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> closeOnceMapped.toString(StandardCharsets.UTF_8).contains("mapped:")
							|| execution.ended());
				from = System.nanoTime();
				closing = TeardownBreakInTests.Timed.call(() -> {
					executor.close();
					return MarkedProcesses.leftovers(this.marker);
				});
			}
			Duration bound = timeout.plus(GRACE).plus(SLACK);
			long deadline = from + bound.toNanos();
			Thread.sleep(Math.max(0, (deadline - System.nanoTime()) / 1_000_000));
			List<String> running = MarkedProcesses.notDying(this.marker, MAPPED_TREE);
			List<String> left = MarkedProcesses.leftovers(this.marker);
			boolean returned = execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos())
					&& (closing == null || closing.awaitUntil(System.nanoTime() + PATIENCE.toNanos()));
			long gone = System.nanoTime() + GONE.toNanos();
			while (!MarkedProcesses.leftovers(this.marker).isEmpty() && System.nanoTime() < gone) {
				Thread.sleep(50);
			}
			String report = mechanism + ", root JVM, " + tree + ": execute " + execution.report(start)
					+ ((closing != null) ? ", close " + closing.report(from) : "") + ", bound " + bound.toMillis()
					+ " ms, at the bound " + left.size() + " left, of which not dying " + running.size() + " "
					+ running.stream().limit(5).toList();
			System.out.println(RedTeam3BreakInTests.class.getSimpleName() + " " + report);
			assertThat(running).as("no process of the tree runs code of its own past the bound: %s", report).isEmpty();
			assertThat(returned).as("returned: %s", report).isTrue();
			Outcome outcome = execution.value();
			assertThat(outcome.honest())
				.as("nothing left when the result came, or survivors named: %s; %s", outcome, report)
				.isTrue();
			assertThat(MarkedProcesses.leftovers(this.marker))
				.as("nothing of the tree left %s s after: %s", GONE.toSeconds(), report)
				.isEmpty();
			if (closing != null) {
				assertThat(closing.value())
					.as("nothing left when close() returned, or survivors named: %s; %s", outcome, report)
					.satisfiesAnyOf((atClose) -> assertThat(atClose).isEmpty(),
							(atClose) -> assertThat(outcome.survived()).isNotNull());
			}
			if (outcome.result() != null) {
				assertThat(outcome.result().timedOut() || closing != null).as(report).isTrue();
			}
		}
	}

	/**
	 * What an execution came to: its result or the survivors it named, and the processes
	 * of the tree found right after.
	 */
	private record Outcome(@Nullable ExecutionResult result, @Nullable ProcessTreeSurvivedException survived,
			List<String> leftAtTheEnd) {

		static Outcome of(ProcessIsolatedExecutor executor, ExecutionRequest request, String marker)
				throws IOException {
			try {
				ExecutionResult result = executor.execute(request);
				return new Outcome(result, null, MarkedProcesses.leftovers(marker));
			}
			catch (ProcessTreeSurvivedException ex) {
				return new Outcome(null, ex, MarkedProcesses.leftovers(marker));
			}
		}

		boolean honest() {
			return this.survived != null || this.leftAtTheEnd.isEmpty();
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
