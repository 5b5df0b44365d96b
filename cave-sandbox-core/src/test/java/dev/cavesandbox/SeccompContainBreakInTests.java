package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Break-in attempts on the seccomp mechanism (launcher v6): its subreaper
 * {@code contain}, the working directory's grant to the command user, and the same-uid
 * routes the filter was to close. A root JVM's command runs there as a uid of the host of
 * its own per execution (from {@code cave.sandbox.linux.command-user-range}) with the
 * command user's gid (65534 by default), so a process of uid 65534 shares only the
 * command's gid, and another execution only the gid. Attempts the sandbox withstands are
 * passing tests; each one that got through is a test that fails on the code it was
 * written against, disabled as an open finding. Every process a test starts ends by
 * itself within two minutes, and each test kills what is left of it before it ends.
 */
@EnabledOnOs(OS.LINUX)
class SeccompContainBreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

	private static final long NOBODY = 65534;

	private static ProcessIsolatedExecutor seccomp;

	@BeforeAll
	static void createExecutor() {
		SandboxSettings settings = settings().build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		seccomp = ProcessIsolatedExecutor.isolated(settings, capability);
		assumeThat(capability.mechanism()).isInstanceOf(SeccompMechanism.class);
		assumeThat(((SeccompMechanism) capability.mechanism()).commandGroup())
			.as("the seccomp mechanism runs the commands of a root JVM as the command user")
			.isEqualTo(NOBODY);
	}

	@AfterAll
	static void closeExecutor() {
		if (seccomp != null) {
			seccomp.close();
		}
	}

	/** The settings of a production executor: the default grace period (1 s). */
	private static SandboxSettings.Builder settings() {
		return SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).timeout(Duration.ofSeconds(30));
	}

	/**
	 * Found by a break-in attempt, now held: {@code contain} reads each process's state
	 * from /proc/PID/status, which shows the thread-group leader's, and its stop rounds
	 * skipped a "Z". A process whose leader thread has exited while another thread runs
	 * on shows "Z": it was never stopped (now every descendant gets SIGSTOP in every
	 * round, whatever its state). Its thread continues the command's process group every
	 * millisecond, so the stop rounds run to their bound of 200, each a scan of /proc
	 * made longer by 300 zombies, and it forks a successor every 0.2 s. At the timeout
	 * the executor kills the wrapper, waits the grace period (1 s) for {@code contain},
	 * then kills it and the processes it had listed: the successor forked since is left
	 * to init, running as the command user, and keeps writing to its working directory
	 * through a descriptor it holds. Its Landlock domain allows writes beneath that
	 * directory: while a later execution in the same directory holds the grant, it
	 * creates files there. Observed (2 CPUs, about 130 host processes): the execution
	 * returned 5.1 s after it started, and 3 s later one process (state Z, PPid 1, uid
	 * 65534) still ran and had written 14 heartbeat lines; during a later 2 s execution
	 * in the same directory it created 10 files there. Without the 300 zombies (each scan
	 * shorter) the tree was taken down on this host. Those observations are from before
	 * the fix.
	 */
	@Test
	void aProcessWithAnExitedLeaderDiesWithItsTimedOutExecution(@TempDir Path work)
			throws IOException, InterruptedException {
		leaderlessChainDiesWithItsExecution(work, "stay", Duration.ofSeconds(3), 300);
	}

	/**
	 * The same tree, left behind by a command that exits at once: {@code contain} has the
	 * rest of the timeout (20 s) to take it down before the executor steps in, and does
	 * (observed in five runs: the execution returned 1.7 s to 6.4 s after it started,
	 * nothing left; once, in a run of the whole class, 22.2 s: contain had not finished
	 * when the 20 s timeout came, and still nothing was left).
	 */
	@Test
	void aProcessWithAnExitedLeaderDiesWithItsExecutionThatExits(@TempDir Path work)
			throws IOException, InterruptedException {
		leaderlessChainDiesWithItsExecution(work, "exit", Duration.ofSeconds(20), 300);
	}

	/**
	 * The same tree, its execution cancelled instead of timed out: the same teardown.
	 * Observed before the fix in one of two runs: one process (state Z, PPid 1) wrote 15
	 * heartbeat lines between 3 s and 6 s after the cancel; in the other nothing was
	 * left.
	 */
	@Test
	void aProcessWithAnExitedLeaderDiesWithItsCancelledExecution(@TempDir Path work)
			throws IOException, InterruptedException {
		String marker = "cave-leaderless-" + UUID.randomUUID();
		MechanismsWithoutMountsBreakInTests.copyResource("zombie-leader-chain.py", work);
		long end = System.currentTimeMillis() / 1000 + 90;
		Path heartbeat = work.resolve("heartbeat");
		try {
			CompletableFuture<ExecutionResult> execution = seccomp.executeAsync(ExecutionRequest
				.builder(PYTHON, "zombie-leader-chain.py", marker, String.valueOf(end), "stay", "300")
				.workingDirectory(work)
				.build());
			await().atMost(Duration.ofSeconds(30))
				.until(() -> Files.exists(heartbeat) && Files.readAllLines(heartbeat).size() >= 3);
			execution.cancel(true);
			// the executor's teardown: the grace period twice, then its SIGKILL backstop
			Thread.sleep(3000);
			long linesAtEnd = Files.readAllLines(heartbeat).size();
			Thread.sleep(3000);
			List<String> left = MarkedProcesses.leftovers(marker);
			long linesAfter = Files.readAllLines(heartbeat).size();
			String report = String.format(
					"cancelled; from 3 s to 6 s after: %d heartbeat lines, processes " + "[pid state ppid uid] %s",
					linesAfter - linesAtEnd, left);
			System.out.println(getClass().getSimpleName() + " cancelled: " + report);
			assertThat(left).as(report).isEmpty();
			assertThat(linesAfter).as(report).isEqualTo(linesAtEnd);
		}
		finally {
			MarkedProcesses.stopAndKill(marker);
		}
	}

	private void leaderlessChainDiesWithItsExecution(Path work, String ending, Duration timeout, int zombies)
			throws IOException, InterruptedException {
		String marker = "cave-leaderless-" + UUID.randomUUID();
		MechanismsWithoutMountsBreakInTests.copyResource("zombie-leader-chain.py", work);
		long end = System.currentTimeMillis() / 1000 + 90;
		try {
			long start = System.nanoTime();
			ExecutionResult result = seccomp.execute(ExecutionRequest
				.builder(PYTHON, "zombie-leader-chain.py", marker, String.valueOf(end), ending, String.valueOf(zombies))
				.workingDirectory(work)
				.timeout(timeout)
				.build());
			long returnedAfter = (System.nanoTime() - start) / 1_000_000;
			assertThat(result.stdoutText()).as(result.stderrText()).contains("chain started");
			Path heartbeat = work.resolve("heartbeat");
			long linesAtReturn = Files.readAllLines(heartbeat).size();
			Thread.sleep(3000);
			List<String> left = MarkedProcesses.leftovers(marker);
			long linesAfter = Files.readAllLines(heartbeat).size();
			// A later execution in the same directory opens it to the command user again.
			deletePlanted(work);
			ExecutionResult later = seccomp.execute(ExecutionRequest.builder("/bin/sh", "-c", "sleep 2")
				.workingDirectory(work)
				.timeout(Duration.ofSeconds(30))
				.build());
			List<String> planted = planted(work);
			String report = String.format(
					"execution returned after %d ms (exit %d, timed out %s); 3 s later: %d heartbeat lines since, "
							+ "processes [pid state ppid uid] %s; files planted during a later execution (exit %d) "
							+ "in the same directory: %s",
					returnedAfter, result.exitCode(), result.timedOut(), linesAfter - linesAtReturn, left,
					later.exitCode(), planted);
			System.out.println(getClass().getSimpleName() + " " + ending + " " + zombies + " zombies: " + report);
			assertThat(left).as(report).isEmpty();
			assertThat(linesAfter).as(report).isEqualTo(linesAtReturn);
			assertThat(planted).as(report).isEmpty();
		}
		finally {
			MarkedProcesses.stopAndKill(marker);
		}
	}

	/**
	 * Observed: a directory of mode 2770 was 0770 after one execution, one of mode 1770
	 * was not reached (the first assertion failed). The grant goes through
	 * {@link java.nio.file.attribute.PosixFilePermission}, which has no set-user-ID,
	 * set-group-ID or sticky bit: both the grant and the restore write the mode without
	 * them. A shared directory whose set-group-ID bit makes new files inherit its group
	 * loses it after one execution; a sticky directory loses its protection against
	 * deletion by other users. (Observed before the fix: the grant now puts the whole
	 * mode back.)
	 */
	@Test
	void specialModeBitsOfTheWorkingDirectoryStay(@TempDir Path base) throws IOException {
		for (int mode : List.of(02770, 01770)) {
			Path work = Files.createDirectory(base.resolve("work-" + Integer.toOctalString(mode)));
			Files.setAttribute(work, "unix:mode", mode);
			int before = (Integer) Files.getAttribute(work, "unix:mode");
			ExecutionResult result = seccomp
				.execute(ExecutionRequest.builder("/bin/sh", "-c", "echo ok > file").workingDirectory(work).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			int after = (Integer) Files.getAttribute(work, "unix:mode");
			assertThat(Integer.toOctalString(after & 07777))
				.as("mode after the execution, before it %s", Integer.toOctalString(before & 07777))
				.isEqualTo(Integer.toOctalString(before & 07777));
		}
	}

	/**
	 * The grant is taken back after overlapping executions in one directory, the last of
	 * which times out, and after a command that tries to keep the directory (chmod,
	 * chgrp, a set-group-ID subdirectory); the command, which is not the owner, cannot
	 * change the directory's mode or group itself.
	 */
	@Test
	void theGrantIsTakenBackAfterOverlappingExecutionsAndTheCommandCannotKeepIt(@TempDir Path base)
			throws IOException, InterruptedException {
		Path work = Files.createDirectory(base.resolve("work"));
		Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx------"));
		PosixFileAttributes before = Files.readAttributes(work, PosixFileAttributes.class);
		CompletableFuture<ExecutionResult> longer = seccomp
			.executeAsync(ExecutionRequest.builder("/bin/sh", "-c", "trap '' TERM; sleep 4; echo late > late")
				.workingDirectory(work)
				.timeout(Duration.ofSeconds(2))
				.build());
		ExecutionResult keep = seccomp.execute(ExecutionRequest
			.builder("/bin/sh", "-c",
					"chmod 777 . ; echo chmod $?; chgrp 65534 . ; echo chgrp $?; chmod g+s . ; echo chmodgs $?; "
							+ "mkdir sub && chmod 2777 sub; echo sub $?; stat -c '%a %u %g' .")
			.workingDirectory(work)
			.build());
		ExecutionResult timedOut = longer.join();
		assertThat(timedOut.timedOut()).isTrue();
		PosixFileAttributes after = Files.readAttributes(work, PosixFileAttributes.class);
		assertThat(keep.stdoutText()).as(keep.stderrText()).contains("chmod 1").contains("chmodgs 1");
		assertThat(after.permissions()).as(keep.stdoutText()).isEqualTo(before.permissions());
		assertThat(after.group()).isEqualTo(before.group());
		assertThat(after.owner()).isEqualTo(before.owner());
		assertThat(keep.stdoutText()).contains("sub 1");
		assertThat((Integer) Files.getAttribute(work.resolve("sub"), "unix:mode") & 07000)
			.as("no set-group-ID directory")
			.isZero();
	}

	/**
	 * During an execution its working directory is open to the command user's group, and
	 * another execution of the same JVM runs with the same gid at the same time (its uid
	 * is its own, the group is shared). In the host view it could read the files in it
	 * (Landlock confined writes only; observed: it printed the victim's input file and
	 * listed its directory). In the system view, the default, Landlock refuses reading
	 * anything outside the command's own view, the other execution's directory included.
	 * (The metadata of its files stays in reach: the README's threat model.)
	 */
	@Test
	void aConcurrentExecutionCannotReadAnotherExecutionsWorkingDirectory(@TempDir Path base)
			throws IOException, InterruptedException {
		Path victim = Files.createDirectory(base.resolve("victim"));
		Path attacker = Files.createDirectory(base.resolve("attacker"));
		Files.writeString(victim.resolve("input.txt"), "the victim's input");
		CompletableFuture<ExecutionResult> running = seccomp.executeAsync(
				ExecutionRequest.builder("/bin/sh", "-c", "touch running; sleep 6").workingDirectory(victim).build());
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(victim.resolve("running")));
			ExecutionResult read = seccomp.execute(ExecutionRequest
				.builder("/bin/sh", "-c", "id -u; cat " + victim.resolve("input.txt") + "; ls " + victim)
				.workingDirectory(attacker)
				.build());
			System.out.println(getClass().getSimpleName() + " read: exit " + read.exitCode() + " stdout "
					+ read.stdoutText() + " stderr " + read.stderrText());
			assertThat(read.stdoutText()).as(read.stderrText()).doesNotContain("the victim's input");
		}
		finally {
			running.join();
		}
	}

	/**
	 * Writing into another execution's working directory, which is the command user's
	 * group's for the time of that execution, is refused by Landlock (writes only beneath
	 * the command's own working directory).
	 */
	@Test
	void aConcurrentExecutionCannotWriteIntoAnotherExecutionsWorkingDirectory(@TempDir Path base)
			throws IOException, InterruptedException {
		Path victim = Files.createDirectory(base.resolve("victim"));
		Path attacker = Files.createDirectory(base.resolve("attacker"));
		CompletableFuture<ExecutionResult> running = seccomp.executeAsync(
				ExecutionRequest.builder("/bin/sh", "-c", "touch running; sleep 6").workingDirectory(victim).build());
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(victim.resolve("running")));
			ExecutionResult write = seccomp.execute(ExecutionRequest
				.builder("/bin/sh", "-c",
						"echo planted > " + victim.resolve("planted") + "; echo $?; rm -f " + victim.resolve("running")
								+ "; echo $?; mkdir " + victim.resolve("dir") + "; echo $?")
				.workingDirectory(attacker)
				.build());
			assertThat(write.stdoutText().lines().toList()).as(write.stderrText()).hasSize(3).doesNotContain("0");
			assertThat(victim.resolve("planted")).doesNotExist();
			assertThat(victim.resolve("dir")).doesNotExist();
			assertThat(victim.resolve("running")).exists();
		}
		finally {
			running.join();
		}
	}

	/**
	 * System V shared memory and POSIX message queues are not separated by anything on
	 * the seccomp mechanism (no IPC namespace, Landlock does not cover them) and outlive
	 * the processes that made them: an execution leaves a segment and a queue of the
	 * command user behind, and a later execution reads and removes them. Observed: the
	 * segment was in {@code ipcs -m} after the first execution; the second read its text
	 * and removed it (IPC_RMID). The queue: the first execution's
	 * mq_open(O_CREAT|O_WRONLY) answered EACCES (Landlock refuses the open for writing),
	 * yet the queue existed: the second execution opened it for reading and unlinked it.
	 */
	@Test
	@Disabled("open finding: System V shared memory and POSIX message queues outlive the execution that made them "
			+ "and are read and removed by a later execution (no IPC namespace on the seccomp mechanism)")
	void ipcObjectsDoNotOutliveTheirExecutionNorReachTheNext(@TempDir Path base)
			throws IOException, InterruptedException {
		Path first = Files.createDirectory(base.resolve("first"));
		Path second = Files.createDirectory(base.resolve("second"));
		MechanismsWithoutMountsBreakInTests.copyResource("sysv-ipc.py", first);
		MechanismsWithoutMountsBreakInTests.copyResource("sysv-ipc.py", second);
		String key = String.valueOf(ThreadLocalRandom.current().nextInt(0x10000000, 0x7fffffff));
		try {
			ExecutionResult plant = seccomp
				.execute(ExecutionRequest.builder(PYTHON, "sysv-ipc.py", "plant", key, "left by the first execution")
					.workingDirectory(first)
					.build());
			String segments = run(List.of("ipcs", "-m"));
			String hexKey = String.format("0x%08x", Long.parseLong(key));
			boolean segmentLeft = segments.contains(hexKey);
			ExecutionResult read = seccomp
				.execute(ExecutionRequest.builder(PYTHON, "sysv-ipc.py", "read", key).workingDirectory(second).build());
			ExecutionResult remove = seccomp.execute(
					ExecutionRequest.builder(PYTHON, "sysv-ipc.py", "remove", key).workingDirectory(second).build());
			String report = String.format(
					"plant: %s%s; segment left after the first execution: %s; read: %s%s; " + "remove: %s%s",
					plant.stdoutText(), plant.stderrText(), segmentLeft, read.stdoutText(), read.stderrText(),
					remove.stdoutText(), remove.stderrText());
			System.out.println(getClass().getSimpleName() + " ipc: " + report);
			assertThat(segmentLeft).as(report).isFalse();
			assertThat(read.stdoutText()).as(report).doesNotContain("left by the first execution");
		}
		finally {
			run(List.of("ipcrm", "-M", key));
			run(List.of(PYTHON, "-c", "import ctypes; ctypes.CDLL(None).mq_unlink(b'/cave-" + key + "')"));
		}
	}

	/**
	 * Every route by which a command could change another process of the command user
	 * without a signal: the scheduling policy and parameters, the nice value (of the
	 * process, its group, the user), its resource limits, its I/O priority, memory advice
	 * and migration, kcmp, robust futexes, and its /proc files (oom_score_adj,
	 * timerslack_ns, comm, clear_refs, autogroup, sched, loginuid). The victim is a
	 * {@code sleep} of uid 65534 that the test starts outside the sandbox; the control
	 * shows the same script changes it from outside. The CPU affinity too
	 * ({@code sched_setaffinity(pid)}, refused since launcher 14 where there is no PID
	 * namespace).
	 */
	@Test
	void anotherProcessOfTheCommandUserCannotBeChangedWithoutASignal(@TempDir Path work)
			throws IOException, InterruptedException {
		MechanismsWithoutMountsBreakInTests.copyResource("same-uid-interference.py", work);
		// A session of its own: the control renices the victim's autogroup, otherwise
		// this JVM's session (the rest of the test run would be slowed down).
		List<String> victimCommand = new ArrayList<>(List.of("setsid"));
		victimCommand.addAll(NobodyCommandLines.asNobody(List.of("sleep", "120")));
		Process victim = new ProcessBuilder(victimCommand).start();
		try {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> MarkedProcesses.statusField(victim.pid(), "Uid:").startsWith(NOBODY + "\t"));
			String before = victimState(victim.pid());
			ExecutionResult result = seccomp
				.execute(ExecutionRequest.builder(PYTHON, "same-uid-interference.py", String.valueOf(victim.pid()))
					.workingDirectory(work)
					.build());
			String after = victimState(victim.pid());
			System.out.println(getClass().getSimpleName() + " same uid: " + result.stdoutText().replace('\n', ';')
					+ " victim before " + before + " after " + after);
			List<String> lines = result.stdoutText().lines().toList();
			assertThat(lines).as(result.stderrText()).hasSize(23);
			assertThat(lines).as(result.stdoutText()).noneMatch((line) -> line.endsWith(" ok"));
			assertThat(after).isEqualTo(before);
			assertThat(victim.isAlive()).isTrue();
			Path controlDirectory = Files.createDirectory(work.resolve("control"));
			MechanismsWithoutMountsBreakInTests.copyResource("same-uid-interference.py", controlDirectory);
			NobodyCommandLines.giveToNobody(controlDirectory);
			String control = run(NobodyCommandLines.asNobody(List.of(PYTHON,
					controlDirectory.resolve("same-uid-interference.py").toString(), String.valueOf(victim.pid()))));
			assertThat(control).as("control")
				.contains("sched_setscheduler ok")
				.contains("sched_setaffinity ok")
				.contains("proc_oom_score_adj ok");
			assertThat(victimState(victim.pid())).as("control").isNotEqualTo(before);
		}
		finally {
			victim.destroyForcibly();
		}
	}

	private static void deletePlanted(Path work) throws IOException {
		for (String name : planted(work)) {
			Files.deleteIfExists(work.resolve(name));
		}
	}

	private static List<String> planted(Path work) throws IOException {
		try (Stream<Path> files = Files.list(work)) {
			return files.map((file) -> file.getFileName().toString())
				.filter((name) -> name.startsWith("planted-by-"))
				.sorted()
				.toList();
		}
	}

	private static String victimState(long pid) throws IOException {
		String[] stat = Files.readString(Path.of("/proc/" + pid + "/stat")).replaceFirst("^.*\\) ", "").split(" ");
		// after the ")": state is field 0, nice 16, policy 38
		return "nice=" + stat[16] + " policy=" + stat[38] + " oom_score_adj="
				+ Files.readString(Path.of("/proc/" + pid + "/oom_score_adj")).trim() + " comm="
				+ Files.readString(Path.of("/proc/" + pid + "/comm")).trim() + " timerslack="
				+ Files.readString(Path.of("/proc/" + pid + "/timerslack_ns")).trim() + " "
				+ MarkedProcesses.statusField(pid, "Cpus_allowed_list:");
	}

	private static String run(List<String> command) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		process.getOutputStream().close();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(output).isTrue();
		return output;
	}

}
