package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Break-in attempts on the two mechanisms without a mount namespace ({@code namespaces}
 * and {@code seccomp}), whose boundary rests on the launcher's seccomp filter, Landlock
 * and (for {@code seccomp}) the launcher as a child subreaper instead of a mount and PID
 * namespace. Each test shows what the command attempts from inside and asserts the
 * boundary; where the same attempt outside the sandbox is needed to show the check can
 * fail, it has an unisolated control. Everything touches this machine only: no socket is
 * connected, and signals go to a victim process the test starts (signal 0 alone to the
 * JVM).
 */
@EnabledOnOs(OS.LINUX)
class MechanismsWithoutMountsBreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

	private static final String ATTEMPTS = "mechanisms-without-mounts-attempts.py";

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> executors = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor
			.unisolated(settings(MechanismChoice.NONE).mode(SandboxMode.FALLBACK).build());
	}

	@AfterAll
	static void closeExecutors() {
		executors.values().forEach(ProcessIsolatedExecutor::close);
		unisolated.close();
	}

	static Stream<MechanismChoice> mechanisms() {
		return Stream.of(MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);
	}

	private static SandboxSettings.Builder settings(MechanismChoice mechanism) {
		return LinuxMechanisms.builder(mechanism)
			.timeout(Duration.ofSeconds(30))
			.killGracePeriod(Duration.ofSeconds(1));
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.computeIfAbsent(mechanism, (key) -> {
			SandboxSettings settings = settings(key).build();
			return ProcessIsolatedExecutor.isolated(settings, LinuxMechanisms.verified(settings));
		});
	}

	private static ExecutionResult shell(IsolatedExecutor executor, Path directory, String script) {
		return executor.execute(ExecutionRequest.builder("/bin/sh", "-c", script).workingDirectory(directory).build());
	}

	/**
	 * The ways a file outside the working directory could be brought under it or written
	 * through it: a hard link into it ({@code EXDEV}: Landlock's REFER), a write through
	 * a symbolic link, a rename into it, a truncate of the outside path, a write to a
	 * host FIFO (which bwrap's and unshare's read-only mounts leave open). The control
	 * shows each one works outside the sandbox.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void filesOutsideTheWorkingDirectoryCannotBeLinkedInOrWrittenThroughIt(MechanismChoice mechanism,
			@TempDir Path base) throws IOException, InterruptedException {
		Path work = Files.createDirectory(base.resolve("work"));
		Path outside = Files.createDirectory(base.resolve("outside"));
		Path target = Files.writeString(outside.resolve("target"), "original");
		Path moved = Files.writeString(outside.resolve("moved"), "moved");
		Path fifo = outside.resolve("fifo");
		assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
		String script = "ln '" + target + "' hard; echo link $?; ln -s '" + target + "' soft; "
				+ "(echo through >> soft) 2>/dev/null; echo symlink $?; mv '" + moved + "' moved; echo mv $?; "
				+ "truncate -s 0 '" + target + "'; echo truncate $?; " + "(exec 3<>'" + fifo
				+ "' && echo fifo >&3) 2>/dev/null; echo fifo $?";
		ExecutionResult result = shell(isolated(mechanism), work, script);
		assertThat(result.stdoutText()).as(result.stderrText())
			.isEqualTo("link 1\nsymlink 2\nmv 1\ntruncate 1\nfifo 2\n");
		assertThat(Files.readString(target)).isEqualTo("original");
		assertThat(Files.exists(moved)).isTrue();
		ExecutionResult control = shell(unisolated, Files.createDirectory(base.resolve("control")), script);
		assertThat(control.stdoutText()).isEqualTo("link 0\nsymlink 0\nmv 0\ntruncate 0\nfifo 0\n");
	}

	/**
	 * {@code prlimit(2)} on another process needs only the same uid and gid, and Landlock
	 * has no hook for it: the command would lower the JVM's limits (open files, address
	 * space, CPU time: a JVM past its CPU limit is killed by the kernel). The limit tried
	 * here, the POSIX message queue bytes, is one the JVM does not use; the test puts
	 * back whatever the command changed.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void resourceLimitsOfTheJvmStay(MechanismChoice mechanism, @TempDir Path work)
			throws IOException, InterruptedException {
		long jvm = ProcessHandle.current().pid();
		String before = messageQueueLimit();
		try {
			ExecutionResult result = shell(isolated(mechanism), work,
					"prlimit --pid " + jvm + " --msgqueue=4242:; echo prlimit $?");
			assertThat(result.stdoutText()).startsWith("prlimit ");
			assertThat(messageQueueLimit()).as("%s: %s", result.stdoutText(), result.stderrText()).isEqualTo(before);
		}
		finally {
			String[] limits = before.trim().split("\\s+");
			Process restore = new ProcessBuilder("prlimit", "--pid", String.valueOf(jvm),
					"--msgqueue=" + limits[0] + ":" + limits[1])
				.inheritIO()
				.start();
			assertThat(restore.waitFor(30, TimeUnit.SECONDS)).isTrue();
		}
	}

	/**
	 * For a JVM of an unprivileged user the command's Landlock domain leaves more than
	 * {@code prlimit(2)}: the nice value and the I/O priority of a process of the same
	 * user outside the domain (the JVM: starved, idle I/O) and its scheduling policy
	 * ({@code SCHED_IDLE}: starved too; found by a break-in attempt), which the
	 * launcher's filter refuses beyond the caller itself. A {@code sleep} of nobody
	 * stands in for nobody's JVM; the command runs as nobody on the mechanism's real
	 * command line. The CPU affinity too (pinned to one CPU crowded by the command, the
	 * JVM would tear the sandbox down late): {@code sched_setaffinity(pid)} is refused
	 * where there is no PID namespace, and on {@code namespaces} the pid names nothing.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void schedulingAndLimitsOfAnotherProcessOfTheUserStayForAnUnprivilegedUser(MechanismChoice mechanism,
			@TempDir Path base) throws IOException, InterruptedException {
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		SandboxMechanism nobody = NobodyCommandLines.mechanism(mechanism,
				Files.createDirectory(base.resolve("launcher")));
		Path work = Files.createDirectory(base.resolve("work"));
		NobodyCommandLines.giveToNobody(work);
		Process victim = new ProcessBuilder(NobodyCommandLines.asNobody(List.of("sleep", "300"))).start();
		try {
			long pid = victim.pid();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> Files.readString(Path.of("/proc/" + pid + "/status")).contains("\nUid:\t65534"));
			String before = schedulingAndLimits(pid);
			String script = "renice -n 10 -p " + pid + "; echo renice $?; ionice -c 3 -p " + pid
					+ "; echo ionice $?; chrt -i -p 0 " + pid + "; echo chrt $?; prlimit --pid " + pid
					+ " --msgqueue=100:; echo prlimit $?; taskset -p 1 " + pid + "; echo taskset $?";
			NobodyCommandLines.Run run = NobodyCommandLines.run(
					NobodyCommandLines.asNobody(
							nobody.commandLine(List.of("/bin/sh", "-c", script), work.toRealPath(), false, false)),
					work);
			assertThat(run.output()).contains("taskset ");
			assertThat(schedulingAndLimits(pid)).as(run.output()).isEqualTo(before);
			NobodyCommandLines.Run control = NobodyCommandLines
				.run(NobodyCommandLines.asNobody(List.of("/bin/sh", "-c", script)), work);
			assertThat(schedulingAndLimits(pid))
				.as("control: the same script without the sandbox; %s", control.output())
				.contains("nice 10, policy 5, Cpus_allowed_list:\t0, ")
				.isNotEqualTo(before);
		}
		finally {
			victim.destroyForcibly();
		}
	}

	/**
	 * The nice value, scheduling policy, CPU affinity, I/O priority and message-queue
	 * limit of a process.
	 */
	private static String schedulingAndLimits(long pid) throws IOException, InterruptedException {
		String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
		String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
		String nice = fields[16];
		String policy = fields[38];
		String affinity = Files.readAllLines(Path.of("/proc/" + pid + "/status"))
			.stream()
			.filter((line) -> line.startsWith("Cpus_allowed_list"))
			.findFirst()
			.orElseThrow();
		Process ionice = new ProcessBuilder("ionice", "-p", String.valueOf(pid)).redirectErrorStream(true).start();
		String priority = new String(ionice.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
		assertThat(ionice.waitFor(30, TimeUnit.SECONDS)).isTrue();
		String limit = Files.readAllLines(Path.of("/proc/" + pid + "/limits"))
			.stream()
			.filter((line) -> line.startsWith("Max msgqueue size"))
			.findFirst()
			.orElseThrow();
		return "nice " + nice + ", policy " + policy + ", " + affinity + ", io " + priority + ", " + limit;
	}

	private static String messageQueueLimit() throws IOException {
		return Files.readAllLines(Path.of("/proc/self/limits"))
			.stream()
			.filter((line) -> line.startsWith("Max msgqueue size"))
			.findFirst()
			.orElseThrow()
			.substring("Max msgqueue size".length());
	}

	/**
	 * The containing launcher of the seccomp mechanism is a process of the JVM's user
	 * outside the command's Landlock domain, so signals cannot reach it, but its resource
	 * limits can be tried: with its descriptors limited to the three it holds, a launcher
	 * that found the tree by listing /proc (as before v10) could not, and a daemon of the
	 * command in a session of its own would be left to init. The daemon here is double
	 * forked, so that it is orphaned, in a session of its own where the mechanism gives
	 * one: the namespaces mechanism's PID namespace takes it down. The seccomp mechanism
	 * refuses the new session ({@link NewSession}, which the command's stderr shows), so
	 * the daemon stays in the command's process group, which {@code contain} kills with
	 * one signal, needing no descriptor.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void aDaemonDiesWithItsExecutionEvenWhenTheCommandLimitsItsParent(MechanismChoice mechanism, @TempDir Path work) {
		String marker = "cave-daemon-" + UUID.randomUUID();
		boolean refused = NewSession.refused(mechanism);
		String script = "prlimit --pid $PPID --nofile=3:3; echo prlimit $?; ( "
				+ NewSession.setsid(refused,
						"sh -c 'echo > running; while :; do sleep 1; done' " + marker + " </dev/null >/dev/null 2>&1")
				+ " & ); while [ ! -e running ]; do sleep 0.1; done; echo started";
		try {
			ExecutionResult result = shell(isolated(mechanism), work, script);
			assertThat(result.stdoutText()).as(result.stderrText()).contains("started");
			NewSession.assertAttempted(refused, result.stderrText());
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(100))
				.untilAsserted(() -> assertThat(processesNamed(marker))
					.as("exit %d, stderr %s", result.exitCode(), result.stderrText())
					.isEmpty());
		}
		finally {
			processesNamed(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	private static List<ProcessHandle> processesNamed(String marker) {
		return ProcessHandle.allProcesses()
			.filter(ProcessHandle::isAlive)
			.filter((process) -> process.info().arguments().map(List::of).orElse(List.of()).contains(marker)
					|| process.info().commandLine().orElse("").contains(marker))
			.toList();
	}

	/**
	 * A tree with a child subreaper of its own holding a double-forked daemon, a stopped
	 * process, a zombie, a process without a parent-death signal and a spawned one: none
	 * of it outlives its execution, whether the command exits, runs into its timeout or
	 * is cancelled. The daemon attempts a session of its own ({@code os.setsid()}), which
	 * the seccomp mechanism refuses ({@link NewSession}) and the namespaces mechanism
	 * gives: the tree reports which, and the daemon runs either way.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void anAwkwardTreeDiesWithItsExecution(MechanismChoice mechanism, @TempDir Path work)
			throws IOException, InterruptedException {
		for (String ending : List.of("exit", "stay")) {
			String marker = "cave-tree-" + UUID.randomUUID();
			copyResource("awkward-tree.py", work);
			long end = System.currentTimeMillis() / 1000 + 120;
			try {
				ExecutionResult result = isolated(mechanism)
					.execute(ExecutionRequest.builder(PYTHON, "awkward-tree.py", marker, String.valueOf(end), ending)
						.workingDirectory(work)
						.timeout(Duration.ofSeconds(5))
						.build());
				assertThat(result.stdoutText()).as(result.stderrText())
					.contains(NewSession.refused(mechanism) ? "daemon: setsid refused" : "daemon: own session")
					.contains("tree started");
				assertThat(result.timedOut()).isEqualTo(ending.equals("stay"));
				await().atMost(Duration.ofSeconds(30))
					.pollInterval(Duration.ofMillis(200))
					.untilAsserted(() -> assertThat(processesNamed(marker)).as(ending).isEmpty());
			}
			finally {
				stopAndKill(marker);
			}
		}
		String cancelled = "cave-tree-" + UUID.randomUUID();
		try {
			CompletableFuture<ExecutionResult> execution = isolated(mechanism)
				.executeAsync(ExecutionRequest
					.builder(PYTHON, "awkward-tree.py", cancelled,
							String.valueOf(System.currentTimeMillis() / 1000 + 120), "stay")
					.workingDirectory(work)
					.build());
			// the tree's five lingering processes and the spawned one, besides the
			// wrappers
			await().atMost(Duration.ofSeconds(30))
				.until(() -> processesNamed(cancelled).stream()
					.filter((process) -> process.info().command().orElse("").contains("python"))
					.count() >= 5);
			execution.cancel(true);
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(200))
				.untilAsserted(() -> assertThat(processesNamed(cancelled)).as("cancelled").isEmpty());
		}
		finally {
			stopAndKill(cancelled);
		}
		String marker = "cave-tree-" + UUID.randomUUID();
		try {
			ExecutionResult control = unisolated.execute(
					ExecutionRequest
						.builder(PYTHON, "awkward-tree.py", marker,
								String.valueOf(System.currentTimeMillis() / 1000 + 60), "exit")
						.workingDirectory(work)
						.build());
			assertThat(control.stdoutText()).as(control.stderrText()).contains("daemon: own session", "tree started");
			assertThat(processesNamed(marker)).as("control: left behind without the sandbox").isNotEmpty();
		}
		finally {
			stopAndKill(marker);
		}
	}

	/**
	 * The filter is compiled for x86-64: a socket through the x32 or the i386
	 * ({@code int 0x80}) entry point kills the command (SIGSYS, 128 + 31) instead of
	 * reaching a socket the filter never inspected. The filter sees the call before the
	 * kernel decides whether it serves that ABI, so the x32 attempt is killed even on a
	 * kernel without x32 support. The i386 attempt needs the kernel's IA32 emulation:
	 * where the control cannot create an i386 socket (the emulation is disabled, so
	 * {@code int 0x80} faults), that part is skipped. Sockets are never connected. x86-64
	 * only.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void socketThroughAnotherSystemCallAbiKillsTheCommand(MechanismChoice mechanism, @TempDir Path work)
			throws IOException {
		assumeThat(System.getProperty("os.arch")).isEqualTo("amd64");
		copyResource("other-abi-socket.py", work);
		ExecutionResult x32 = isolated(mechanism)
			.execute(ExecutionRequest.builder(PYTHON, "other-abi-socket.py", "x32").workingDirectory(work).build());
		assertThat(x32.exitCode()).as("x32: %s %s", x32.stdoutText(), x32.stderrText()).isEqualTo(159);
		ExecutionResult control = unisolated
			.execute(ExecutionRequest.builder(PYTHON, "other-abi-socket.py", "i386").workingDirectory(work).build());
		assumeThat(control.stdoutText())
			.as("the host's IA32 emulation (control: exit %d %s)", control.exitCode(), control.stderrText())
			.matches("i386 [0-9]+\\n");
		ExecutionResult i386 = isolated(mechanism)
			.execute(ExecutionRequest.builder(PYTHON, "other-abi-socket.py", "i386").workingDirectory(work).build());
		assertThat(i386.exitCode()).as("i386: %s %s", i386.stdoutText(), i386.stderrText()).isEqualTo(159);
	}

	/**
	 * A host's pathname datagram socket (here a listener of the test's own, writable by
	 * everyone, beside the working directory) stays out of reach: a {@code SOCK_DGRAM}
	 * pair of {@code socketpair(2)} could address any path with {@code sendto(2)} or be
	 * re-targeted with {@code connect(2)}, which Landlock controls neither, so the filter
	 * refuses unix datagram sockets there. The control sends from outside the sandbox.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void aDatagramSocketpairCannotReachAHostDatagramSocket(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path work = Files.createDirectory(base.resolve("work"));
		Path socket = base.resolve("dgram.sock");
		String send = "import socket\n" + "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
				+ "for how in ('sendto', 'connect'):\n" + "    try:\n"
				+ "        if how == 'sendto': a.sendto(b'via-sendto', '" + socket + "')\n"
				+ "        else: a.connect('" + socket + "'); a.send(b'via-connect')\n" + "        print(how, 'sent')\n"
				+ "    except OSError as e: print(how, 'refused', e.errno)\n";
		Files.writeString(work.resolve("send.py"), send);
		try (DatagramListener control = DatagramListener.start(socket)) {
			unisolated.execute(ExecutionRequest.builder(PYTHON, "send.py").workingDirectory(work).build());
			assertThat(control.received()).as("control: the listener works").contains("via-sendto");
		}
		try (DatagramListener listener = DatagramListener.start(socket)) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(PYTHON, "send.py").workingDirectory(work).build());
			assertThat(listener.received()).as("%s %s", result.stdoutText(), result.stderrText()).isEmpty();
		}
	}

	/**
	 * A datagram unix socket of the host, writable by everyone, that records for two
	 * seconds after {@link #received()} is first asked what arrives.
	 */
	private static final class DatagramListener implements AutoCloseable {

		private final Process process;

		private DatagramListener(Process process) {
			this.process = process;
		}

		static DatagramListener start(Path socket) throws IOException {
			Files.deleteIfExists(socket);
			String script = "import os, socket, sys\n" + "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
					+ "s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); print('ready', flush=True)\n"
					+ "sys.stdin.readline(); s.settimeout(2)\n" + "try:\n"
					+ "    while True: print(s.recv(100).decode(), flush=True)\n" + "except OSError: pass\n";
			Process process = new ProcessBuilder(PYTHON, "-c", script, socket.toString()).start();
			String ready = new String(process.getInputStream().readNBytes(6), StandardCharsets.UTF_8);
			assertThat(ready).isEqualTo("ready\n");
			return new DatagramListener(process);
		}

		String received() throws IOException, InterruptedException {
			this.process.getOutputStream().write('\n');
			this.process.getOutputStream().flush();
			assertThat(this.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
			return new String(this.process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		}

		@Override
		public void close() {
			this.process.destroyForcibly();
		}

	}

	/**
	 * A chain that forks a new process whenever its parent dies would keep a subreaper
	 * that kills one generation at a time busy for ever, with a newborn always one
	 * generation below, until the executor killed the subreaper and left the newborn of
	 * that moment to init. The seccomp mechanism's subreaper stops the whole tree before
	 * it kills any of it, so no process of the chain sees its parent die while it can
	 * still fork; a PID namespace (the namespaces mechanism) dies as a whole. The chain
	 * ends itself two minutes after it starts, whatever the outcome.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void aChainThatRespawnsOnItsParentsDeathDiesWithItsExecution(MechanismChoice mechanism, @TempDir Path work)
			throws IOException, InterruptedException {
		chainDiesWithItsExecution(mechanism, work, "phoenix.py", "500", "spare forked");
	}

	/**
	 * Found by a break-in attempt: a chain in which every process forks the next, ignores
	 * SIGTERM and waits outran the seccomp mechanism's subreaper, which killed one
	 * generation at a time as each became its child; at the timeout the executor killed
	 * the subreaper after the grace period, and hundreds of the chain's processes were
	 * left to init. The subreaper now stops the whole tree before it kills any of it. The
	 * chain ends itself two minutes after it starts, whatever the outcome.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void aForkChainThatIgnoresTermDiesWithItsExecution(MechanismChoice mechanism, @TempDir Path work)
			throws IOException, InterruptedException {
		chainDiesWithItsExecution(mechanism, work, "fork-chain.py", "400", "chain started");
	}

	/**
	 * Run a chain script (its arguments: a marker, the second since the epoch at which it
	 * ends itself, and its own) with a 5 s timeout, and show that none of it is left.
	 */
	private void chainDiesWithItsExecution(MechanismChoice mechanism, Path work, String script, String argument,
			String started) throws IOException, InterruptedException {
		String marker = "cave-chain-" + UUID.randomUUID();
		copyResource(script, work);
		long end = System.currentTimeMillis() / 1000 + 120;
		try {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(PYTHON, script, marker, String.valueOf(end), argument)
					.workingDirectory(work)
					.timeout(Duration.ofSeconds(5))
					.build());
			assertThat(result.stdoutText()).as(result.stderrText()).contains(started);
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(200))
				.untilAsserted(() -> assertThat(processesNamed(marker))
					.as("left behind: exit %d, timed out %s", result.exitCode(), result.timedOut())
					.isEmpty());
		}
		finally {
			stopAndKill(marker);
		}
	}

	/**
	 * SIGSTOP first, so that no process of a respawning chain reacts to another's death.
	 */
	private static void stopAndKill(String marker) throws IOException, InterruptedException {
		for (int round = 0; round < 20 && !processesNamed(marker).isEmpty(); round++) {
			for (String signal : List.of("-STOP", "-KILL")) {
				List<String> command = new ArrayList<>(List.of("kill", signal));
				processesNamed(marker).forEach((process) -> command.add(String.valueOf(process.pid())));
				if (command.size() > 2) {
					new ProcessBuilder(command).start().waitFor(30, TimeUnit.SECONDS);
				}
			}
		}
	}

	/**
	 * A command in the JVM's session shares its controlling terminal: with
	 * {@code dev.tty.legacy_tiocsti=1} it can push input into it ({@code TIOCSTI}), which
	 * the shell that started the JVM reads after the JVM ends. The other mechanisms run
	 * the command in a session of its own (the launcher's {@code setsid(2)} as init or
	 * pid1).
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void commandRunsInASessionOtherThanTheJvms(MechanismChoice mechanism, @TempDir Path work) throws IOException {
		String jvmSession = Files.readString(Path.of("/proc/self/stat")).replaceFirst("^.*\\) ", "").split(" ")[3];
		// /proc/self, not /proc/$$: on the namespaces mechanism /proc is the host's, and
		// $$ is a PID of the command's own PID namespace, which names another host
		// process.
		String script = "set -- $(cat /proc/self/stat); echo \"$6\"";
		assertThat(shell(unisolated, work, script).stdoutText().trim()).as("control").isEqualTo(jvmSession);
		ExecutionResult result = shell(isolated(mechanism), work, script);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().trim()).as("the command's session id on %s", mechanism)
			.matches("[1-9][0-9]*")
			.isNotEqualTo(jvmSession);
	}

	/**
	 * The attack itself: the production command line started from a shell on a terminal,
	 * as a JVM started from a terminal would start it; the command pushes a line into the
	 * terminal with {@code TIOCSTI}, and the shell reads the first line it gets after the
	 * sandbox ends. Unless the terminal's input came from the sandbox, that line is the
	 * one the test types.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void commandCannotPushInputIntoTheTerminalOfItsCaller(MechanismChoice mechanism, @TempDir Path base)
			throws IOException, InterruptedException {
		Path work = Files.createDirectory(base.resolve("work"));
		Path typed = base.resolve("typed");
		String inject = "import fcntl, os, termios\n" + "try:\n" + "    fd = os.open('/dev/tty', os.O_RDWR)\n"
				+ "    for byte in b'echo INJECTED\\n':\n" + "        fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))\n"
				+ "    print('pushed')\n" + "except OSError as error:\n" + "    print('refused', error)\n"
				+ "open('done', 'w').close()\n";
		Files.writeString(work.resolve("inject.py"), inject);
		SandboxMechanism verified = LinuxMechanisms.verified(settings(mechanism).build()).mechanism();
		List<String> command = verified.commandLine(List.of(PYTHON, "inject.py"), work.toRealPath(), false, false);
		String terminal = "import os, pty, select, sys, time\n"
				+ "work, typed, command = sys.argv[1], sys.argv[2], sys.argv[3:]\n" + "pid, master = pty.fork()\n"
				+ "if pid == 0:\n" + "    os.chdir(work)\n"
				+ "    os.execv('/bin/sh', ['sh', '-c', '\"$@\"; IFS= read -r line; printf %s \"$line\" > \"$TYPED\"', 'sh'] + command)\n"
				+ "os.environ['TYPED'] = typed\n" + "deadline = time.time() + 60\n" + "sent = False\n"
				+ "while time.time() < deadline:\n" + "    ready, _, _ = select.select([master], [], [], 0.1)\n"
				+ "    if ready:\n" + "        try:\n"
				+ "            sys.stdout.write(os.read(master, 4096).decode(errors='replace'))\n"
				+ "        except OSError:\n" + "            break\n"
				+ "    if not sent and os.path.exists(os.path.join(work, 'done')):\n"
				+ "        os.write(master, b'typed by the test\\n')\n" + "        sent = True\n"
				+ "if os.waitpid(pid, os.WNOHANG)[0] == 0:\n" + "    os.kill(pid, 9)\n" + "    os.waitpid(pid, 0)\n";
		Path terminalScript = Files.writeString(base.resolve("terminal.py"), terminal);
		ProcessBuilder builder = new ProcessBuilder(Stream
			.concat(Stream.of(PYTHON, terminalScript.toString(), work.toString(), typed.toString()), command.stream())
			.toList()).redirectErrorStream(true);
		builder.environment().put("TYPED", typed.toString());
		String output;
		try (java.io.Closeable grant = LinuxMechanisms.forCommandUser(verified, work)) {
			Process process = builder.start();
			process.getOutputStream().close();
			try (InputStream stream = process.getInputStream()) {
				output = new String(stream.readAllBytes(), StandardCharsets.UTF_8);
			}
			assertThat(process.waitFor(90, TimeUnit.SECONDS)).as(output).isTrue();
		}
		assertThat(Files.exists(work.resolve("done"))).as(output).isTrue();
		assertThat(Files.readString(typed)).as(output).isEqualTo("typed by the test");
	}

	/**
	 * The JVM's /proc entries that need ptrace-mode access (memory, environment, working
	 * and root directories, descriptors, maps) and signal 0 to it are refused by Landlock
	 * (seccomp mechanism) or the PID namespace (namespaces mechanism).
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void theJvmsProcEntriesAndSignalsAreRefused(MechanismChoice mechanism, @TempDir Path work) throws IOException {
		copyResource(ATTEMPTS, work);
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder(PYTHON, ATTEMPTS, "jvm", String.valueOf(ProcessHandle.current().pid()))
				.workingDirectory(work)
				.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		List<String> lines = result.stdoutText().lines().toList();
		assertThat(lines).hasSize(7).noneMatch((line) -> line.endsWith(" ok"));
	}

	/**
	 * Every way to signal a host process of the same user: kill, tgkill,
	 * pidfd_send_signal through pidfd_open and through a /proc/PID directory descriptor,
	 * and the owner of an O_ASYNC pipe (SIGIO, and SIGKILL through F_SETSIG). The victim
	 * is a {@code sleep} the test started; the control run kills it with the first
	 * attempt.
	 */
	@ParameterizedTest
	@MethodSource("mechanisms")
	void aHostProcessCannotBeSignalledByAnyRoute(MechanismChoice mechanism, @TempDir Path work)
			throws IOException, InterruptedException {
		copyResource(ATTEMPTS, work);
		Process victim = new ProcessBuilder("sleep", "300").start();
		try {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(PYTHON, ATTEMPTS, "victim", String.valueOf(victim.pid()))
					.workingDirectory(work)
					.build());
			List<String> lines = result.stdoutText().lines().toList();
			assertThat(lines).as(result.stderrText()).hasSize(6);
			// fcntl(2) succeeds: the kernel drops the SIGIO at delivery, so only the
			// victim shows whether those got through
			assertThat(lines.subList(2, 6)).noneMatch((line) -> line.endsWith(" ok"));
			assertThat(victim.isAlive()).as(result.stdoutText()).isTrue();
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder(PYTHON, ATTEMPTS, "victim", String.valueOf(victim.pid()))
					.workingDirectory(work)
					.build());
			assertThat(victim.waitFor(30, TimeUnit.SECONDS)).as(control.stdoutText()).isTrue();
		}
		finally {
			victim.destroyForcibly();
		}
	}

	/** Copy a script of the test resources into a working directory. */
	static void copyResource(String name, Path work) throws IOException {
		try (InputStream script = MechanismsWithoutMountsBreakInTests.class.getResourceAsStream(name)) {
			assertThat(script).as(name).isNotNull();
			Files.copy(script, work.resolve(name), StandardCopyOption.REPLACE_EXISTING);
		}
	}

}
