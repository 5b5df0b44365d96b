package dev.cavesandbox;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.probe.HostFacts;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The resource limits, enforced for real on every mechanism: through the executor as the
 * JVM's user (root here), and through the verified command line run by an unprivileged
 * uid ({@link NobodyCommandLines}). Each test runs a command that would exceed a limit
 * and shows where it stops; process counts are taken from the host, in {@code /proc}. The
 * kernel exempts the host's root from the process limit: a root JVM's commands run as the
 * command user, in a user namespace of the sandbox's own or, on the seccomp mechanism, as
 * that uid of the host, and the limit holds on every mechanism.
 */
@EnabledOnOs(OS.LINUX)
class ResourceLimitsEnforcementTests {

	private static final String PYTHON = "/usr/bin/python3";

	private static final long MIB = 1024 * 1024;

	/**
	 * An unprivileged uid that no other process of this host has: without a user
	 * namespace (the seccomp mechanism) every task of the command's uid counts towards
	 * its process limit, so other tests' processes of nobody, which come and go, would
	 * move it. One per run, so that a run of these tests in another JVM at the same time
	 * does not share it either.
	 */
	private static final long UID = 61000L + ThreadLocalRandom.current().nextInt(1000);

	/**
	 * Forks for ever: each process keeps forking copies of itself, and a process whose
	 * fork fails does not give up (a shell would exit) but tries again shortly.
	 */
	private static final String FORK_BOMB = """
			import os, time
			while True:
			    try:
			        os.fork()
			    except OSError:
			        time.sleep(0.05)
			""";

	/**
	 * Starts 100 processes that live until the execution ends, no more: a fork that fails
	 * is tried again shortly (a shell would exit at the first failure), so the execution
	 * ends at its timeout either way.
	 */
	private static final String HUNDRED = """
			import os, time
			for _ in range(100):
			    while True:
			        try:
			            if os.fork() == 0:
			                while True:
			                    time.sleep(1)
			            break
			        except OSError:
			            time.sleep(0.05)
			while True:
			    time.sleep(1)
			""";

	private static final String ROOT_EXEMPT = LinuxProbe.NOT_GIVEN + "the process limit: the command runs as the "
			+ "host's root (uid 0)";

	/**
	 * A fork bomb of an unprivileged user, limited to 64 processes: never more than 64 of
	 * its processes exist at once (counted from the host while it runs), and no fewer
	 * than its share although ten other processes of its uid run outside the sandbox; it
	 * ends with its own timeout, leaves nothing behind, and the next command of that user
	 * runs.
	 */
	@ForEachLinuxMechanism
	void aForkBombOfAnUnprivilegedUserIsHeldAtItsProcessLimit(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		forkBombIsHeld(choice, directory, launcherDirectory, ResourceLimits.builder().processes(64).build(), 64);
	}

