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
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Red-team attempts on the teardown of issue 26 that the builder's break-in tests
 * ({@link HostileTreeTeardownBreakInTests}) do not cover: trees that take the CPU from
 * the processes that tear them down rather than outrun the kill.
 * <ul>
 * <li>{@code session-spinners.c}: every spinner of the tree takes a session of its own
 * (allowed on the mechanisms with a PID namespace). With the scheduler's autogroups (on
 * here: {@code /proc/sys/kernel/sched_autogroup_enabled}) each session gets one share of
 * the CPU, so the JVM's session, where {@code outer}, the wrapper and the sandbox's PID 1
 * run, gets one share in hundreds; without autogroups (a JVM in a container's CPU cgroup)
 * every task gets one share anyway.</li>
 * <li>{@code affinity-pin.c}: on the seccomp mechanism, a JVM of nobody shares its uid
 * with the command, which sees it by pid; {@code sched_setaffinity(2)} needs only the
 * same uid, so the command tries to pin the JVM's threads, {@code outer} and
 * {@code contain} to CPU 0 and spins there. With them pinned, the result came up to 431
 * ms late under a CPU hog of the test run's own; since launcher 14 the filter refuses
 * {@code sched_setaffinity(pid)} where there is no PID namespace.</li>
 * </ul>
 * Each asserts the bound: the result within the timeout plus the kill grace
 * period plus one second, nothing of the tree left.
 */
@Tag("slow")
@EnabledOnOs(OS.LINUX)
class TeardownBreakInTests {

	private static final String SESSION_SPINNERS = "session-spinners";

	private static final String AFFINITY_PIN = "affinity-pin";

	private static final Duration TIMEOUT = Duration.ofSeconds(3);

	/** The kill grace period of this JVM's executors: the default. */
	private static final Duration GRACE = Duration.ofSeconds(1);

	/** The kill grace period of {@link ContainerSandboxMain}'s executors. */
	private static final Duration CHILD_JVM_GRACE = Duration.ofMillis(500);

	/** What the issue allows beyond the timeout and the grace period. */
	private static final Duration SLACK = Duration.ofSeconds(1);

	/** How long a call that missed its bound gets once its tree was told to stop. */
	private static final Duration PATIENCE = Duration.ofSeconds(70);

	private static Path sessionSpinners;

	private static Path affinityPin;

	private final String marker = "red-team-" + UUID.randomUUID();

	private final List<Path> workingDirectories = new ArrayList<>();

	@BeforeAll
	static void compile(@TempDir Path directory) throws IOException, InterruptedException {
		sessionSpinners = CompiledPrograms.compile(SESSION_SPINNERS, Files.createDirectory(directory.resolve("a")));
		affinityPin = CompiledPrograms.compile(AFFINITY_PIN, Files.createDirectory(directory.resolve("b")));
	}

	@AfterEach
	void stopWhatIsLeft() throws IOException, InterruptedException {
		stop();
	}

	/**
	 * A root JVM: a tree of 400 processes that ignore SIGTERM and spin, each in a session
	 * of its own where the mechanism allows it, is timed out and gone within the timeout
	 * plus the grace period plus one second.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES", "SECCOMP" })
	void aRootJvmsSpinnersInSessionsOfTheirOwnDieWithinTheGracePeriodOfTheirTimeout(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		install(sessionSpinners, work);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings)) {
			long start = System.nanoTime();
			Timed<ExecutionResult> execution = Timed
				.call(() -> executor.execute(ExecutionRequest.builder("./" + SESSION_SPINNERS, this.marker, "400", "1")
					.workingDirectory(work)
					.timeout(TIMEOUT)
					.build()));
			Duration bound = TIMEOUT.plus(GRACE).plus(SLACK);
			boolean inTime = execution.awaitUntil(start + bound.toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			List<String> leftAtReturn = left;
			if (!inTime) {
				// The JVM's own teardown gets its time (the spinners end themselves after
				// 60 s).
				execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
				leftAtReturn = MarkedProcesses.leftovers(this.marker);
			}
			String report = mechanism + ", root JVM, 400 spinners in sessions of their own: " + execution.report(start)
					+ ", bound " + bound.toMillis() + " ms, processes of the tree [pid state ppid uid] at the bound "
					+ left.size() + " " + left.stream().limit(3).toList() + ", when the call returned "
					+ leftAtReturn.size() + " " + leftAtReturn.stream().limit(3).toList();
			System.out.println(TeardownBreakInTests.class.getSimpleName() + " " + report);
			assertThat(inTime).as("ended within the bound: %s", report).isTrue();
			assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
			assertThat(execution.value().timedOut()).as(report).isTrue();
		}
	}

	/**
	 * A root JVM: {@code close()} of the executor while 400 spinners in sessions of their
	 * own run returns, and the execution ends, within the grace period plus one second;
	 * nothing of the tree is left.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP" })
	void aClosedExecutorsSpinnersInSessionsOfTheirOwnDieWithinTheGracePeriod(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		install(sessionSpinners, work);
		ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings);
		try (executor) {
			ByteArrayOutputStream stdout = new ByteArrayOutputStream();
			Timed<ExecutionResult> execution = Timed
				.call(() -> executor.execute(ExecutionRequest.builder("./" + SESSION_SPINNERS, this.marker, "400", "1")
					.workingDirectory(work)
					.stdoutSink(stdout)
					.build()));
			await().atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> stdout.toString(StandardCharsets.UTF_8).contains("spinning:") || execution.ended());
			long closed = System.nanoTime();
			Timed<Boolean> closing = Timed.call(() -> {
				executor.close();
				return Boolean.TRUE;
			});
			Duration bound = GRACE.plus(SLACK);
			boolean inTime = closing.awaitUntil(closed + bound.toNanos())
					& execution.awaitUntil(closed + bound.toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			if (!inTime) {
				closing.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
				execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
				left = MarkedProcesses.leftovers(this.marker);
			}
			String report = mechanism + ", root JVM, executor closed under 400 spinners in sessions of their own ("
					+ stdout.toString(StandardCharsets.UTF_8).trim() + "): close " + closing.report(closed)
					+ ", execute " + execution.report(closed) + ", bound " + bound.toMillis()
					+ " ms, processes of the tree left once both had returned " + left.size() + " "
					+ left.stream().limit(5).toList();
			System.out.println(TeardownBreakInTests.class.getSimpleName() + " " + report);
			assertThat(inTime).as("ended within the bound: %s", report).isTrue();
			assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
		}
	}

	/**
	 * A JVM of nobody on the seccomp mechanism whose command tries to pin
	 * {@code contain}, {@code outer} and the JVM to CPU 0 and spins there with 64
	 * processes, ignoring SIGTERM: not a thread is pinned, the result arrives within the
	 * timeout plus the JVM's grace period (500 ms) plus one second, and nothing of the
	 * command is left.
	 */
	@Test
	void aNobodyJvmsCommandCannotPinTheJvmToItsSpinnersAndIsKilledOnTime(@TempDir Path directory) throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(directory, ContainerConfinement.Profile.UNCONFINED,
				ContainerConfinement.User.NOBODY, MechanismChoice.SECCOMP)) {
			install(affinityPin, jvm.commands());
			long start = System.nanoTime();
			Timed<ContainerJvm.Result> execution = Timed.call(
					() -> jvm.awaitResult(jvm.start(true, TIMEOUT, "./" + AFFINITY_PIN, this.marker, "starve", "64")));
			Duration bound = TIMEOUT.plus(CHILD_JVM_GRACE).plus(SLACK);
			boolean inTime = execution.awaitUntil(start + bound.toNanos());
			List<String> left = MarkedProcesses.leftovers(this.marker);
			if (!inTime) {
				execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
				left = MarkedProcesses.leftovers(this.marker);
			}
			String report = "seccomp, nobody's JVM, command pins the JVM to CPU 0 with 64 spinners: "
					+ execution.report(start) + ", bound " + bound.toMillis() + " ms, processes of the tree left "
					+ "once it had returned " + left.size() + " " + left.stream().limit(5).toList();
			System.out.println(TeardownBreakInTests.class.getSimpleName() + " " + report);
			assertThat(inTime).as("ended within the bound: %s", report).isTrue();
			assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
			assertThat(execution.value().stdout()).as(report)
				.contains(": pinned 0 of")
				.doesNotContainPattern("pinned [1-9]");
			assertThat(execution.value().timedOut()).as(report).isTrue();
		}
	}

	/**
	 * A JVM of nobody on {@code unshare}, whose command first tries to write 19 to
	 * {@code /proc/1/autogroup} (the JVM's session once, the session of the sandbox's
	 * teardown with launcher 12, refused since PID 1's files belong to the host's root:
	 * {@link Pid1ProcFilesBreakInTests}) and then runs 200 spinners in sessions of their
	 * own, ignoring SIGTERM: the result still arrives within the timeout plus the JVM's
	 * grace period (500 ms) plus one second, and nothing of the tree is left. The JVM's
	 * autogroup is set back afterwards.
	 */
	@Test
	void aNobodyJvmsCommandThatRenicesTheJvmsSessionIsStillKilledOnTime(@TempDir Path directory) throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(directory, ContainerConfinement.Profile.UNCONFINED,
				ContainerConfinement.User.NOBODY, MechanismChoice.UNSHARE)) {
			install(sessionSpinners, jvm.commands());
			Path autogroup = Path.of("/proc", Long.toString(Pid1ProcFilesBreakInTests.javaOf(jvm)), "autogroup");
			String before = Pid1ProcFilesBreakInTests.autogroupOf(autogroup);
			try {
				long start = System.nanoTime();
				Timed<ContainerJvm.Result> execution = Timed
					.call(() -> jvm.awaitResult(jvm.start(true, TIMEOUT, "/bin/sh", "-c",
							"echo 19 > /proc/1/autogroup; exec ./" + SESSION_SPINNERS + " " + this.marker + " 200 1")));
				Duration bound = TIMEOUT.plus(CHILD_JVM_GRACE).plus(SLACK);
				boolean inTime = execution.awaitUntil(start + bound.toNanos());
				List<String> left = MarkedProcesses.leftovers(this.marker);
				String reniced = Files.readString(autogroup).trim();
				if (!inTime) {
					execution.awaitUntil(System.nanoTime() + PATIENCE.toNanos());
					left = MarkedProcesses.leftovers(this.marker);
				}
				String report = "unshare, nobody's JVM, command renices the JVM's session and runs 200 spinners in "
						+ "sessions of their own: " + execution.report(start) + ", bound " + bound.toMillis()
						+ " ms, the JVM's autogroup " + before + " before, " + reniced + " at the bound, processes of "
						+ "the tree left once it had returned " + left.size() + " " + left.stream().limit(5).toList();
				System.out.println(TeardownBreakInTests.class.getSimpleName() + " " + report);
				assertThat(inTime).as("ended within the bound: %s", report).isTrue();
				assertThat(left).as("nothing of the tree left: %s", report).isEmpty();
			}
			finally {
				Files.writeString(autogroup, before.replaceAll(".* nice ", "") + "\n");
			}
		}
	}

	private void install(Path program, Path directory) throws IOException {
		this.workingDirectories.add(directory);
		CompiledPrograms.install(program, directory);
	}

	/** Tell the trees to stop (their stop files), kill what is left by the marker. */
	private void stop() throws IOException, InterruptedException {
		for (Path directory : this.workingDirectories) {
			if (Files.isDirectory(directory)) {
				Files.writeString(directory.resolve(SESSION_SPINNERS + ".stop"), "stop\n");
				Files.writeString(directory.resolve(AFFINITY_PIN + ".stop"), "stop\n");
			}
		}
		Thread.sleep(200);
		MarkedProcesses.stopAndKill(this.marker);
		for (Path directory : this.workingDirectories) {
			Files.deleteIfExists(directory.resolve(SESSION_SPINNERS + ".stop"));
			Files.deleteIfExists(directory.resolve(AFFINITY_PIN + ".stop"));
		}
	}

	/**
	 * A call on a thread of its own, with when it ended and what it returned or threw.
	 */
	static final class Timed<T> {

		private final Thread thread;

		private final AtomicReference<T> value = new AtomicReference<>();

		private final AtomicReference<Throwable> thrown = new AtomicReference<>();

		private volatile long endedAt;

		private Timed(Callable<T> callable) {
			this.thread = new Thread(() -> {
				try {
					this.value.set(callable.call());
				}
				catch (Throwable ex) {
					this.thrown.set(ex);
				}
				finally {
					this.endedAt = System.nanoTime();
				}
			}, "red-team-call");
			this.thread.setDaemon(true);
			this.thread.start();
		}

		static <T> Timed<T> call(Callable<T> callable) {
			return new Timed<>(callable);
		}

		/**
		 * Wait until the call has ended or the deadline; return whether it ended in time.
		 */
		boolean awaitUntil(long deadline) throws InterruptedException {
			long left = deadline - System.nanoTime();
			if (left > 0) {
				this.thread.join(Math.max(1, left / 1_000_000));
			}
			return !this.thread.isAlive() && this.endedAt <= deadline;
		}

		boolean ended() {
			return !this.thread.isAlive();
		}

		String report(long start) {
			return (this.thread.isAlive() ? "did not end" : "ended after " + (this.endedAt - start) / 1_000_000 + " ms")
					+ ((this.thrown.get() != null) ? " (threw " + this.thrown.get() + ")" : "")
					+ ((this.value.get() != null) ? " (" + this.value.get() + ")" : "");
		}

		T value() {
			assertThat(this.thrown.get()).as("the call threw").isNull();
			assertThat(this.value.get()).as("the call returned").isNotNull();
			return this.value.get();
		}

	}

}
