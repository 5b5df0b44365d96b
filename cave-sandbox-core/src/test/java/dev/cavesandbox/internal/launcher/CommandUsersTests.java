package dev.cavesandbox.internal.launcher;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ConcurrentExecutionsProcessLimitBreakInTests;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.probe.LinuxProbe;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The command users of a root JVM's executions on the seccomp mechanism
 * ({@code cave.sandbox.linux.command-user-range}): each running execution runs as a uid
 * of the host of its own, so that one execution's fork storm does not take the process
 * count of another (the kernel counts {@code RLIMIT_NPROC} per real uid when there is no
 * user namespace; {@code ConcurrentExecutionsProcessLimitBreakInTests} shows that); a uid
 * is handed out only when no process runs as it, and a started process holds its uid
 * until it has ended. Each test uses a range of its own, apart from the default one of
 * other test classes. Run only where the JVM is the host's root (as in CI); every process
 * a test starts ends within a minute.
 */
@EnabledOnOs(OS.LINUX)
class CommandUsersTests {

	@BeforeEach
	void hostRoot() {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
	}

	/**
	 * Two executions at once read their ids in {@code /proc/self/status}: each runs as a
	 * uid of the range of its own, in real, effective, saved and filesystem uid, and both
	 * with the command user's gid (65534), which the working directory's grant goes to.
	 */
	@Test
	void concurrentExecutionsRunAsUidsOfTheirOwn(@TempDir Path first, @TempDir Path second) throws Exception {
		try (ProcessIsolatedExecutor executor = seccomp("66600-66615", 16, 512);
				SandboxedProcess one = executor.start(idsThenSleep(first));
				SandboxedProcess other = executor.start(idsThenSleep(second))) {
			List<String> ids = List.of(firstLines(one, 2), firstLines(other, 2));
			long uid = uidOf(ids.get(0));
			long otherUid = uidOf(ids.get(1));
			assertThat(uid).as("%s", ids).isNotEqualTo(otherUid).isBetween(66600L, 66615L);
			assertThat(otherUid).isBetween(66600L, 66615L);
			assertThat(ids.get(0)).as("real, effective, saved and filesystem ids")
				.isEqualTo(("Uid: %1$d %1$d %1$d %1$d%nGid: 65534 65534 65534 65534").formatted(uid));
			assertThat(ids.get(1))
				.isEqualTo(("Uid: %1$d %1$d %1$d %1$d%nGid: 65534 65534 65534 65534").formatted(otherUid));
		}
	}

	/**
	 * Executions one after the other in one working directory run as different uids of
	 * the range, with the command user's gid: what the first made there (a file, a
	 * directory and a file in it) the second writes in place, since the launcher takes
	 * the group-write bit out of the command's umask; as when all executions ran as one
	 * uid.
	 */
	@Test
	void theNextExecutionInASharedWorkingDirectoryWritesWhatTheLastMadeThere(@TempDir Path directory) {
		try (ProcessIsolatedExecutor executor = seccomp("66610-66611", 2, 512)) {
			ExecutionResult first = executor.execute(ExecutionRequest
				.builder("/bin/sh", "-c",
						"grep '^Uid:' /proc/self/status; echo one > shared && mkdir sub && echo one > sub/file")
				.workingDirectory(directory)
				.timeout(Duration.ofSeconds(30))
				.build());
			ExecutionResult second = executor.execute(ExecutionRequest.builder("/bin/sh", "-c",
					"grep '^Uid:' /proc/self/status; echo two >> shared && echo two > sub/file && echo new > sub/new")
				.workingDirectory(directory)
				.timeout(Duration.ofSeconds(30))
				.build());
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			assertThat(second.exitCode()).as(second.stderrText()).isZero();
			assertThat(uidOf(second.stdoutText())).as("another uid of the range")
				.isNotEqualTo(uidOf(first.stdoutText()))
				.isBetween(66610L, 66611L);
			assertThat(directory.resolve("shared")).hasContent("one\ntwo");
			assertThat(directory.resolve("sub/file")).hasContent("two");
			assertThat(directory.resolve("sub/new")).hasContent("new");
		}
	}