	/**
	 * The command gets no core dump, no real-time priority and no nice value below 0,
	 * whatever RLIMIT_RTPRIO and RLIMIT_NICE the JVM has (limits.conf, systemd's
	 * LimitRTPRIO=, a container's --ulimit): a command at SCHED_FIFO or nice -20 would
	 * take the CPU from the processes that tear it down. Runs where the JVM has one of
	 * them above 0 (raising needs CAP_SYS_RESOURCE, which this project's hosts lack:
	 * start the test JVM under {@code prlimit --nice=10 --rtprio=5}).
	 */
	@ForEachLinuxMechanism
	void theCommandGetsNoRealTimePriorityNiceValueOrCoreDumpFromTheJvmsLimits(MechanismChoice choice,
			@TempDir Path directory) throws Exception {
		Map<String, Long> jvm = HostFacts.hardLimits(Path.of("/proc/self/limits"));
		assumeTrue(jvm.getOrDefault("realtime priority", 0L) > 0 || jvm.getOrDefault("nice priority", 0L) > 0,
				() -> "the JVM's hard RLIMIT_RTPRIO and RLIMIT_NICE are 0 here: " + jvm);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, (settings) -> settings)) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder("sh", "-c", "cat /proc/self/limits > limits")
					.workingDirectory(directory)
					.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			Map<String, Long> command = HostFacts.hardLimits(directory.resolve("limits"));
			assertThat(command).as("the command's hard limits")
				.containsEntry("realtime priority", 0L)
				.containsEntry("nice priority", 0L)
				.containsEntry("core file size", 0L);
		}
	}

	/**
	 * The same fork bomb without any limit set: the default of 512 processes holds it.
	 */
	@ForEachLinuxMechanism
	void theDefaultProcessLimitHoldsAForkBomb(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		forkBombIsHeld(choice, directory, launcherDirectory, ResourceLimits.defaults(),
				ResourceLimits.DEFAULT_PROCESSES);
	}

	private static List<ProcessHandle> sleepers(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> Arrays.equals(process.info().arguments().orElse(null), new String[] { marker }))
			.toList();
	}

	private void forkBombIsHeld(MechanismChoice choice, Path directory, Path launcherDirectory, ResourceLimits limits,
			int processes) throws Exception {
		SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory, UID);
		Files.setAttribute(directory, "unix:uid", (int) UID);
		Path real = directory.toRealPath();
		String marker = "cave-sandbox-bomb-" + UUID.randomUUID();
		// Other processes of the same uid outside the sandbox and outside the JVM's
		// tree (setsid -f: their shell's parent exits; the shell reaps them), as
		// other programs of that user: they must not take the command's share of
		// its limit. (On the seccomp mechanism the processes the JVM started
		// itself, other executions among them, do.)
		String othersMarker = "59." + (100000 + ThreadLocalRandom.current().nextInt(900000));
		new ProcessBuilder(NobodyCommandLines.asUser(UID,
				List.of("/usr/bin/setsid", "-f", "/bin/sh", "-c",
						"for i in 1 2 3 4 5 6 7 8 9 10; do /bin/sleep " + othersMarker + " & done; wait")))
			.start()
			.waitFor();
		await().atMost(Duration.ofSeconds(30)).until(() -> sleepers(othersMarker).size() == 10);
		// After them: the JDK's reaper threads of those processes stay until they end.
		JvmState before = JvmState.now();
		long start = System.nanoTime();
		NobodyCommandLines.Run run;
		int largest;
		try (Census census = new Census(marker)) {
			List<String> command = NobodyCommandLines.asUser(UID,
					mechanism.commandLine(
							List.of("/usr/bin/timeout", "-s", "KILL", "5", PYTHON, "-c", FORK_BOMB, marker), real,
							false, false, limits));
			CompletableFuture<NobodyCommandLines.Run> bomb = CompletableFuture
				.supplyAsync(unchecked(() -> NobodyCommandLines.run(command, directory)));
			run = bomb.get();
			largest = census.largest();
		}
		finally {
			killMarked(marker);
			sleepers(othersMarker).forEach(ProcessHandle::destroyForcibly);
		}
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		System.out.printf("FIGURE fork bomb %s uid %d limit %d: largest %d, ended after %d ms%n", choice, UID,
				processes, largest, took.toMillis());
		assertThat(run.exitCode()).as("ended by its own timeout (SIGKILL): %s", run.output()).isEqualTo(128 + 9);
		assertThat(largest).as("the bomb's processes at once").isLessThanOrEqualTo(processes);
		// The bomb came near its limit: it would grow past any bound without it.
		// Not always to the last process (only bwrap's PID 1 and timeout(1) take a
		// share): on two cores hundreds of processes retrying their forks and the
		// census share the CPU: on the seccomp mechanism the default's bomb,
		// retrying every 10 ms, was seen at 458 to 462 of 512 when its 5 s ended
		// (the other mechanisms: 509 to 511); retrying every 50 ms, at 510.
		assertThat(largest).as("the bomb came near its limit").isGreaterThanOrEqualTo(processes * 3 / 4);
		await().atMost(Duration.ofSeconds(30)).until(() -> Census.count(marker) == 0);
		NobodyCommandLines.Run next = NobodyCommandLines.run(
				NobodyCommandLines.asUser(UID,
						mechanism.commandLine(List.of("/bin/sh", "-c", "echo next"), real, false, false, limits)),
				directory);
		assertThat(next.exitCode()).as(next.output()).isZero();
		assertThat(next.output()).isEqualTo("next\n");
		before.assertUnchanged(choice + " fork bomb");
	}

	/**
	 * A command of the JVM's user that starts 100 processes with a limit of 64. Where the
	 * JVM runs as the host's root, the kernel would not apply the limit (kernel/fork.c
	 * exempts uid 0): the command runs as the command user on every mechanism, and the
	 * probe's facts name no exemption. At most 64 start; the execution ends at its
	 * timeout, the JVM's threads and heap are what they were, and the next execution
	 * runs. (With command user 0 the exemption is stated:
	 * {@link LauncherCommandUserTests}.)
	 */
	@ForEachLinuxMechanism
	void theProcessLimitHoldsForTheJvmsUserUnlessTheFactsSayItIsNotGiven(MechanismChoice choice,
			@TempDir Path directory) throws Exception {
		ResourceLimits limits = ResourceLimits.builder().processes(64).build();
		String marker = "cave-sandbox-hundred-" + UUID.randomUUID();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(limits)
					.timeout(Duration.ofSeconds(4))
					.killGracePeriod(Duration.ofSeconds(1)))) {
			List<String> facts = LinuxMechanisms
				.verified(SandboxSettings.builder()
					.mechanism(choice)
					.limits(limits)
					.timeout(Duration.ofSeconds(4))
					.killGracePeriod(Duration.ofSeconds(1))
					.build())
				.verified();
			boolean exempt = facts.stream().anyMatch((fact) -> fact.startsWith(ROOT_EXEMPT));
			assertThat(exempt).as("no mechanism leaves a root JVM's commands root: %s", facts).isFalse();
			assertThat(shell(executor, directory, "true").exitCode()).isZero();
			JvmState before = JvmState.now();
			ExecutionResult result;
			int largest;
			try (Census census = new Census(marker)) {
				result = executor.execute(
						ExecutionRequest.builder(PYTHON, "-c", HUNDRED, marker).workingDirectory(directory).build());
				largest = census.largest();
			}
			finally {
				killMarked(marker);
			}
			System.out.printf("FIGURE 100 processes %s limit 64, JVM uid %s: largest %d, wall %d ms%n", choice,
					hostRoot() ? "0 (host root)" : "not 0", largest, result.wallTime().toMillis());
			assertThat(result.timedOut()).as("%s", result).isTrue();
			assertThat(largest).isBetween(32, 64);
			await().atMost(Duration.ofSeconds(30)).until(() -> Census.count(marker) == 0);
			ExecutionResult next = shell(executor, directory, "echo next");
			assertThat(next.exitCode()).isZero();
			assertThat(next.stdoutText()).isEqualTo("next\n");
			before.assertUnchanged(choice + " hundred processes");
		}
	}

	/**
	 * With 256 MB of memory a program allocating 1 GiB fails at once (MemoryError, well
	 * within its timeout), while a child JVM with {@code -Xmx64m} starts, and runs a
	 * program.
	 */
	@ForEachLinuxMechanism
	void aMemoryHogFailsFastWhileAChildJvmStillRuns(MechanismChoice choice, @TempDir Path directory)
			throws IOException {
		Files.writeString(directory.resolve("Hello.java"), HELLO);
		ResourceLimits limits = ResourceLimits.builder().memory(256 * MIB).build();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(limits).timeout(Duration.ofSeconds(60)))) {
			ExecutionResult hog = run(executor, directory, PYTHON, "-c", "b = bytearray(1 << 30)");
			System.out.printf("FIGURE memory %s: 1 GiB allocation exit %d after %d ms%n", choice, hog.exitCode(),
					hog.wallTime().toMillis());
			assertThat(hog.timedOut()).isFalse();
			assertThat(hog.exitCode()).as("%s", hog).isEqualTo(1);
			assertThat(hog.stderrText()).contains("MemoryError");
			assertChildJvmRuns(executor, directory, "-Xmx64m");
		}
	}

	/** The same as an unprivileged user, through the verified command line. */
	@ForEachLinuxMechanism
	void aMemoryHogOfAnUnprivilegedUserFailsFastWhileAChildJvmStillRuns(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		Files.writeString(directory.resolve("Hello.java"), HELLO);
		Unprivileged user = new Unprivileged(choice, directory, launcherDirectory,
				ResourceLimits.builder().memory(256 * MIB).build());
		NobodyCommandLines.Run hog = user.run(PYTHON, "-c", "b = bytearray(1 << 30)");
		assertThat(hog.exitCode()).as(hog.output()).isEqualTo(1);
		assertThat(hog.output()).contains("MemoryError");
		NobodyCommandLines.Run version = user.run(java(), "-Xmx64m", "-version");
		assertThat(version.exitCode()).as(version.output()).isZero();
		assertThat(version.output()).contains("OpenJDK");
		NobodyCommandLines.Run hello = user.run(java(), "-Xmx64m", "Hello.java");
		assertThat(hello.exitCode()).as(hello.output()).isZero();
		assertThat(hello.output()).contains("hello from a child JVM");
	}

	/**
	 * With a file size of 1 MB a writer stops at exactly 1 MiB and dies of
	 * {@code SIGXFSZ}.
	 */
	@ForEachLinuxMechanism
	void aWriterStopsAtTheFileSizeLimit(MechanismChoice choice, @TempDir Path directory) throws IOException {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(ResourceLimits.builder().fileSize(MIB).build())
					.timeout(Duration.ofSeconds(60)))) {
			ExecutionResult result = shell(executor, directory, "exec head -c 4194304 /dev/zero > big");
			assertThat(result.timedOut()).isFalse();
			assertThat(result.exitCode()).as("%s", result).isEqualTo(128 + 25);
			assertThat(Files.size(directory.resolve("big"))).isEqualTo(MIB);
		}
	}

	/** The same as an unprivileged user. */
	@ForEachLinuxMechanism
	void aWriterOfAnUnprivilegedUserStopsAtTheFileSizeLimit(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		Unprivileged user = new Unprivileged(choice, directory, launcherDirectory,
				ResourceLimits.builder().fileSize(MIB).build());
		NobodyCommandLines.Run run = user.run("/bin/sh", "-c", "exec head -c 4194304 /dev/zero > big");
		assertThat(run.exitCode()).as(run.output()).isEqualTo(128 + 25);
		assertThat(Files.size(directory.resolve("big"))).isEqualTo(MIB);
	}

	/**
	 * With one second of CPU time a busy loop dies of {@code SIGXCPU}, well before its 30
	 * s timeout.
	 */
	@ForEachLinuxMechanism
	void aBusyLoopStopsAtTheCpuTimeLimit(MechanismChoice choice, @TempDir Path directory) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build())
					.timeout(Duration.ofSeconds(30)))) {
			assertThat(LinuxMechanisms
				.verified(SandboxSettings.builder()
					.mechanism(choice)
					.limits(ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build())
					.timeout(Duration.ofSeconds(30))
					.build())
				.verified()).anyMatch((fact) -> fact.startsWith("limits: ") && fact.contains(", cpu-time 1s, "));
			ExecutionResult result = shell(executor, directory, "while :; do :; done");
			System.out.printf("FIGURE cpu %s: busy loop exit %d after %d ms%n", choice, result.exitCode(),
					result.wallTime().toMillis());
			assertThat(result.timedOut()).as("%s", result).isFalse();
			assertThat(result.exitCode()).as("%s", result).isEqualTo(128 + 24);
		}
	}

	/** The same as an unprivileged user. */
	@ForEachLinuxMechanism
	void aBusyLoopOfAnUnprivilegedUserStopsAtTheCpuTimeLimit(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		Unprivileged user = new Unprivileged(choice, directory, launcherDirectory,
				ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build());
		NobodyCommandLines.Run run = user.run("/bin/sh", "-c", "while :; do :; done");
		assertThat(run.exitCode()).as(run.output()).isEqualTo(128 + 24);
	}

	/**
	 * With 32 open files a program opening 100 stops with {@code EMFILE} before the 32nd
	 * (standard streams and the interpreter's own descriptors count).
	 */
	@ForEachLinuxMechanism
	void openingFilesStopsAtTheOpenFilesLimit(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		ResourceLimits limits = ResourceLimits.builder().openFiles(32).build();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(limits).timeout(Duration.ofSeconds(60)))) {
			assertOpenedAtMost32(run(executor, directory, PYTHON, "-c", OPEN_100).stdoutText());
		}
		NobodyCommandLines.Run run = new Unprivileged(choice, directory, launcherDirectory, limits).run(PYTHON, "-c",
				OPEN_100);
		assertOpenedAtMost32(run.output());
	}

	private static void assertOpenedAtMost32(String output) {
		String[] fields = output.trim().split(" ");
		assertThat(fields).as(output).hasSize(2);
		assertThat(fields[1]).as("errno EMFILE: %s", output).isEqualTo("24");
		assertThat(Integer.parseInt(fields[0])).as(output).isBetween(16, 32);
	}

	/**
	 * With a tmpfs size of 16 MB, writes to {@code /tmp} stop at 16 MiB ({@code ENOSPC})
	 * on the mechanisms that hide it with a private tmpfs; the others have no such tmpfs,
	 * and their facts say that they do not hide directories.
	 */
	@ForEachLinuxMechanism
	void writesToAPrivateTmpfsStopAtItsSize(MechanismChoice choice, @TempDir Path directory) {
		tmpfsFillStops(choice, directory, ResourceLimits.builder().tmpfsSize(16 * MIB).build(), 16 * MIB, 64);
	}

	/** The same without any limit set: the default of 256 MiB holds. */
	@ForEachLinuxMechanism
	void theDefaultTmpfsSizeHoldsATmpfsFill(MechanismChoice choice, @TempDir Path directory) {
		tmpfsFillStops(choice, directory, ResourceLimits.defaults(), ResourceLimits.DEFAULT_TMPFS_SIZE, 300);
	}

	private static void tmpfsFillStops(MechanismChoice choice, Path directory, ResourceLimits limits, long size,
			int mebibytes) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(limits).timeout(Duration.ofSeconds(60)))) {
			if (!LinuxMechanisms.namespaces(choice).contains(LinuxNamespace.MOUNT)) {
				assertThat(LinuxMechanisms
					.verified(SandboxSettings.builder()
						.mechanism(choice)
						.limits(limits)
						.timeout(Duration.ofSeconds(60))
						.build())
					.verified()).anyMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN + "hidden directories"));
				return;
			}
			ExecutionResult result = shell(executor, directory,
					"dd if=/dev/zero of=/tmp/fill bs=1048576 count=" + mebibytes + " 2>&1; stat -c %s /tmp/fill");
			assertThat(result.stdoutText()).as("%s", result)
				.contains("No space left on device")
				.endsWith("\n" + size + "\n");
		}
	}

	/**
	 * Under the defaults (no limit set) ordinary programs run: sh, python3 and a child
	 * JVM with its default heap.
	 */
	@ForEachLinuxMechanism
	void ordinaryProgramsRunUnderTheDefaults(MechanismChoice choice, @TempDir Path directory) throws IOException {
		Files.writeString(directory.resolve("Hello.java"), HELLO);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.timeout(Duration.ofSeconds(60)))) {
			assertThat(LinuxMechanisms
				.verified(SandboxSettings.builder().mechanism(choice).timeout(Duration.ofSeconds(60)).build())
				.verified())
				.anyMatch((fact) -> fact.startsWith("limits: memory 4 GiB, processes 512")
						&& fact.contains(", cpu-time none, file-size none, open-files ")
						&& fact.endsWith(", core files 0"));
			ExecutionResult sh = shell(executor, directory, "echo sh");
			assertThat(sh.stdoutText()).as("%s", sh).isEqualTo("sh\n");
			ExecutionResult python = run(executor, directory, PYTHON, "-c", "print(sum(range(10)))");
			assertThat(python.stdoutText()).as("%s", python).isEqualTo("45\n");
			assertChildJvmRuns(executor, directory);
		}
	}

	/**
	 * The command cannot raise any of its hard limits, whether the JVM's user is root
	 * (the launcher drops every capability) or not; lowering them works.
	 */
	@ForEachLinuxMechanism
	void theCommandCannotRaiseItsHardLimits(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		ResourceLimits limits = new ResourceLimits(256 * MIB, 64, Duration.ofSeconds(30), MIB, 32, 16 * MIB);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.limits(limits).timeout(Duration.ofSeconds(60)))) {
			assertEveryRaiseRefused(run(executor, directory, PYTHON, "-c", RAISE).stdoutText());
		}
		assertEveryRaiseRefused(
				new Unprivileged(choice, directory, launcherDirectory, limits).run(PYTHON, "-c", RAISE).output());
	}

	/**
	 * A value that is not a positive decimal is refused by the launcher before anything
	 * is set up (exit 125, with the reason); a value above the JVM's own hard limit (more
	 * open files than the JVM may have) becomes that hard limit, which is stricter, and
	 * the command runs.
	 */
	@ForEachLinuxMechanism
	void badLimitsAreSetUpFailuresAndLimitsAboveTheJvmsOwnBecomeIt(MechanismChoice choice, @TempDir Path directory)
			throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		assertThat(mechanism).isNotNull();
		for (String value : List.of("0", "-1", "1k", "", "99999999999999999999")) {
			Process process = new ProcessBuilder(mechanism.launcher().path().toString(), "exec", "--limit-cpu", value,
					"--", "/bin/echo", "ran")
				.redirectErrorStream(true)
				.start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(process.waitFor()).as(output).isEqualTo(125);
			assertThat(output).startsWith("cave-sandbox-launcher: --limit-cpu ").doesNotContain("ran");
		}
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice,
				(settings) -> settings.timeout(Duration.ofSeconds(60)))) {
			ExecutionRequest request = ExecutionRequest.builder("sh", "-c", "ulimit -n; ulimit -Hn")
				.workingDirectory(directory)
				.limits(ResourceLimits.builder().openFiles(Integer.MAX_VALUE).build())
				.build();
			Long jvmHard = HostFacts.hardLimits(Path.of("/proc/self/limits")).get("open files");
			assertThat(jvmHard).isNotNull().isLessThan(Integer.MAX_VALUE);
			ExecutionResult result = executor.execute(request);
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText().lines()).containsExactly(jvmHard.toString(), jvmHard.toString());
		}
	}

	private static void assertEveryRaiseRefused(String output) {
		assertThat(output.lines().toList()).as(output)
			.containsExactly("RLIMIT_DATA raise refused lower allowed", "RLIMIT_NPROC raise refused lower allowed",
					"RLIMIT_CPU raise refused lower allowed", "RLIMIT_FSIZE raise refused lower allowed",
					"RLIMIT_NOFILE raise refused lower allowed", "RLIMIT_CORE raise refused lower allowed");
	}

	private static final String HELLO = """
			public class Hello {
				public static void main(String[] args) {
					System.out.println("hello from a child JVM");
				}
			}
			""";

	private static final String OPEN_100 = """
			import errno
			files = []
			try:
			    for i in range(100):
			        files.append(open("/dev/null"))
			    print(len(files), 0)
			except OSError as e:
			    print(len(files), e.errno)
			""";

	/** Tries to raise each hard limit by one, then to lower the soft limit by half. */
	private static final String RAISE = """
			import resource
			for name in ("RLIMIT_DATA", "RLIMIT_NPROC", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"):
			    which = getattr(resource, name)
			    soft, hard = resource.getrlimit(which)
			    try:
			        resource.setrlimit(which, (soft, hard + 1))
			        raised = "allowed" if resource.getrlimit(which)[1] == hard + 1 else "ignored"
			    except (ValueError, OSError):
			        raised = "refused"
			    try:
			        resource.setrlimit(which, (soft // 2, hard))
			        lowered = "allowed"
			    except (ValueError, OSError):
			        lowered = "refused"
			    print(name, "raise", raised, "lower", lowered)
			""";

	private static void assertChildJvmRuns(IsolatedExecutor executor, Path directory, String... options) {
		List<String> version = new ArrayList<>(List.of(java()));
		version.addAll(List.of(options));
		version.add("-version");
		ExecutionResult result = executor
			.execute(ExecutionRequest.builder(version.toArray(String[]::new)).workingDirectory(directory).build());
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stderrText()).contains("OpenJDK");
		List<String> hello = new ArrayList<>(version.subList(0, version.size() - 1));
		hello.add("Hello.java");
		result = executor
			.execute(ExecutionRequest.builder(hello.toArray(String[]::new)).workingDirectory(directory).build());
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdoutText()).isEqualTo("hello from a child JVM\n");
	}

	/** Whether this JVM runs as uid 0 of the initial user namespace. */
	private static boolean hostRoot() throws IOException {
		return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0
				&& LinuxProbe.initialUserNamespace();
	}

	/** The JVM running these tests, as the child JVM. */
	private static String java() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	private static ExecutionResult shell(IsolatedExecutor executor, Path directory, String script) {
		return run(executor, directory, "/bin/sh", "-c", script);
	}

	private static ExecutionResult run(IsolatedExecutor executor, Path directory, String... argv) {
		return executor.execute(ExecutionRequest.builder(argv).workingDirectory(directory).build());
	}

	private static <T> Supplier<T> unchecked(Callable<T> callable) {
		return () -> {
			try {
				return callable.call();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		};
	}

	@FunctionalInterface
	private interface Callable<T> {

		T call() throws Exception;

	}

	/**
	 * SIGKILL every process still running the marked script (a failed test's leftovers).
	 */
	private static void killMarked(String marker) {
		for (long pid : Census.marked(marker)) {
			ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * An unprivileged uid's runs of one mechanism's verified command line with limits, in
	 * a working directory it owns.
	 */
	private static final class Unprivileged {

		private final SandboxMechanism mechanism;

		private final Path directory;

		private final ResourceLimits limits;

		Unprivileged(MechanismChoice choice, Path directory, Path launcherDirectory, ResourceLimits limits)
				throws IOException {
			this.mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory, UID);
			Files.setAttribute(directory, "unix:uid", (int) UID);
			this.directory = directory;
			this.limits = limits;
		}

		NobodyCommandLines.Run run(String... argv) throws IOException, InterruptedException {
			return NobodyCommandLines.run(NobodyCommandLines.asUser(UID,
					this.mechanism.commandLine(List.of(argv), this.directory.toRealPath(), false, false, this.limits)),
					this.directory);
		}

	}

	/**
	 * The processes (their tasks) that run a marked script ({@code /proc/PID/cmdline} is
	 * {@code sh -c SCRIPT MARKER} or {@code python3 -c SCRIPT MARKER}), sampled from the
	 * host by a thread of its own until closed.
	 */
	private static final class Census implements AutoCloseable {

		private final String marker;

		private final AtomicInteger largest = new AtomicInteger();

		private final Thread thread;

		private volatile boolean running = true;

		Census(String marker) {
			this.marker = marker;
			this.thread = new Thread(this::sample, "census-" + marker);
			this.thread.setDaemon(true);
			this.thread.start();
		}

		private void sample() {
			while (this.running) {
				this.largest.accumulateAndGet(count(this.marker), Math::max);
			}
		}

		int largest() {
			return this.largest.get();
		}

		@Override
		public void close() throws InterruptedException {
			this.running = false;
			this.thread.join();
		}

		/** The tasks (threads included) of the marked processes. */
		static int count(String marker) {
			int tasks = 0;
			for (long pid : marked(marker)) {
				tasks += threads(pid);
			}
			return tasks;
		}

		static List<Long> marked(String marker) {
			List<Long> pids = new ArrayList<>();
			try (DirectoryStream<Path> proc = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
				for (Path process : proc) {
					try {
						String[] argv = new String(Files.readAllBytes(process.resolve("cmdline")),
								StandardCharsets.UTF_8)
							.split("\0");
						if (argv.length == 4 && argv[1].equals("-c") && argv[3].equals(marker)) {
							pids.add(Long.parseLong(process.getFileName().toString()));
						}
					}
					catch (NoSuchFileException ex) {
						// ended meanwhile
					}
					catch (IOException ex) {
						// ended meanwhile (ESRCH)
					}
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
			return pids;
		}

		private static int threads(long pid) {
			try {
				return Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))
					.stream()
					.filter((line) -> line.startsWith("Threads:"))
					.mapToInt((line) -> Integer.parseInt(line.substring(8).trim()))
					.findFirst()
					.orElse(0);
			}
			catch (IOException ex) {
				return 0;
			}
		}

	}

	/** The JVM's live threads and its heap after a collection. */
	private record JvmState(int threads, long heap) {

		static JvmState now() {
			System.gc();
			return new JvmState(ManagementFactory.getThreadMXBean().getThreadCount(),
					ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
		}

		/**
		 * Wait until the JVM has no more than a few threads more than before (the
		 * executor's readers end shortly after an execution) and its heap after a
		 * collection is within 64 MiB of before.
		 */
		void assertUnchanged(String what) {
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(ManagementFactory.getThreadMXBean().getThreadCount())
					.isLessThanOrEqualTo(this.threads + 2));
			JvmState after = now();
			System.out.printf("FIGURE JVM %s: threads %d -> %d, heap %d KiB -> %d KiB%n", what, this.threads,
					after.threads(), this.heap / 1024, after.heap() / 1024);
			assertThat(after.heap()).isLessThanOrEqualTo(this.heap + 64 * MIB);
		}

	}

}
