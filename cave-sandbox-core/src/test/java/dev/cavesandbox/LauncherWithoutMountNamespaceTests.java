package dev.cavesandbox;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The launcher without a mount namespace ({@code --no-mount-namespace}), run directly by
 * {@code outer} in the host's namespaces, as the mechanisms without namespaces run it:
 * {@code exec} (the namespaces mechanism's last step) and {@code contain} (the seccomp
 * mechanism's wrapper). Nothing hides the host's files, sockets or processes here, so
 * what confines the command is the launcher alone: its seccomp filter (no
 * {@code socket(AF_UNIX)}, no {@code AF_INET} without a private loopback) and its
 * Landlock layer (writes only in the working directory, no signal to and no ptrace-mode
 * access of processes outside the command's own). Each attempt has a control outside the
 * launcher; every run is made by root and by an unprivileged user (nobody) through
 * {@code setpriv}.
 * <p>
 * Then {@code contain}: what the command leaves behind (a {@code setsid} double-forked
 * daemon) is killed when the command exits and when {@code outer} is killed, and the
 * command's exit status passes through.
 */
@EnabledOnOs(OS.LINUX)
class LauncherWithoutMountNamespaceTests {

	private static final String SCRIPT = "no-mount-namespace-attempts.py";

	private static final String PYTHON = "/usr/bin/python3";

	private static final Pattern LANDLOCK = Pattern
		.compile("landlock=(\\d+) writes=workdir reads=host net=refused scope=signal,abstract-unix");

	private static final Duration GENEROUS = Duration.ofSeconds(60);

	/** What every attempt of the script gives inside, for root and for nobody. */
	private static final Map<String, String> REFUSED = refused();

	@TempDir
	Path launcherDirectory;

	private Launcher launcher;

	private static Map<String, String> refused() {
		Map<String, String> refused = new LinkedHashMap<>();
		refused.put("unix(own)", "OK");
		refused.put("socket(AF_UNIX, SOCK_DGRAM)", "EAFNOSUPPORT");
		refused.put("socketpair", "OK");
		refused.put("connect(127.0.0.1)", "EAFNOSUPPORT");
		refused.put("write(inside)", "OK");
		refused.put("write(outside)", "EACCES");
		refused.put("mkdir(outside)", "EACCES");
		refused.put("write(/dev/null)", "OK");
		refused.put("kill(jvm, 0)", "EPERM");
		refused.put("open(/proc/jvm/environ)", "EACCES");
		refused.put("open(/proc/jvm/mem)", "EACCES");
		return Map.copyOf(refused);
	}

	static Stream<Arguments> modesAndUsers() {
		return Stream.of(Arguments.of(LauncherContract.CONTAIN, false), Arguments.of(LauncherContract.CONTAIN, true),
				Arguments.of(LauncherContract.EXEC, false), Arguments.of(LauncherContract.EXEC, true));
	}

	/**
	 * A copy of the verified launcher that nobody may execute too, in a directory
	 * everyone reaches.
	 */
	@BeforeEach
	void copyLauncher() throws Exception {
		assumeThat(System.getProperty("user.name")).as("the runs as nobody and the controls need root")
			.isEqualTo("root");
		Path installed = LauncherInstallation.shared().resolve(SandboxSettings.builder().build());
		Files.setPosixFilePermissions(this.launcherDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path copy = Files.copy(installed, this.launcherDirectory.resolve(LauncherInstallation.BINARY));
		Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("r-xr-xr-x"));
		this.launcher = new Launcher(copy, false);
	}

	@ParameterizedTest(name = "{0}, nobody: {1}")
	@MethodSource("modesAndUsers")
	void checkReportsUnixDatagramsRefusedTheLandlockLayerAndTheSupervisedOwnSocket(String mode, boolean nobody,
			@TempDir Path directory) throws Exception {
		prepare(directory, nobody);
		NobodyCommandLines.Run run = run(mode, false, true, List.of("/bin/true"), directory, nobody);
		assertThat(run.exitCode()).as(run.output()).isZero();
		List<String> lines = run.output().lines().toList();
		assertThat(lines).as(run.output()).noneMatch((line) -> line.startsWith("allowed="));
		assertThat(lines.stream()
			.filter((line) -> line.startsWith("refused="))
			.map(LauncherWithoutMountNamespaceTests::name))
			.containsExactlyElementsOf(this.launcher.refusals(false, true, LauncherContract.CONTAIN.equals(mode)))
			.startsWith("socket(AF_UNIX, SOCK_DGRAM)", "socketpair(AF_UNIX, SOCK_DGRAM)", "socket(AF_INET)");
		List<String> landlock = lines.stream()
			.filter((line) -> line.startsWith(LauncherContract.LANDLOCK_PREFIX))
			.toList();
		assertThat(landlock).as(run.output()).singleElement().asString().matches(LANDLOCK);
		assertThat(lines.indexOf(landlock.get(0))).as("after the refusals").isEqualTo(lines.size() - 2);
		assertThat(lines.get(lines.size() - 1)).as("the supervisor of unix sockets, last")
			.isEqualTo("unix=supervised own=connected outside=EACCES");
	}

	/**
	 * With a private loopback (the namespaces mechanism's option) the filter leaves
	 * {@code AF_INET} to the network namespace and Landlock leaves TCP alone; unix
	 * datagram sockets are still refused.
	 */
	@ParameterizedTest
	@ValueSource(strings = { LauncherContract.CONTAIN, LauncherContract.EXEC })
	void checkWithLoopbackLeavesTcpAlone(String mode, @TempDir Path directory) throws Exception {
		NobodyCommandLines.Run run = run(mode, true, true, List.of("/bin/true"), directory, false);
		assertThat(run.exitCode()).as(run.output()).isZero();
		List<String> lines = run.output().lines().toList();
		assertThat(lines.stream()
			.filter((line) -> line.startsWith("refused="))
			.map(LauncherWithoutMountNamespaceTests::name))
			.containsExactlyElementsOf(this.launcher.refusals(true, true, LauncherContract.CONTAIN.equals(mode)))
			.startsWith("socket(AF_UNIX, SOCK_DGRAM)", "socketpair(AF_UNIX, SOCK_DGRAM)", "socket(AF_NETLINK)");
		assertThat(lines).filteredOn((line) -> line.startsWith(LauncherContract.LANDLOCK_PREFIX))
			.singleElement()
			.asString()
			.matches("landlock=\\d+ writes=workdir reads=host net=allowed scope=signal,abstract-unix");
	}

	/**
	 * Nothing arrives at the test's own listener on 127.0.0.1 from inside, while the
	 * control outside reaches it: the listener is awaited for the control's message, and
	 * whatever the isolated run had sent would come before it.
	 */
	@ParameterizedTest(name = "{0}, nobody: {1}")
	@MethodSource("modesAndUsers")
	void attemptsAreRefusedInsideAndSucceedOutside(String mode, boolean nobody, @TempDir Path directory,
			@TempDir Path outside) throws Exception {
		LauncherConfinementTests.copyScript(SCRIPT, directory);
		prepare(directory, nobody);
		prepare(outside, nobody);
		try (LoopbackListeners.Tcp listener = new LoopbackListeners.Tcp(InetAddress.getByName("127.0.0.1"))) {
			List<String> script = List.of(PYTHON, SCRIPT, "isolated", String.valueOf(listener.port()),
					outside.toString(), String.valueOf(ProcessHandle.current().pid()));
			NobodyCommandLines.Run inside = run(mode, false, false, script, directory, nobody);
			assertThat(inside.exitCode()).as(inside.output()).isZero();
			assertThat(LauncherConfinementTests.parse(inside.output())).as(inside.output())
				.containsExactlyInAnyOrderEntriesOf(REFUSED);

			List<String> control = new ArrayList<>(script);
			control.set(2, "control");
			NobodyCommandLines.Run unconfined = NobodyCommandLines
				.run(nobody ? NobodyCommandLines.asNobody(control) : control, directory);
			assertThat(unconfined.exitCode()).as(unconfined.output()).isZero();
			Map<String, String> expected = new LinkedHashMap<>();
			REFUSED.keySet().forEach((name) -> expected.put(name, "OK"));
			expected.put("socket(AF_UNIX, SOCK_DGRAM)", "OK");
			if (nobody) {
				// The JVM is root's: nobody reaches it outside the launcher neither.
				expected.put("kill(jvm, 0)", "EPERM");
				expected.put("open(/proc/jvm/environ)", "EACCES");
				expected.put("open(/proc/jvm/mem)", "EACCES");
			}
			assertThat(LauncherConfinementTests.parse(unconfined.output())).as(unconfined.output())
				.containsExactlyInAnyOrderEntriesOf(expected);
			assertThat(listener.awaitAccepted("control")).containsExactly("control");
		}
		assertThat(directory.resolve("inside-isolated")).hasContent("isolated");
		try (Stream<Path> entries = Files.list(outside)) {
			assertThat(entries.map((entry) -> entry.getFileName().toString()))
				.containsExactlyInAnyOrder("outside-control", "directory-control");
		}
	}

	/**
	 * A daemon that the command leaves behind (a double fork: its parent exits at once)
	 * is gone by the time {@code outer} exits with the command's status: {@code contain}
	 * adopted and killed it. The control, the same command outside the launcher, leaves
	 * the daemon running.
	 */
	@ParameterizedTest(name = "nobody: {0}")
	@ValueSource(booleans = { false, true })
	void containKillsWhatTheCommandLeavesBehind(boolean nobody, @TempDir Path directory) throws Exception {
		String marker = marker(directory);
		prepare(directory, nobody);
		String command = "( sh -c './" + marker + " 1000 >/dev/null 2>&1 & echo $! > daemon.pid' & ); "
				+ "while [ ! -s daemon.pid ]; do sleep 0.1; done; exit 3";
		NobodyCommandLines.Run run = run(LauncherContract.CONTAIN, false, false, List.of("/bin/sh", "-c", command),
				directory, nobody);
		assertThat(run.exitCode()).as(run.output()).isEqualTo(3);
		long daemon = Long.parseLong(Files.readString(directory.resolve("daemon.pid")).trim());
		assertThat(processesWith(marker)).as("left behind").isEmpty();
		assertThat(ProcessHandle.of(daemon).filter(ProcessHandle::isAlive)).isEmpty();

		Files.delete(directory.resolve("daemon.pid"));
		NobodyCommandLines.Run control = NobodyCommandLines.run(List.of("/bin/sh", "-c", command), directory);
		assertThat(control.exitCode()).as(control.output()).isEqualTo(3);
		long escaped = Long.parseLong(Files.readString(directory.resolve("daemon.pid")).trim());
		try {
			assertThat(processesWith(marker)).as("the control's daemon").containsExactly(escaped);
		}
		finally {
			ProcessHandle.of(escaped).ifPresent(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * Without a PID namespace the command's process group is its whole tree, which
	 * {@code contain} kills at once: {@code setsid(2)} and {@code setpgid(2)} are refused
	 * with EPERM ({@code setsid(1)} says so and exits 1), and the tree stays in the
	 * group. {@code exec} (in a PID namespace) leaves both alone.
	 */
	@ParameterizedTest(name = "nobody: {0}")
	@ValueSource(booleans = { false, true })
	void containRefusesANewSessionOrProcessGroup(boolean nobody, @TempDir Path directory) throws Exception {
		prepare(directory, nobody);
		String attempts = "setsid /bin/true; echo setsid=$?; "
				+ "/usr/bin/python3 -c 'import os\ntry:\n os.setpgid(0, 0)\nexcept OSError as e:\n print(\"setpgid\", e.errno)'";
		NobodyCommandLines.Run run = run(LauncherContract.CONTAIN, false, false, List.of("/bin/sh", "-c", attempts),
				directory, nobody);
		assertThat(run.output()).contains("setsid failed: Operation not permitted", "setsid=1", "setpgid 1");
		NobodyCommandLines.Run control = NobodyCommandLines.run(List.of("/bin/sh", "-c", attempts), directory);
		assertThat(control.output()).contains("setsid=0").doesNotContain("setpgid");
	}

	/**
	 * {@code outer} killed by SIGKILL, as it dies with the JVM: {@code contain} gets
	 * SIGHUP and kills the command and the daemon it started; nothing with the marker in
	 * its command line is left, {@code contain} included.
	 */
	@ParameterizedTest(name = "nobody: {0}")
	@ValueSource(booleans = { false, true })
	void containKillsTheTreeWhenOuterIsKilled(boolean nobody, @TempDir Path directory) throws Exception {
		String marker = marker(directory);
		prepare(directory, nobody);
		List<String> command = commandLine(LauncherContract.CONTAIN, false, false,
				List.of("/bin/sh", "-c", "( ./" + marker + " 1000 & ); ./" + marker + " 1000"), directory);
		Process outer = new ProcessBuilder(nobody ? NobodyCommandLines.asNobody(command) : command)
			.directory(directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		try {
			await().atMost(GENEROUS).until(() -> sleepers(marker) == 2);
			outer.destroyForcibly();
			assertThat(outer.waitFor(GENEROUS.toSeconds(), TimeUnit.SECONDS)).isTrue();
			await().atMost(GENEROUS).until(() -> processesWith(marker).isEmpty());
		}
		finally {
			outer.destroyForcibly();
			processesWith(marker).forEach((pid) -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { LauncherContract.CONTAIN, LauncherContract.EXEC })
	void exitCodeAndSignalOfTheCommandPassThrough(String mode, @TempDir Path directory) throws Exception {
		NobodyCommandLines.Run exited = run(mode, false, false, List.of("/bin/sh", "-c", "exit 7"), directory, false);
		assertThat(exited.exitCode()).as(exited.output()).isEqualTo(7);
		NobodyCommandLines.Run killed = run(mode, false, false,
				List.of("/bin/sh", "-c", "kill -USR1 $$; echo survived"), directory, false);
		assertThat(killed.exitCode()).as(killed.output()).isEqualTo(128 + 10);
		assertThat(killed.output()).doesNotContain("survived");
	}

	/**
	 * The working directory is checked by device and inode also without a mount
	 * namespace: a mismatch fails the set-up (exit 125, the launcher's line) before the
	 * command runs, and {@code outer} reports that the sandbox was not set up.
	 */
	@ParameterizedTest
	@ValueSource(strings = { LauncherContract.CONTAIN, LauncherContract.EXEC })
	void setUpFailureExits125BeforeTheCommandRuns(String mode, @TempDir Path directory) throws Exception {
		List<String> command = new ArrayList<>(this.launcher.outer(directory.toRealPath()));
		command.addAll(List.of("/usr/bin/env", "CAVE_SANDBOX_WORKDIR=1:1"));
		command.addAll(this.launcher.inside(mode, false, false, true, List.of("/usr/bin/touch", "ran")));
		NobodyCommandLines.Run run = NobodyCommandLines.run(command, directory);
		assertThat(run.exitCode()).as(run.output()).isEqualTo(LauncherContract.SETUP_FAILED);
		assertThat(run.output())
			.contains(LauncherContract.MESSAGE_PREFIX + " the working directory changed during set-up")
			.contains(LauncherContract.NOT_SET_UP);
		assertThat(directory.resolve("ran")).doesNotExist();
	}

	/**
	 * {@code outer}'s child runs {@code contain} itself, without executing the launcher
	 * again, and forgets the launch token first: a failure of {@code contain}'s set-up
	 * (here an option it refuses) is its own line without the token, then {@code outer}'s
	 * line names the launch, as when {@code contain} was executed (the executor reads the
	 * last line); the command never runs.
	 */
	@Test
	void containsOwnFailureNamesNoLaunchButOutersDoes(@TempDir Path directory) throws Exception {
		String token = UUID.randomUUID().toString();
		List<String> command = new ArrayList<>(this.launcher.outer(directory.toRealPath()));
		command.addAll(List.of(LauncherContract.INSIDE, LauncherContract.CONTAIN, "--no-mount-namespace",
				"--allow-inet", "--egress-port", "3128", "--", "/usr/bin/touch", "ran"));
		ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true);
		builder.environment().put(LauncherContract.TOKEN_VARIABLE, token);
		Process process = builder.start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(GENEROUS.toSeconds(), TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as(output).isEqualTo(LauncherContract.SETUP_FAILED);
		List<String> lines = output.lines().toList();
		assertThat(lines).as(output)
			.containsExactly(
					LauncherContract.MESSAGE_PREFIX + " --egress-port is for init and exec: the egress "
							+ "bridge needs the sandbox's own network namespace",
					LauncherContract.NOT_SET_UP + ": " + LauncherContract.INSIDE + " exited with 125 before the "
							+ "command started [launch " + token + "]");
		assertThat(directory.resolve("ran")).doesNotExist();
	}

	private List<String> commandLine(String mode, boolean loopback, boolean check, List<String> argv, Path directory)
			throws IOException {
		List<String> command = new ArrayList<>(this.launcher.outer(directory.toRealPath()));
		command.addAll(this.launcher.inside(mode, loopback, check, true, argv));
		return command;
	}

	private NobodyCommandLines.Run run(String mode, boolean loopback, boolean check, List<String> argv, Path directory,
			boolean nobody) throws Exception {
		List<String> command = commandLine(mode, loopback, check, argv, directory);
		return NobodyCommandLines.run(nobody ? NobodyCommandLines.asNobody(command) : command, directory);
	}

	private static void prepare(Path directory, boolean nobody) throws IOException {
		if (nobody) {
			NobodyCommandLines.giveToNobody(directory);
		}
	}

	/** A copy of {@code sleep} with a name of its own, which its command line carries. */
	private static String marker(Path directory) throws IOException {
		String marker = "cave-marker-" + UUID.randomUUID();
		Path copy = Files.copy(Path.of("/bin/sleep"), directory.resolve(marker));
		Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("r-xr-xr-x"));
		return marker;
	}

	private static long sleepers(String marker) throws IOException {
		return processesWith(marker).stream()
			.filter((pid) -> commandLineOf(pid).equals("./" + marker + " 1000"))
			.count();
	}

	/** The processes whose command line contains the marker, from {@code /proc}. */
	private static List<Long> processesWith(String marker) throws IOException {
		try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
			return entries.map((entry) -> entry.getFileName().toString())
				.filter((name) -> name.matches("[0-9]+"))
				.map(Long::parseLong)
				.filter((pid) -> commandLineOf(pid).contains(marker))
				.toList();
		}
	}

	private static String commandLineOf(long pid) {
		try {
			byte[] bytes = Files.readAllBytes(Path.of("/proc", String.valueOf(pid), "cmdline"));
			return new String(bytes, StandardCharsets.UTF_8).replace('\0', ' ').trim();
		}
		catch (IOException ex) {
			// Gone meanwhile.
			return "";
		}
	}

	private static String name(String line) {
		return line.substring(line.indexOf('=') + 1, line.lastIndexOf(' '));
	}

}