	/**
	 * A uid is handed out only when no process runs as it: a process of the host that
	 * runs as the range's first uid (as one left behind by an earlier execution would)
	 * makes the executions take the next one, and where no other is free they fail,
	 * coded, naming the uid and the fix. After it ends, the uid is handed out again.
	 */
	@Test
	void aUidOfWhichAProcessRunsIsNotHandedOut(@TempDir Path directory) throws Exception {
		Process squatter = new ProcessBuilder("/usr/bin/setpriv", "--reuid=66630", "--regid=66630", "--clear-groups",
				"/bin/sleep", "60")
			.start();
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> new CommandUsers(SandboxSettings.CommandUserRange.parse("66630-66631")).runningUids()
					.contains(66630L));
			try (ProcessIsolatedExecutor two = seccomp("66630-66631", 2, 512)) {
				for (int i = 0; i < 3; i++) {
					assertThat(uid(two, directory)).isEqualTo(66631);
				}
			}
			// The probe of a range whose every uid is in use finds none for its own child
			// (LinuxProbeTests): this executor takes the verdict of the wider range's
			// probe.
			SandboxSettings onlySquatted = settings("66630-66630", 1, 512);
			try (ProcessIsolatedExecutor one = ProcessIsolatedExecutor.isolated(onlySquatted,
					LinuxMechanisms.verified(settings("66630-66631", 2, 512)))) {
				assertThatExceptionOfType(SandboxLaunchException.class).isThrownBy(() -> uid(one, directory))
					.withMessageStartingWith(
							"cave_sandbox_launch_failed: no command user is free: processes run as each of "
									+ "the 1 uids of the range 66630-66630 that no running execution holds [66630]")
					.withMessageContaining("set cave.sandbox.linux.command-user-range to uids that nothing else uses");
				squatter.destroyForcibly().waitFor();
				assertThat(uid(one, directory)).isEqualTo(66630);
			}
		}
		finally {
			squatter.destroyForcibly().waitFor();
		}
	}

	/**
	 * A uid goes back only once the execution's tree has ended: a command that leaves a
	 * process behind which ignores SIGTERM, in a session of its own, and exits; when
	 * {@code execute} has returned no process runs as its uid, and the next execution,
	 * with a range of one uid, gets that same uid.
	 */
	@Test
	void aUidIsReusedOnlyAfterThePreviousTreeHasEnded(@TempDir Path directory) throws Exception {
		try (ProcessIsolatedExecutor executor = seccomp("66640-66640", 1, 512)) {
			ExecutionResult leaver = executor.execute(ExecutionRequest
				.builder("/bin/sh", "-c",
						"setsid sh -c 'trap \"\" TERM; sleep 50' </dev/null >/dev/null 2>&1 & "
								+ "grep '^Uid:' /proc/self/status")
				.workingDirectory(directory)
				.timeout(Duration.ofSeconds(30))
				.build());
			assertThat(leaver.exitCode()).as(leaver.stderrText()).isZero();
			assertThat(uidOf(leaver.stdoutText().strip())).isEqualTo(66640);
			assertThat(new CommandUsers(SandboxSettings.CommandUserRange.parse("66640-66640")).runningUids())
				.as("processes of the uid when execute() returned")
				.isEmpty();
			assertThat(uid(executor, directory)).isEqualTo(66640);
		}
	}

	/**
	 * A started process holds its uid until it has ended: while it runs, executions take
	 * the other uid of the range, every time; once it has ended, its uid is handed out
	 * again.
	 */
	@Test
	void aStartedProcessHoldsItsUidUntilItHasEnded(@TempDir Path started, @TempDir Path directory) throws Exception {
		try (ProcessIsolatedExecutor executor = seccomp("66650-66651", 2, 512)) {
			SandboxedProcess process = executor.start(idsThenSleep(started));
			long held = uidOf(firstLines(process, 2));
			List<Long> meanwhile = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				meanwhile.add(uid(executor, directory));
			}
			assertThat(meanwhile).as("uids of executions while the started process (uid %d) ran", held)
				.containsOnly((held == 66650) ? 66651L : 66650L);
			process.destroy();
			process.onExit().get(30, TimeUnit.SECONDS);
			List<Long> after = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				after.add(uid(executor, directory));
			}
			assertThat(after).as("uids after it ended").contains(held);
		}
	}

	/**
	 * At first every uid is unchecked: the first acquisition scans {@code /proc} once and
	 * checks the whole range (a uid of which a process runs then is skipped); the
	 * acquisitions after it take the uids checked then without another scan, so a process
	 * of a foreign program that starts as such a uid later is not seen (a check at
	 * acquisition misses one that starts a moment later just as well). Once no checked
	 * uid is left, an acquisition scans again: the uid in use is still not handed out.
	 */
	@Test
	void theFirstAcquisitionChecksTheWholeRangeOnce() throws Exception {
		Process early = squat(66660);
		Process late = null;
		try {
			CommandUsers users = new CommandUsers(SandboxSettings.CommandUserRange.parse("66660-66662"));
			assertThat(users.acquire()).as("the range's first uid is in use").isEqualTo(66661);
			late = squat(66662);
			assertThat(users.acquire()).as("checked at the first acquisition").isEqualTo(66662);
			assertThatExceptionOfType(SandboxLaunchException.class).isThrownBy(users::acquire)
				.withMessageContaining("processes run as each of the 1 uids of the range 66660-66662 that no running "
						+ "execution holds [66660]");
		}
		finally {
			early.destroyForcibly().waitFor();
			if (late != null) {
				late.destroyForcibly().waitFor();
			}
		}
	}

	/**
	 * A uid is checked when it is released: one of which a process still runs then (as a
	 * process left behind by its execution would) is not handed out, and the acquisition
	 * that finds no other fails, coded; once the process has ended, the next acquisition
	 * checks it again and hands it out.
	 */
	@Test
	void aUidFoundInUseAtItsReleaseIsNotHandedOut() throws Exception {
		CommandUsers users = new CommandUsers(SandboxSettings.CommandUserRange.parse("66670-66670"));
		assertThat(users.acquire()).isEqualTo(66670);
		Process leftOver = squat(66670);
		try {
			users.release(66670);
			assertThatExceptionOfType(SandboxLaunchException.class).isThrownBy(users::acquire)
				.withMessageStartingWith("cave_sandbox_launch_failed: no command user is free: processes run as each "
						+ "of the 1 uids of the range 66670-66670 that no running execution holds [66670]");
		}
		finally {
			leftOver.destroyForcibly().waitFor();
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> !users.runningUids().contains(66670L));
		assertThat(users.acquire()).isEqualTo(66670);
	}

	/**
	 * The check of a release runs where the pool was told (the executor's cleaner
	 * thread), once for every release made before it starts; until it has run, an
	 * acquisition takes the uids checked earlier, and where none is left it checks the
	 * released ones itself. Checked uids are handed out least recently released first.
	 */
	@Test
	void releasedUidsAreCheckedWhereThePoolWasTold() {
		List<Runnable> checks = new ArrayList<>();
		CommandUsers users = new CommandUsers(SandboxSettings.CommandUserRange.parse("66680-66682"), checks::add);
		long first = users.acquire();
		long second = users.acquire();
		users.release(second);
		users.release(first);
		assertThat(checks).as("one check for both releases").hasSize(1);
		assertThat(users.acquire()).as("checked at the first acquisition").isEqualTo(66682);
		checks.remove(0).run();
		assertThat(List.of(users.acquire(), users.acquire())).as("in the order of their release")
			.containsExactly(second, first);
		users.release(first);
		assertThat(checks).hasSize(1);
		assertThat(users.acquire()).as("checked by the acquisition, the release's check not run yet").isEqualTo(first);
		checks.remove(0).run();
		assertThatExceptionOfType(SandboxLaunchException.class).isThrownBy(users::acquire);
	}

	/**
	 * The command users of one range are one pool in this JVM, whichever executor takes
	 * them: a uid held through one executor's is not handed out through another's, and a
	 * uid released through one is checked where that one was told.
	 */
	@Test
	void theCommandUsersOfOneRangeAreOnePoolWhicheverExecutorTakesThem() {
		List<Runnable> oneChecks = new ArrayList<>();
		List<Runnable> otherChecks = new ArrayList<>();
		SandboxSettings.CommandUserRange range = SandboxSettings.CommandUserRange.parse("66760-66761");
		CommandUsers one = new CommandUsers(range, oneChecks::add);
		CommandUsers other = new CommandUsers(range, otherChecks::add);
		long held = one.acquire();
		long otherHeld = other.acquire();
		assertThat(otherHeld).isNotEqualTo(held).isBetween(66760L, 66761L);
		assertThatExceptionOfType(SandboxLaunchException.class).isThrownBy(one::acquire);
		other.release(otherHeld);
		assertThat(oneChecks).isEmpty();
		assertThat(otherChecks).hasSize(1);
		otherChecks.remove(0).run();
		assertThat(one.acquire()).isEqualTo(otherHeld);
	}

	/**
	 * An executor checks its released uids on its cleaner thread
	 * ({@value PrivateDirectories#CLEANER_THREAD}), not on the caller's.
	 */
	@Test
	void anExecutorChecksReleasedUidsOnItsCleanerThread(@TempDir Path workDirectory) throws Exception {
		PrivateDirectories directories = new PrivateDirectories(workDirectory, 1, true, true);
		try {
			List<String> threads = new CopyOnWriteArrayList<>();
			CommandUsers users = new CommandUsers(SandboxSettings.CommandUserRange.parse("66690-66690"),
					(check) -> directories.runOnCleaner(() -> {
						threads.add(Thread.currentThread().getName());
						check.run();
					}));
			users.release(users.acquire());
			await().atMost(Duration.ofSeconds(10)).until(() -> !threads.isEmpty());
			assertThat(threads).containsExactly(PrivateDirectories.CLEANER_THREAD);
			assertThat(users.acquire()).isEqualTo(66690);
		}
		finally {
			directories.close();
		}
	}

	/** A process of the host that runs as a uid, until destroyed; once it shows. */
	private static Process squat(long uid) throws IOException {
		Process squatter = new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups",
				"/bin/sleep", "60")
			.start();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> new CommandUsers(SandboxSettings.CommandUserRange.parse(uid + "-" + uid)).runningUids()
				.contains(uid));
		return squatter;
	}

	private static ProcessIsolatedExecutor seccomp(String range, int maxConcurrent, int processes) {
		SandboxSettings settings = settings(range, maxConcurrent, processes);
		return ProcessIsolatedExecutor.isolated(settings, LinuxMechanisms.verified(settings));
	}

	private static SandboxSettings settings(String range, int maxConcurrent, int processes) {
		return SandboxSettings.builder()
			.mechanism(MechanismChoice.SECCOMP)
			.commandUserRange(SandboxSettings.CommandUserRange.parse(range))
			.maxConcurrent(maxConcurrent)
			.limits(ResourceLimits.defaults().toBuilder().processes(processes).build())
			.build();
	}

	private static ExecutionRequest idsThenSleep(Path directory) {
		return ExecutionRequest.builder("/bin/sh", "-c", "grep -E '^(Uid|Gid):' /proc/self/status; exec sleep 50")
			.workingDirectory(directory)
			.timeout(Duration.ofSeconds(55))
			.build();
	}

	private static long uid(ProcessIsolatedExecutor executor, Path directory) {
		ExecutionResult result = executor
			.execute(ExecutionRequest.builder("/bin/sh", "-c", "grep '^Uid:' /proc/self/status")
				.workingDirectory(directory)
				.timeout(Duration.ofSeconds(30))
				.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		return uidOf(result.stdoutText().strip());
	}

	/** The real uid of a {@code Uid:} line of {@code /proc/PID/status}. */
	private static long uidOf(String lines) {
		return Long.parseLong(lines.lines().findFirst().orElseThrow().split("\\s+")[1]);
	}

	/**
	 * The first lines a started process writes, with runs of white space as one space.
	 */
	private static String firstLines(SandboxedProcess process, int count) throws IOException {
		BufferedReader reader = new BufferedReader(new InputStreamReader(process.stdout(), StandardCharsets.UTF_8));
		List<String> lines = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String line = reader.readLine();
			assertThat(line).as("line %d of the process's output", i + 1).isNotNull();
			lines.add(line.replaceAll("\\s+", " ").strip());
		}
		return String.join(System.lineSeparator(), lines);
	}

}
