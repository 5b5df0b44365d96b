package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Red-team attempts (redteam14) on the teardown of issue 26 with the short wait of
 * {@code TreeTeardown.TEARDOWN_WAIT} (500 ms, or the grace period where shorter) between
 * the SIGKILL to the wrapper and the backstop.
 * <p>
 * A cold execution whose timeout strikes while its sandbox is still being set up. The
 * executor lists the sandbox's own processes (the wrapper's launcher's children and
 * grandchildren) when the teardown begins, and waits for those alone; at that moment the
 * wrapper may not have made its PID 1 yet, and the SIGTERM that {@code outer} passes on
 * may reach no process that gives it to the command. The command then starts and makes
 * its tree (processes that ignore SIGTERM) during the grace period, and only the SIGKILL
 * ends it. The result must still come only once the tree is gone (threat model: "The
 * result comes only once the tree is gone"), within the timeout plus the grace period
 * plus one second.
 * <p>
 * The warm pool is off: a claimed warm sandbox is set up before its timeout starts, so
 * only a cold launch has a set-up for the timeout to strike in.
 * <p>
 * A grace period of 20 ms: the wait for the sandbox's own teardown is then 20 ms too, so
 * the backstop ({@code killBelow}, kill rounds below the sandbox's processes) meets a
 * hostile tree ({@code hostile-tree.c}: lanes that fork their successors and exit, below
 * a subreaper, ignoring SIGTERM) while the sandbox is still taking it down itself; the
 * bound is then the grace period plus one second, 1.02 s.
 */
@EnabledOnOs(OS.LINUX)
class TeardownWaitBreakInTests {

	/** The kill grace period: the default. */
	private static final Duration GRACE = Duration.ofSeconds(1);

	/** The kill grace period of {@link ContainerSandboxMain}'s executors. */
	private static final Duration CHILD_JVM_GRACE = Duration.ofMillis(500);

	/** What the issue allows beyond the timeout and the grace period. */
	private static final Duration SLACK = Duration.ofSeconds(1);

	/**
	 * Rounds per mechanism, each with a timeout of 1 to {@link #LONGEST_TIMEOUT_MS} ms.
	 */
	private static final int ROUNDS = 24;

	private static final int LONGEST_TIMEOUT_MS = 6;

	/** Processes of the command's tree, each ignoring SIGTERM. */
	private static final int PROCESSES = 60;

	/** The short grace period of the destroy attempt. */
	private static final Duration SHORT_GRACE = Duration.ofMillis(20);

	private static final String HOSTILE_TREE = "hostile-tree";

	private static Path hostileTree;

	private final String marker = "red-team-14-" + UUID.randomUUID();

	private final List<Path> workingDirectories = new ArrayList<>();

	@BeforeAll
	static void compile(@TempDir Path directory) throws IOException, InterruptedException {
		hostileTree = CompiledPrograms.compile(HOSTILE_TREE, directory);
	}

	@AfterEach
	void killWhatIsLeft() throws IOException, InterruptedException {
		for (Path directory : this.workingDirectories) {
			if (Files.isDirectory(directory)) {
				Files.writeString(directory.resolve(HOSTILE_TREE + ".stop"), "stop\n");
			}
		}
		MarkedProcesses.stopAndKill(this.marker);
	}

	/**
	 * A root JVM, cold executions with timeouts of 1 to 6 ms under a CPU hog: the result
	 * of each arrives within the timeout plus the grace period plus one second, and when
	 * it arrives no process of the command's tree is left, however far the set-up had
	 * come when the timeout struck.
	 */
	@ForEachLinuxMechanism
	void aTimeoutDuringTheSetUpLeavesNoProcessOfTheTreeOnceTheResultCame(MechanismChoice mechanism, @TempDir Path work)
			throws Exception {
		List<String> rounds = new ArrayList<>();
		List<String> failures = new ArrayList<>();
		int started = 0;
		try (CpuHog hog = CpuHog.start();
				ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
						(settings) -> settings.warm(WarmPoolSettings.OFF).killGracePeriod(GRACE))) {
			for (int round = 0; round < ROUNDS; round++) {
				Duration timeout = Duration.ofMillis(1 + round % LONGEST_TIMEOUT_MS);
				long start = System.nanoTime();
				ExecutionResult result = executor.execute(ExecutionRequest.builder("sh", "-c", tree(), this.marker)
					.workingDirectory(work)
					.timeout(timeout)
					.build());
				long took = (System.nanoTime() - start) / 1_000_000;
				List<String> left = MarkedProcesses.leftovers(this.marker);
				boolean ran = result.stdout().length > 0;
				started += ran ? 1 : 0;
				String line = "round " + round + ", timeout " + timeout.toMillis() + " ms: " + took + " ms, exit "
						+ result.exitCode() + ", timed out " + result.timedOut() + ", command ran " + ran
						+ ", processes of the tree left at the result " + left.size() + " "
						+ left.stream().limit(3).toList();
				rounds.add(line);
				if (!left.isEmpty() || took > timeout.plus(GRACE).plus(SLACK).toMillis()) {
					failures.add(line);
				}
				MarkedProcesses.stopAndKill(this.marker);
			}
		}
		String report = mechanism + ", root JVM, cold, " + started + " of " + ROUNDS + " commands ran:\n  "
				+ String.join("\n  ", rounds);
		System.out.println(TeardownWaitBreakInTests.class.getSimpleName() + " " + report);
		assertThat(failures).as(report).isEmpty();
	}

	/**
	 * A JVM of nobody (its executor's grace period of 500 ms and default pool, so that
	 * rounds in quick succession also miss it and launch cold), executions with timeouts
	 * of 1 to 6 ms under a CPU hog: each result arrives within the timeout plus the grace
	 * period plus one second, and when it arrives no process of the command's tree is
	 * left.
	 */
	@ForEachLinuxMechanism
	void anUnprivilegedJvmsTimeoutDuringTheSetUpLeavesNoProcessOfTheTreeOnceTheResultCame(MechanismChoice mechanism,
			@TempDir Path directory) throws Exception {
		List<String> rounds = new ArrayList<>();
		List<String> failures = new ArrayList<>();
		try (CpuHog hog = CpuHog.start();
				ContainerJvm jvm = ContainerJvm.start(directory, ContainerConfinement.Profile.UNCONFINED,
						ContainerConfinement.User.NOBODY, mechanism)) {
			for (int round = 0; round < ROUNDS; round++) {
				Duration timeout = Duration.ofMillis(1 + round % LONGEST_TIMEOUT_MS);
				long start = System.nanoTime();
				ContainerJvm.Result result = jvm.awaitResult(jvm.start(true, timeout, "sh", "-c", tree(), this.marker));
				long took = (System.nanoTime() - start) / 1_000_000;
				List<String> left = MarkedProcesses.leftovers(this.marker);
				String line = "round " + round + ", timeout " + timeout.toMillis() + " ms: " + took + " ms, exit "
						+ result.exitCode() + ", timed out " + result.timedOut() + ", command ran "
						+ !result.stdout().isEmpty() + ", processes of the tree left at the result " + left.size() + " "
						+ left.stream().limit(3).toList();
				rounds.add(line);
				if (!left.isEmpty() || took > timeout.plus(CHILD_JVM_GRACE).plus(SLACK).toMillis()) {
					failures.add(line);
				}
				MarkedProcesses.stopAndKill(this.marker);
			}
		}
		String report = mechanism + ", nobody's JVM:\n  " + String.join("\n  ", rounds);
		System.out.println(TeardownWaitBreakInTests.class.getSimpleName() + " " + report);
		assertThat(failures).as(report).isEmpty();
	}

	/**
	 * A root JVM, a grace period of 20 ms, under a CPU hog: {@code destroy()} of a
	 * process whose hostile tree of 32 lanes below a subreaper runs returns within the
	 * grace period plus one second, the process has ended and nothing of the tree is
	 * left, five times per mechanism. Held in the red team's runs (20 rounds within 1020
	 * ms); failed in the full suite of 4d16567 on bwrap (2026 ms) and namespaces (1417
	 * ms), 1 of 5 rounds each, nothing of the tree left: the same finding as
	 * {@link #aDestroyedHostileTreeDiesWithinTheGracePeriodPlusOneSecondWhileTheJvmIsBusy}.
	 */
	@Disabled("finding: under this test's own CPU hog (a thread spinning on each core of the JVM) a destroy with a "
			+ "grace period of 20 ms returned after up to 2026 ms for a bound of 1020 ms, the tree already gone: the "
			+ "teardown's bound assumes the JVM gets CPU time (threat model, 'Teardown under load')")
	@ForEachLinuxMechanism
	void aDestroyedHostileTreeDiesWithinAShortGracePeriodPlusOneSecond(MechanismChoice mechanism, @TempDir Path work)
			throws Exception {
		try (CpuHog hog = CpuHog.start()) {
			destroyRounds(mechanism, work, SHORT_GRACE, 5, "");
		}
	}

	/**
	 * A root JVM that is busy itself (a thread spinning on every core, as
	 * {@link HostileTreeTeardownBreakInTests} loads it) on a machine with one more core's
	 * worth of load beside it (a spinning shell in a session of its own, 90 s at most):
	 * {@code destroy()} of a process whose hostile tree of 32 lanes below a subreaper
	 * runs returns within the default grace period plus one second, the process has ended
	 * and nothing of the tree is left, six times per mechanism, each with an executor of
	 * its own. Found failing under that load: the first destroy of the run (bwrap)
	 * returned after 2590 ms (1 of 24 here); {@link HostileTreeTeardownBreakInTests},
	 * unchanged, failed 6 of 44 destroys and cancels over four runs beside the same kind
	 * of spinning shell, pool on and off (up to 3961 ms, processes of the tree asleep
	 * with no SIGKILL pending at the bound). What was seen: the grace period's wait and
	 * the SIGKILL are a JVM thread's, which the JVM's own busy threads starve (outer
	 * still asleep with no signal pending 1020 ms after a destroy; a sampling thread of
	 * 100 ms ran about once a second); with the load outside the JVM only (two spinning
	 * shells) 1 of 20 destroys missed the bound, by 35 ms.
	 */
	@Disabled("finding: the teardown's bound (grace period + 1 s) holds only while the JVM gets CPU time: the grace "
			+ "period's wait and the SIGKILL run on a JVM thread, which the JVM's own busy threads starve (1 of 24 rounds, "
			+ "2590 ms; threat model, 'Teardown under load')")
	@ForEachLinuxMechanism
	void aDestroyedHostileTreeDiesWithinTheGracePeriodPlusOneSecondWhileTheJvmIsBusy(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		Process besides = new ProcessBuilder("setsid", "timeout", "90", "sh", "-c", "while :; do :; done").start();
		try (CpuHog hog = CpuHog.start()) {
			destroyRounds(mechanism, work, GRACE, 6, ", a busy JVM and a spinning shell beside it");
		}
		finally {
			// timeout(1)'s shell first: killed alone, timeout would leave it spinning.
			besides.descendants().forEach(ProcessHandle::destroyForcibly);
			besides.destroyForcibly();
			besides.waitFor();
		}
	}

	/**
	 * Start the 32-lane hostile tree and destroy it, round after round, with the grace
	 * period given; each destroy must return within it plus one second, the process
	 * ended, nothing of the tree left.
	 */
	private void destroyRounds(MechanismChoice mechanism, Path work, Duration grace, int count, String load)
			throws Exception {
		this.workingDirectories.add(work);
		CompiledPrograms.install(hostileTree, work);
		List<String> rounds = new ArrayList<>();
		List<String> failures = new ArrayList<>();
		Duration bound = grace.plus(SLACK);
		for (int round = 0; round < count; round++) {
			// An executor per round, as each of HostileTreeTeardownBreakInTests' cases
			// has.
			try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
					(settings) -> settings.killGracePeriod(grace))) {
				SandboxedProcess process = executor
					.start(ExecutionRequest.builder("./" + HOSTILE_TREE, this.marker, "32", "1", "0")
						.workingDirectory(work)
						.build());
				process.stdin().close();
				BufferedReader stdout = new BufferedReader(
						new InputStreamReader(process.stdout(), StandardCharsets.UTF_8));
				assertThat(stdout.readLine()).startsWith("hostile tree: 32 lanes");
				assertThat(stdout.readLine()).isEqualTo("hostile tree: every lane started");
				// As HostileTreeTeardownBreakInTests: the lanes turn over, the helper's
				// orphans become its.
				Thread.sleep(300);
				long destroyed = System.nanoTime();
				process.destroy();
				long took = (System.nanoTime() - destroyed) / 1_000_000;
				List<String> left = MarkedProcesses.leftovers(this.marker);
				String line = "round " + round + ": destroy " + took + " ms, alive " + process.isAlive()
						+ ", survivors " + process.survivors() + ", processes of the tree left " + left.size() + " "
						+ left.stream().limit(3).toList();
				rounds.add(line);
				if (took > bound.toMillis() || process.isAlive() || !left.isEmpty()) {
					failures.add(line);
				}
				MarkedProcesses.stopAndKill(this.marker);
			}
		}
		String report = mechanism + ", root JVM" + load + ", grace period " + grace.toMillis() + " ms, bound "
				+ bound.toMillis() + " ms:\n  " + String.join("\n  ", rounds);
		System.out.println(TeardownWaitBreakInTests.class.getSimpleName() + " " + report);
		assertThat(failures).as(report).isEmpty();
	}

	/**
	 * A root JVM under a CPU hog: a 32-lane hostile tree below a subreaper, then 300
	 * spinners that ignore SIGTERM beside it, timed out after 3 s. The spinners take the
	 * CPU from the sandbox's own processes, which must run to die once outer is killed,
	 * so that the sandbox may still be there after {@code TEARDOWN_WAIT} and the
	 * backstop's kill rounds meet lanes that fork on. At the timeout plus the grace
	 * period plus one second no process of the tree runs code of its own (each left is
	 * exiting or has SIGKILL pending); the result then comes with nothing of the tree
	 * left.
	 */
	@ForEachLinuxMechanism
	void spinnersThatStarveTheSandboxsOwnTeardownLeaveNoForkingLaneRunningPastTheBound(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		this.workingDirectories.add(work);
		CompiledPrograms.install(hostileTree, work);
		String shell = Path.of("/bin/sh").toRealPath().getFileName().toString();
		Duration timeout = Duration.ofSeconds(3);
		Duration bound = timeout.plus(GRACE).plus(SLACK);
		String command = "trap '' TERM; ./" + HOSTILE_TREE + " \"$0\" 32 1 0 & sleep 0.5; i=0; while [ $i -lt 300 ]; "
				+ "do (while :; do :; done) & i=$((i + 1)); done; wait";
		try (CpuHog hog = CpuHog.start();
				ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
						(settings) -> settings.killGracePeriod(GRACE))) {
			long start = System.nanoTime();
			TeardownBreakInTests.Timed<ExecutionResult> execution = TeardownBreakInTests.Timed
				.call(() -> executor.execute(ExecutionRequest.builder("sh", "-c", command, this.marker)
					.workingDirectory(work)
					.timeout(timeout)
					.build()));
			boolean inTime = execution.awaitUntil(start + bound.toNanos());
			List<String> running = new ArrayList<>(MarkedProcesses.notDying(this.marker, HOSTILE_TREE));
			running.addAll(MarkedProcesses.notDying(this.marker, shell));
			execution.awaitUntil(System.nanoTime() + Duration.ofSeconds(70).toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			String report = mechanism + ", root JVM, 300 spinners and 32 lanes: " + execution.report(start) + ", bound "
					+ bound.toMillis() + " ms, in time " + inTime + ", running code at the bound " + running.size()
					+ " " + running.stream().limit(5).toList() + ", left once it returned " + left.size() + " "
					+ left.stream().limit(5).toList();
			System.out.println(TeardownWaitBreakInTests.class.getSimpleName() + " " + report);
			assertThat(execution.value().stdoutText()).as("the lanes ran: %s", report)
				.contains("hostile tree: every lane started");
			assertThat(running).as("processes of the tree running code at the bound: %s", report).isEmpty();
			assertThat(execution.ended()).as(report).isTrue();
			assertThat(left).as("nothing of the tree left once the result came: %s", report).isEmpty();
		}
	}

	/**
	 * The command: {@value #PROCESSES} subshells that ignore SIGTERM and run until killed
	 * (each keeps the marker, {@code $0}, in its command line), then a line on stdout.
	 */
	private static String tree() {
		return "trap '' TERM; i=0; while [ $i -lt " + PROCESSES
				+ " ]; do (while :; do sleep 1; done) & i=$((i + 1)); done; echo up; wait";
	}

}
