package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Strict mode in a container (issue 11): a child JVM ({@link ContainerJvm}) in each
 * confinement of {@link ContainerConfinement}, as root and as nobody, probes with
 * mechanism AUTO, chooses the mechanism the container allows ({@code seccomp} under
 * Docker's default profile, {@code namespaces} where only mounts are refused) and runs
 * commands that must not reach the test's own loopback listeners and unix sockets, nor
 * outlive their execution. Each "nothing arrived" has a control: the same program, run by
 * the same JVM without the sandbox, reaches every listener, whose queue then holds the
 * control's messages alone.
 */
@Tag("container")
@EnabledOnOs(OS.LINUX)
class ContainerMechanismsTests {

	private static final String EGRESS_SCRIPT = "container-egress.py";

	private static final List<String> ATTEMPTS = List.of("tcp4", "tcp6", "tcp4-mapped", "udp4", "udp4-mapped", "dns",
			"unix-abstract", "unix-path");

	/** A limit for a loaded machine, not a measure. */
	private static final Duration PATIENCE = Duration.ofSeconds(60);

	@TempDir
	Path directory;

	/** For the argv of the commands' processes, so that the test finds every one. */
	private final String marker = "7" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000) + "0";

	@BeforeEach
	void assumeConfinementAvailable() {
		ContainerConfinement.assumeAvailable();
	}

	@AfterEach
	void killWhatATestLeftBehind() {
		SandboxHolderMain.anyNaming(this.marker).forEach(ProcessHandle::destroyForcibly);
	}

	static Stream<Arguments> containers() {
		// Not UNCONFINED: that is a host's own JVM, whose mechanisms the other tests
		// cover.
		return Stream.of(Profile.DOCKER_DEFAULT, Profile.MOUNTS_REFUSED)
			.flatMap((profile) -> Stream.of(User.values()).map((user) -> Arguments.of(profile, user)));
	}

	/**
	 * The mechanisms the container refuses, chosen explicitly: strict mode fails closed
	 * with the refusal's named cause, while the same JVM's unisolated control shows it
	 * runs as the container's user with no_new_privs and a seccomp filter.
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void strictModeWithAMechanismTheContainerRefusesFailsClosedWithItsNamedCause(Profile profile, User user)
			throws Exception {
		Files.setPosixFilePermissions(this.directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		for (MechanismChoice mechanism : List.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE)) {
			Path own = Files.createDirectory(this.directory.resolve(mechanism.name()));
			try (ContainerJvm jvm = ContainerJvm.start(own, profile, user, mechanism)) {
				ContainerJvm.Verdict verdict = jvm.verdict();
				assertThat(verdict.available()).as("%s", verdict).isFalse();
				assertThat(verdict.cause()).as("%s", verdict)
					.isEqualTo((profile == Profile.DOCKER_DEFAULT) ? UnavailabilityCause.KERNEL_REFUSED
							: UnavailabilityCause.MOUNT_REFUSED);
				ContainerJvm.Result refused = jvm.isolated("true");
				assertThat(refused.error()).isEqualTo(NetworkIsolationUnavailableException.CODE);
				ContainerJvm.Result control = jvm.unisolated("sh", "-c",
						"id -u; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status");
				assertThat(control.exitCode()).as(control.stderr()).isZero();
				assertThat(control.stdout()).isEqualTo(uid(user) + "\nNoNewPrivs:\t1\nSeccomp:\t2\n");
			}
		}
	}

	/**
	 * The command's own unix stream socket beneath its working directory works in the
	 * container too (the supervisor of {@code connect(2)} and {@code bind(2)} runs under
	 * Docker's default profile), and the probe says so in its facts.
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void theCommandsOwnUnixSocketWorksInTheContainer(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(this.directory, profile, user, MechanismChoice.AUTO)) {
			ContainerJvm.Verdict verdict = jvm.verdict();
			assertThat(verdict.available()).as("%s; log: %s", verdict, jvm.log()).isTrue();
			assertThat(verdict.facts()).as("%s", verdict)
				.anySatisfy((fact) -> assertThat(fact)
					.startsWith("unix sockets: only the command's own beneath the working directory"))
				.anySatisfy((fact) -> assertThat(fact)
					.startsWith("POSIX shared memory and semaphores: the " + "execution's own directory"));
			ContainerJvm.Result result = jvm.isolated(ContainerConfinement.PYTHON, "-c",
					"import socket\nl = socket.socket(socket.AF_UNIX); l.bind('own.sock'); l.listen(1)\n"
							+ "c = socket.socket(socket.AF_UNIX); c.connect('own.sock'); c.sendall(b'own')\n"
							+ "print(l.accept()[0].recv(3).decode())");
			assertThat(result.error()).as(result.stderr()).isNull();
			assertThat(result.stdout()).as(result.stderr()).isEqualTo("own\n");
		}
	}

	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void strictModeChoosesTheMechanismTheContainerAllowsAndRunsACommand(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = ContainerJvm.start(this.directory, profile, user, MechanismChoice.AUTO)) {
			ContainerJvm.Verdict verdict = jvm.verdict();
			assertThat(verdict.available()).as("%s; log: %s", verdict, jvm.log()).isTrue();
			assertThat(verdict.mechanism()).isEqualTo(expectedMechanism(profile));
			// What the mechanism does not give is said, not hidden.
			assertThat(verdict.facts()).anySatisfy((fact) -> assertThat(fact).startsWith("not given: "));
			ContainerJvm.Result result = jvm.isolated("id", "-u");
			assertThat(result.error()).as(result.stderr()).isNull();
			assertThat(result.exitCode()).as(result.stderr()).isZero();
			// A root JVM's commands run as the command user on every mechanism (Docker's
			// default capabilities include CAP_SETUID and CAP_SETGID), so that the
			// process limit holds: in a user namespace of the sandbox's own, or as that
			// uid of the host on the seccomp mechanism.
			if (user == User.ROOT && expectedMechanism(profile).equals(SeccompMechanism.NAME)) {
				// there a uid of the command user range of its own per execution
				SandboxSettings.CommandUserRange range = SandboxSettings.CommandUserRange.DEFAULT;
				assertThat(Long.parseLong(result.stdout().trim())).isBetween(range.first(), range.last());
			}
			else {
				String expected = (user == User.ROOT) ? Integer.toString(SandboxSettings.Linux.DEFAULT_COMMAND_USER)
						: uid(user);
				assertThat(result.stdout()).isEqualTo(expected + "\n");
			}
			assertThat(result.isolation()).contains(expectedMechanism(profile));
		}
	}

	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void nothingTheCommandSendsReachesTheTestsLoopbackListenersOrUnixSockets(Profile profile, User user)
			throws Exception {
		InetAddress ipv6 = InetAddress.getByName("::1");
		assumeThat(NetworkInterface.getByInetAddress(ipv6)).as("host has ::1").isNotNull();
		InetAddress ipv4 = InetAddress.getByName("127.0.0.1");
		try (ContainerJvm jvm = strict(profile, user);
				LoopbackListeners.Tcp tcp4 = new LoopbackListeners.Tcp(ipv4);
				LoopbackListeners.Tcp tcp6 = new LoopbackListeners.Tcp(ipv6);
				LoopbackListeners.Udp udp = new LoopbackListeners.Udp(ipv4, 0);
				LoopbackListeners.Udp dns = new LoopbackListeners.Udp(ipv4, 0);
				UnixSockets.AbstractListener abstractListener = new UnixSockets.AbstractListener(
						"cave-sandbox-container-" + UUID.randomUUID());
				UnixSockets.PathListener pathListener = new UnixSockets.PathListener(
						this.directory.resolve("listener.sock"))) {
			// Outside the commands' working directory (a socket beneath it is the
			// command's
			// own and reachable by design). The JVM's user may connect to it: only the
			// sandbox stands in the way.
			Files.setPosixFilePermissions(pathListener.path(), PosixFilePermissions.fromString("rwxrwxrwx"));
			copyEgressScript(jvm.commands());
			String[] arguments = { Integer.toString(tcp4.port()), Integer.toString(tcp6.port()),
					Integer.toString(udp.port()), Integer.toString(dns.port()), abstractListener.address().substring(1),
					pathListener.path().toString() };
			Map<String, String> isolated = attempts(jvm.isolated(egress("isolated", arguments)));
			assertThat(isolated).containsOnlyKeys(ATTEMPTS)
				.allSatisfy((attempt, outcome) -> assertThat(outcome).as(attempt).isNotEqualTo("OK"));
			Map<String, String> control = attempts(jvm.unisolated(egress("control", arguments)));
			assertThat(control).containsOnlyKeys(ATTEMPTS)
				.allSatisfy((attempt, outcome) -> assertThat(outcome).as(attempt).isEqualTo("OK"));
			assertThat(tcp4.awaitAccepted("control tcp4-mapped\n")).containsExactly("control tcp4\n",
					"control tcp4-mapped\n");
			assertThat(tcp6.awaitAccepted("control tcp6\n")).containsExactly("control tcp6\n");
			assertThat(udp.awaitReceived("control udp4-mapped\n")).containsExactly("control udp4\n",
					"control udp4-mapped\n");
			assertThat(dns.awaitReceived("cave-sandbox-control")).singleElement()
				.satisfies((query) -> assertThat(query).contains("cave-sandbox-control"));
			assertThat(abstractListener.awaitReceived("control unix-abstract"))
				.containsExactly("control unix-abstract");
			assertThat(pathListener.awaitReceived("control unix-path\n")).containsExactly("control unix-path\n");
		}
	}

	/**
	 * A private loopback exists only where the mechanism has a network namespace: the
	 * seccomp mechanism refuses the request with a coded error instead of running without
	 * it; on the namespaces mechanism the command reaches its own listener on its own
	 * loopback, and the test's listener on the host's loopback sees nothing.
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void privateLoopbackIsGivenOnlyWhereTheMechanismHasANetworkNamespace(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = strict(profile, user);
				LoopbackListeners.Tcp host = new LoopbackListeners.Tcp(InetAddress.getByName("127.0.0.1"))) {
			String script = "import socket\nserver = socket.create_server(('127.0.0.1', 0))\n"
					+ "socket.create_connection(server.getsockname(), timeout=10).close()\nprint('own loopback')\n"
					+ "try:\n    socket.create_connection(('127.0.0.1', " + host.port() + "), timeout=10).close()\n"
					+ "    print('host loopback reached')\nexcept OSError as ex:\n    print('host loopback:', ex.errno)\n";
			ContainerJvm.Result result = jvm.withLoopback(ContainerConfinement.PYTHON, "-c", script);
			if (profile == Profile.DOCKER_DEFAULT) {
				assertThat(result.error()).isEqualTo(InvalidExecutionRequestException.CODE);
				assertThat(result.stderr()).contains("has no network namespace");
			}
			else {
				assertThat(result.error()).as(result.stderr()).isNull();
				assertThat(result.exitCode()).as(result.stderr()).isZero();
				// ECONNREFUSED: nothing listens on that port of the sandbox's own
				// loopback.
				assertThat(result.stdout()).as(result.stderr()).isEqualTo("own loopback\nhost loopback: 111\n");
			}
			ContainerJvm.Result control = jvm.unisolated("bash", "-c",
					"exec 3<>/dev/tcp/127.0.0.1/" + host.port() + " && echo control >&3");
			assertThat(control.exitCode()).as(control.stderr()).isZero();
			assertThat(host.awaitAccepted("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * A timeout ends a tree of a background child, one in a session of its own
	 * (attempted: {@code setsid}, which every mechanism refuses, {@link NewSession},
	 * after which it runs in the command's session, as the command's stderr shows), a
	 * double-forked one and the command's own, all seen running.
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void timeoutLeavesNoProcess(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = strict(profile, user)) {
			boolean refused = sessionRefused(profile);
			// A generous timeout, so that the tree surely runs before it ends.
			String id = jvm.start(true, Duration.ofSeconds(15), "sh", "-c",
					"sleep " + this.marker + "1 & " + NewSession.setsid(refused, "sleep " + this.marker + "2")
							+ " & (sleep " + this.marker + "3 &); sleep " + this.marker + "4; wait");
			await().atMost(PATIENCE).until(() -> sleeping(this.marker).size() == 4);
			ContainerJvm.Result result = jvm.awaitResult(id);
			assertThat(result.timedOut()).as("%s", result).isTrue();
			NewSession.assertAttempted(refused, result.stderr());
			await().atMost(PATIENCE).until(() -> SandboxHolderMain.anyNaming(this.marker).isEmpty());
		}
	}

	/**
	 * A killed JVM leaves neither a background child nor one that attempted a session of
	 * its own and runs once its {@code setsid} has been refused ({@link NewSession}).
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void killedJvmLeavesNoProcess(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = strict(profile, user)) {
			jvm.start(true, null, "sh", "-c", "sleep " + this.marker + "1 & "
					+ NewSession.setsid(sessionRefused(profile), "sleep " + this.marker + "2") + "; wait");
			await().atMost(PATIENCE).until(() -> sleeping(this.marker).size() == 2);
			jvm.kill();
			await().atMost(PATIENCE).until(() -> SandboxHolderMain.anyNaming(this.marker).isEmpty());
		}
	}

	/**
	 * A daemon in a session of its own and a double-forked one, each saying it runs
	 * before the command exits, die with their execution. On the seccomp mechanism, which
	 * refuses a new session ({@link NewSession}), the first runs in the command's process
	 * group once its {@code setsid} has been refused, which the command's stderr shows.
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void daemonIsKilledWithItsExecution(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = strict(profile, user)) {
			boolean refused = sessionRefused(profile);
			ContainerJvm.Result result = jvm.isolated("sh", "-c",
					NewSession.setsid(refused, "sh -c 'echo > setsid; exec sleep " + this.marker + "1'")
							+ " & (sh -c 'echo > forked; exec sleep " + this.marker + "2' &); "
							+ "while [ ! -e setsid ] || [ ! -e forked ]; do sleep 0.1; done; echo started");
			assertThat(result.exitCode()).as(result.stderr()).isZero();
			assertThat(result.stdout()).isEqualTo("started\n");
			NewSession.assertAttempted(refused, result.stderr());
			await().atMost(PATIENCE).until(() -> SandboxHolderMain.anyNaming(this.marker).isEmpty());
		}
	}

	/**
	 * Without a PID namespace the command shares the JVM's view of processes, and with
	 * the same uid it could read the JVM's environment (where a container keeps its
	 * secrets) and signal it: the mechanisms refuse both. The control, the same script
	 * run by the JVM without the sandbox, reads the secret and delivers the (harmless)
	 * SIGCONT.
	 */
	@ParameterizedTest(name = "{0} as {1}")
	@MethodSource("containers")
	@Timeout(300)
	void commandNeitherReadsTheJvmsEnvironmentNorSignalsIt(Profile profile, User user) throws Exception {
		try (ContainerJvm jvm = strict(profile, user)) {
			String script = "if grep -q " + ContainerJvm.SECRET + " /proc/" + jvm.pid()
					+ "/environ; then echo environment=read; else echo environment=refused; fi; if kill -CONT "
					+ jvm.pid() + "; then echo signal=delivered; else echo signal=refused; fi";
			ContainerJvm.Result isolated = jvm.isolated("sh", "-c", script);
			assertThat(isolated.exitCode()).as(isolated.stderr()).isZero();
			assertThat(isolated.stdout()).isEqualTo("environment=refused\nsignal=refused\n");
			ContainerJvm.Result control = jvm.unisolated("sh", "-c", script);
			assertThat(control.exitCode()).as(control.stderr()).isZero();
			assertThat(control.stdout()).isEqualTo("environment=read\nsignal=delivered\n");
		}
	}

	private static String expectedMechanism(Profile profile) {
		return (profile == Profile.DOCKER_DEFAULT) ? "seccomp" : "namespaces";
	}

	/**
	 * Whether the mechanism the container allows refuses its command a session of its own
	 * ({@link NewSession}).
	 */
	private static boolean sessionRefused(Profile profile) {
		return NewSession.refused(MechanismChoice.valueOf(expectedMechanism(profile).toUpperCase(Locale.ROOT)));
	}

	private static String uid(User user) {
		return (user == User.ROOT) ? "0" : Long.toString(NobodyCommandLines.NOBODY);
	}

	/**
	 * A child JVM in the container whose strict-mode probe chose the mechanism the
	 * container allows: a test must not pass on another mechanism than the one it is
	 * about.
	 */
	private ContainerJvm strict(Profile profile, User user) throws Exception {
		ContainerJvm jvm = ContainerJvm.start(this.directory, profile, user, MechanismChoice.AUTO);
		if (!expectedMechanism(profile).equals(jvm.verdict().mechanism())) {
			String log = jvm.log();
			jvm.close();
			assertThat(jvm.verdict().mechanism()).as("%s; log: %s", jvm.verdict(), log)
				.isEqualTo(expectedMechanism(profile));
		}
		return jvm;
	}

	/** The running {@code sleep} processes whose argument starts with the marker. */
	private static List<ProcessHandle> sleeping(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info().command().orElse("").endsWith("/sleep"))
			.filter((process) -> process.info().commandLine().orElse("").matches(".*sleep " + marker + "\\d"))
			.toList();
	}

	private static void copyEgressScript(Path directory) throws IOException {
		try (InputStream script = ContainerMechanismsTests.class.getResourceAsStream(EGRESS_SCRIPT)) {
			assertThat(script).as(EGRESS_SCRIPT).isNotNull();
			Path copy = directory.resolve(EGRESS_SCRIPT);
			Files.write(copy, script.readAllBytes());
			Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
		}
	}

	private static String[] egress(String message, String... arguments) {
		return Stream.concat(Stream.of(ContainerConfinement.PYTHON, EGRESS_SCRIPT, message), Stream.of(arguments))
			.toArray(String[]::new);
	}

	private static Map<String, String> attempts(ContainerJvm.Result result) {
		assertThat(result.error()).as(result.stderr()).isNull();
		assertThat(result.exitCode()).as(result.stderr()).isZero();
		Map<String, String> attempts = new LinkedHashMap<>();
		result.stdout()
			.lines()
			.forEach((line) -> attempts.put(line.substring(0, line.indexOf('=')),
					line.substring(line.indexOf('=') + 1)));
		return attempts;
	}

}
