package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutorTests;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.probe.LinuxProbe;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The boundary, asked the same questions of every Linux mechanism
 * ({@link ForEachLinuxMechanism}), which must give the same answers: no TCP, UDP or DNS
 * reaches the host's loopback, host unix sockets (on the filesystem and abstract) stay
 * unreachable, a private loopback works without opening the host's, the host's filesystem
 * is read-only outside the working directory, and the command has a session, an IPC
 * namespace and a PID namespace of its own and no capability. Each check that something
 * is blocked has an unisolated control run that shows the same check can fail. Network
 * checks touch only listeners that the test opens itself, on loopback.
 * <p>
 * "Nothing arrived" is shown without a bound on time: the isolated command has finished
 * before an unisolated control sends a different message to the same listener, and
 * connections and datagrams queue in the order they came, so the listener returns the
 * control's message alone.
 * <p>
 * A mechanism that does not give a namespace
 * ({@link dev.cavesandbox.internal.mechanism.SandboxMechanism#namespaces()}; its verdict
 * names it under {@code not given: }) is asked what stands in for it instead: without a
 * mount namespace the seccomp filter refuses {@code socket(AF_UNIX)} and Landlock refuses
 * writes outside the working directory; without a network namespace every socket is
 * refused and a private loopback is refused with a code; without a PID namespace
 * Landlock's signal scope keeps host processes out of reach.
 */
@EnabledOnOs(OS.LINUX)
class IsolationBoundaryTests {

	private static final InetAddress IPV4_LOOPBACK = InetAddress.getLoopbackAddress();

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

	private static SandboxSettings.Builder settings(MechanismChoice mechanism) {
		return LinuxMechanisms.builder(mechanism)
			.timeout(Duration.ofSeconds(20))
			.killGracePeriod(Duration.ofMillis(300));
	}

	/**
	 * The executor of one mechanism, verified by the probe (with a private loopback) and
	 * kept for the class.
	 */
	private static final String NO_ADDRESS_FAMILY = "Address family not supported by protocol";

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.computeIfAbsent(mechanism, (key) -> {
			SandboxSettings settings = settings(key).build();
			IsolationCapability capability = LinuxMechanisms.verified(settings);
			assertThat(capability.privateLoopback()).as("private loopback of %s", key)
				.isEqualTo(gives(key, LinuxNamespace.NETWORK));
			return ProcessIsolatedExecutor.isolated(settings, capability);
		});
	}

	/** Whether the mechanism gives the command the namespace, as its probe verified. */
	private static boolean gives(MechanismChoice mechanism, LinuxNamespace namespace) {
		return LinuxMechanisms.namespaces(mechanism).contains(namespace);
	}

	/** The facts of the mechanism's verdict with this class's settings. */
	private static List<String> verdict(MechanismChoice mechanism) {
		return LinuxMechanisms.verified(settings(mechanism).build()).verified();
	}

	/**
	 * A mechanism without a network namespace refuses a request for a private loopback
	 * with a code, rather than running the command on the host's network stack.
	 */
	private static void assertPrivateLoopbackRefused(MechanismChoice mechanism, ExecutionRequest request) {
		assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: network namespace"));
		assertThatExceptionOfType(InvalidExecutionRequestException.class)
			.isThrownBy(() -> isolated(mechanism).execute(request))
			.withMessageContaining("has no network namespace")
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
	}

	/**
	 * Two layers stop it: the launcher's seccomp filter refuses the socket itself
	 * (EAFNOSUPPORT) unless the request asks for a private loopback; with one, the
	 * command's network namespace has no route to the host's loopback.
	 */
	@ForEachLinuxMechanism
	void tcpConnectToHostIpv4LoopbackFailsAndNothingArrives(MechanismChoice mechanism) throws IOException {
		try (LoopbackListeners.Tcp listener = new LoopbackListeners.Tcp(IPV4_LOOPBACK)) {
			ExecutionResult filtered = isolated(mechanism).execute("bash", "-c",
					tcpSend("127.0.0.1", listener, "filtered"));
			assertThat(filtered.exitCode()).isNotZero();
			assertThat(filtered.stderrText()).contains("socket: " + NO_ADDRESS_FAMILY);
			// The private lo is up, and nothing listens there.
			assertTcpWithAPrivateLoopbackFails(mechanism, "127.0.0.1", listener, "Connection refused");
			ExecutionResult control = unisolated.execute("bash", "-c", tcpSend("127.0.0.1", listener, "control"));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitAccepted("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * The host's {@code ::1}: the control's connection shows that the listener is
	 * reachable there from the host (its peer is {@code ::1}, not an IPv4 address), so
	 * the isolated failures are the boundary's doing.
	 */
	@ForEachLinuxMechanism
	void tcpConnectToHostIpv6LoopbackFailsAndNothingArrives(MechanismChoice mechanism) throws IOException {
		InetAddress ipv6 = InetAddress.getByName("::1");
		assumeThat(NetworkInterface.getByInetAddress(ipv6)).as("host has ::1").isNotNull();
		try (LoopbackListeners.Tcp listener = new LoopbackListeners.Tcp(ipv6)) {
			ExecutionResult filtered = isolated(mechanism).execute("bash", "-c", tcpSend("::1", listener, "filtered"));
			assertThat(filtered.exitCode()).isNotZero();
			assertThat(filtered.stderrText()).contains("socket: " + NO_ADDRESS_FAMILY);
			assertTcpWithAPrivateLoopbackFails(mechanism, "::1", listener, "Cannot assign requested address",
					"Network is unreachable", "Connection refused");
			ExecutionResult control = unisolated.execute("bash", "-c", tcpSend("::1", listener, "control"));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitAccepted("control\n")).containsExactly("control\n");
			assertThat(listener.peers()).containsExactly(ipv6);
		}
	}

	/**
	 * With a private loopback the connection fails with one of the errors; a mechanism
	 * without a network namespace refuses the request.
	 */
	private static void assertTcpWithAPrivateLoopbackFails(MechanismChoice mechanism, String address,
			LoopbackListeners.Tcp listener, String... errors) {
		ExecutionRequest request = ExecutionRequest.builder("bash", "-c", tcpSend(address, listener, "namespaced"))
			.loopback(true)
			.build();
		if (!gives(mechanism, LinuxNamespace.NETWORK)) {
			assertPrivateLoopbackRefused(mechanism, request);
			return;
		}
		ExecutionResult namespaced = isolated(mechanism).execute(request);
		assertThat(namespaced.exitCode()).isNotZero();
		assertThat(namespaced.stderrText()).containsAnyOf(errors);
	}

	private static String tcpSend(String address, LoopbackListeners.Tcp listener, String message) {
		return "exec 3<>/dev/tcp/" + address + "/" + listener.port() + " && echo " + message + " >&3";
	}

	@ForEachLinuxMechanism
	void udpDatagramToHostLoopbackNeverArrives(MechanismChoice mechanism) throws IOException {
		try (LoopbackListeners.Udp listener = new LoopbackListeners.Udp(IPV4_LOOPBACK, 0)) {
			String send = "echo %s > /dev/udp/127.0.0.1/" + listener.port();
			ExecutionResult filtered = isolated(mechanism).execute("bash", "-c", send.formatted("filtered"));
			assertThat(filtered.exitCode()).isNotZero();
			assertThat(filtered.stderrText()).contains("socket: " + NO_ADDRESS_FAMILY);
			// With a private loopback, which is up, the datagram goes to the sandbox's
			// own lo and is lost there.
			ExecutionRequest namespacedRequest = ExecutionRequest.builder("bash", "-c", send.formatted("namespaced"))
				.loopback(true)
				.build();
			if (gives(mechanism, LinuxNamespace.NETWORK)) {
				ExecutionResult namespaced = isolated(mechanism).execute(namespacedRequest);
				assertThat(namespaced.exitCode()).as(namespaced.stderrText()).isZero();
			}
			else {
				assertPrivateLoopbackRefused(mechanism, namespacedRequest);
			}
			ExecutionResult control = unisolated.execute("bash", "-c", send.formatted("control"));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * The child's resolver is pointed at a DNS listener of the test on 127.0.0.1:53
	 * (through a nested mount namespace inside the sandbox), so that even a broken
	 * sandbox would send its query to loopback only. Binding port 53 needs root. The
	 * resolver file lies in the working directory, since the rest of /tmp is hidden from
	 * the command. Landlock refuses every mount to a mechanism without a mount namespace,
	 * so there the command sends a DNS query of its own making to 127.0.0.1:53 instead of
	 * asking the resolver (which would ask the host's name servers).
	 */
	@ForEachLinuxMechanism
	void dnsLookupFailsAndNoQueryArrives(MechanismChoice mechanism, @TempDir Path directory) throws IOException {
		assumeThat(System.getProperty("user.name")).as("binding 127.0.0.1:53 needs root").isEqualTo("root");
		if (!gives(mechanism, LinuxNamespace.MOUNT)) {
			assertHandMadeDnsQueryNeverArrives(mechanism);
			return;
		}
		Path resolvConf = directory.resolve("resolv.conf");
		Files.writeString(resolvConf, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
		// Traversable in the lookup's own user namespace, which maps no owner of the
		// directory (a root JVM's command user reaches it by CAP_DAC_OVERRIDE only in
		// the sandbox's namespace).
		Files.setPosixFilePermissions(directory, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
		// The lookup binds its resolver file in a user namespace of its own.
		try (LoopbackListeners.Udp dns = dnsListener();
				ProcessIsolatedExecutor nesting = LinuxMechanisms.isolated(mechanism,
						(settings) -> settings.timeout(Duration.ofSeconds(20)).userNamespaces(true))) {
			for (boolean loopback : List.of(false, true)) {
				ExecutionResult result = nesting.execute(ExecutionRequest.builder(lookup(resolvConf, "isolated"))
					.workingDirectory(directory)
					.loopback(loopback)
					.build());
				assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(2);
			}
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder(lookup(resolvConf, "control")).workingDirectory(directory).build());
			assertThat(control.exitCode()).as(control.stderrText()).isEqualTo(2);
			assertThat(dns.awaitReceived("cave-sandbox-control"))
				.allSatisfy((query) -> assertThat(query).contains("cave-sandbox-control"));
		}
	}

	private static void assertHandMadeDnsQueryNeverArrives(MechanismChoice mechanism) throws IOException {
		try (LoopbackListeners.Udp dns = dnsListener()) {
			List<Boolean> loopbacks = gives(mechanism, LinuxNamespace.NETWORK) ? List.of(false, true) : List.of(false);
			for (boolean loopback : loopbacks) {
				ExecutionResult result = isolated(mechanism)
					.execute(ExecutionRequest.builder(dnsQuery("isolated")).loopback(loopback).build());
				if (loopback) {
					// The socket is allowed with a private loopback, whose lo loses the
					// query.
					assertThat(result.exitCode()).as(result.stderrText()).isZero();
				}
				else {
					assertThat(result.exitCode()).isNotZero();
					assertThat(result.stderrText()).contains(NO_ADDRESS_FAMILY);
				}
			}
			ExecutionResult control = unisolated.execute(ExecutionRequest.builder(dnsQuery("control")).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(dns.awaitReceived("cave-sandbox-control"))
				.allSatisfy((query) -> assertThat(query).contains("cave-sandbox-control"));
		}
	}

	/**
	 * A DNS query (RFC 1035: header, one question for an A record) for a name under
	 * {@code example.}, sent by hand to 127.0.0.1:53 and to nowhere else.
	 */
	private static List<String> dnsQuery(String label) {
		String program = """
				import socket, struct, sys
				name = b"".join(bytes([len(p)]) + p for p in sys.argv[1].encode().split(b".")) + b"\\0"
				query = struct.pack(">6H", 0x1234, 0x0100, 1, 0, 0, 0) + name + struct.pack(">2H", 1, 1)
				socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(query, ("127.0.0.1", 53))
				""";
		return List.of("python3", "-c", program, "cave-sandbox-" + label + ".example");
	}

	/**
	 * {@code getent hosts} of a name under {@code example.}, with the resolver file bound
	 * over {@code /etc/resolv.conf} in a nested mount namespace; exit 2 when nothing
	 * answers: the launcher's filter refuses the resolver's socket without a private
	 * loopback, and with one the query goes to the sandbox's own {@code lo}.
	 */
	private static List<String> lookup(Path resolvConf, String label) {
		String script = "mount --bind " + resolvConf + " /etc/resolv.conf && getent hosts cave-sandbox-" + label
				+ ".example";
		// --keep-caps rather than --map-root-user: a root caller's command may not map
		// uid 0
		// of a new user namespace to the host's uid 0 (that needs CAP_SETFCAP, Linux
		// 5.12+).
		return List.of("unshare", "--user", "--mount", "--keep-caps", "sh", "-c", script);
	}

	/**
	 * A DNS listener on 127.0.0.1:53; the test is skipped where another process holds the
	 * port.
	 */
	private static LoopbackListeners.Udp dnsListener() throws IOException {
		try {
			return new LoopbackListeners.Udp(IPV4_LOOPBACK, 53);
		}
		catch (java.net.BindException ex) {
			assumeThat(ex).as("127.0.0.1:53 is held by another process").isNull();
			throw ex;
		}
	}

	/**
	 * A mechanism without a network namespace shows the host's interfaces, and refuses
	 * the command every socket instead (no address given, nothing sent); one without a
	 * PID namespace names it in its verdict.
	 */
	@ForEachLinuxMechanism
	void childSeesOnlyLoopbackInItsOwnPidNamespace(MechanismChoice mechanism) throws IOException {
		String script = "cat /proc/net/dev; readlink /proc/self/ns/pid";
		ExecutionResult control = unisolated.execute("sh", "-c", script);
		assertThat(interfaces(control.stdoutText())).as("the host's interfaces").contains("lo").hasSizeGreaterThan(1);
		String hostPidNamespace = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
		assertThat(control.stdoutText()).contains(hostPidNamespace);
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		if (gives(mechanism, LinuxNamespace.NETWORK)) {
			assertThat(interfaces(result.stdoutText())).containsExactly("lo");
		}
		else {
			assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: network namespace"));
			ExecutionResult socket = isolated(mechanism).execute("python3", "-c",
					"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)");
			assertThat(socket.exitCode()).isNotZero();
			assertThat(socket.stderrText()).contains(NO_ADDRESS_FAMILY);
		}
		if (gives(mechanism, LinuxNamespace.PID)) {
			assertThat(result.stdoutText()).contains("pid:[").doesNotContain(hostPidNamespace);
		}
		else {
			assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: PID namespace"));
		}
		assertThat(result.isolation()).isEqualTo(new Isolation(mechanism.name().toLowerCase(), true));
	}

	/**
	 * The interface names of a {@code /proc/net/dev} listing (proc(5)): each before a
	 * colon.
	 */
	private static List<String> interfaces(String output) {
		return output.lines()
			.filter((line) -> line.contains(":") && !line.contains("|") && !line.startsWith("pid:"))
			.map((line) -> line.substring(0, line.indexOf(':')).trim())
			.toList();
	}

	@ForEachLinuxMechanism
	void exitCodeAndBinaryOutputPassThroughUnchanged(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute("sh", "-c",
				"printf '\\000\\377\\001abc'; printf err >&2; exit 42");
		assertThat(result.exitCode()).isEqualTo(42);
		assertThat(result.stdout()).containsExactly(0, 0xff - 256, 1, 'a', 'b', 'c');
		assertThat(result.stderrText()).isEqualTo("err");
		assertThat(result.succeeded()).isFalse();
		assertThat(result.timedOut()).isFalse();
	}

	@ForEachLinuxMechanism
	void stdinBytesReachTheChild(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute(
				ExecutionRequest.builder("tr", "a-z", "A-Z").stdin("hello".getBytes(StandardCharsets.UTF_8)).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo("HELLO");
	}

	/**
	 * The caller's uid, except for a host root JVM's command user: on the seccomp
	 * mechanism a uid of the command user range of its own, elsewhere the command user.
	 */
	@ForEachLinuxMechanism
	void childKeepsTheCallersUid(MechanismChoice mechanism) throws IOException {
		String uid = new String(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).trim();
		assertThat(uid).matches("[0-9]+");
		ExecutionResult result = isolated(mechanism).execute("id", "-u");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		if (commandUser(mechanism) && mechanism == MechanismChoice.SECCOMP) {
			SandboxSettings.CommandUserRange range = SandboxSettings.CommandUserRange.DEFAULT;
			assertThat(Long.parseLong(result.stdoutText().trim())).isBetween(range.first(), range.last());
		}
		else {
			assertThat(result.stdoutText())
				.isEqualTo((commandUser(mechanism) ? SandboxSettings.Linux.DEFAULT_COMMAND_USER : uid) + "\n");
		}
	}

	/**
	 * Whether the command runs as the command user: a host root JVM's, on every mechanism
	 * (the default work directory is one the seccomp mechanism's command user can pass).
	 */
	private static boolean commandUser(MechanismChoice mechanism) {
		return "root".equals(System.getProperty("user.name")) && LinuxProbe.initialUserNamespace();
	}

	@ForEachLinuxMechanism
	void parentVariablesDoNotLeakUnlessNamed(MechanismChoice mechanism) {
		String secret = System.getenv("CAVE_SANDBOX_TEST_SECRET");
		assertThat(secret).as("set by surefire").isNotBlank();
		ExecutionResult result = isolated(mechanism).execute("env");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).doesNotContain("CAVE_SANDBOX_TEST_SECRET")
			.doesNotContain(secret)
			.contains("PATH=" + SandboxSettings.BASELINE_PATH)
			.contains("LANG=C.UTF-8");
		ExecutionResult passed = isolated(mechanism)
			.execute(ExecutionRequest.builder("env").passEnvironment("CAVE_SANDBOX_TEST_SECRET").build());
		assertThat(passed.stdoutText()).contains("CAVE_SANDBOX_TEST_SECRET=" + secret);
		ExecutionResult set = isolated(mechanism)
			.execute(ExecutionRequest.builder("env").environment("GREETING", "hi").build());
		assertThat(set.stdoutText()).contains("GREETING=hi");
	}

	@ForEachLinuxMechanism
	void hostUnixSocketUnderTmpIsUnreachable(MechanismChoice mechanism) throws IOException {
		Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		assertHostSocketIsHidden(mechanism, socket);
	}

	@ForEachLinuxMechanism
	void hostUnixSocketUnderRunIsUnreachable(MechanismChoice mechanism) throws IOException {
		assumeThat(Files.isWritable(Path.of("/run"))).as("creating a socket in /run needs root").isTrue();
		Path socket = Path.of("/run", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		assertHostSocketIsHidden(mechanism, socket);
	}

	/**
	 * Hidden by a tmpfs in the sandbox's mount namespace; without one the socket stays in
	 * sight, and the launcher's supervisor refuses a connect outside the working
	 * directory instead.
	 */
	private void assertHostSocketIsHidden(MechanismChoice mechanism, Path socket) throws IOException {
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket)) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "isolated")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			assertThat(result.stderrText())
				.contains(unixSocketRefusal(mechanism, socket, "connect: No such file or directory"));
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "control")).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * What a unix socket client gets on a mechanism with a mount namespace (the given
	 * message), and on one without: the launcher's supervisor refuses a path outside the
	 * working directory ({@code EACCES}), but for a name directly in {@code /tmp}, which
	 * is the command's own there, as in a private {@code /tmp} (nothing of that name).
	 */
	private static String unixSocketRefusal(MechanismChoice mechanism, Path socket, String withMountNamespace) {
		return (gives(mechanism, LinuxNamespace.MOUNT) || Path.of("/tmp").equals(socket.getParent()))
				? withMountNamespace : "connect: Permission denied";
	}

	@ForEachLinuxMechanism
	void hostAbstractUnixSocketIsUnreachable(MechanismChoice mechanism) throws IOException {
		try (UnixSockets.AbstractListener listener = new UnixSockets.AbstractListener(
				"cave-sandbox-test-" + UUID.randomUUID())) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client(listener.address(), "isolated")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			// A network namespace has an abstract namespace of its own; without one
			// (seccomp)
			// the supervisor refuses every abstract name.
			assertThat(result.stderrText()).contains(gives(mechanism, LinuxNamespace.NETWORK)
					? "connect: Connection refused" : "connect: Permission denied");
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder(UnixSockets.client(listener.address(), "control")).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control")).containsExactly("control");
		}
	}

	/**
	 * The control that shows why directories are hidden: the same mechanism without
	 * hidden directories (but the home of the private directories) lets the command reach
	 * a host socket, network namespace or not. A mechanism without a mount namespace
	 * hides nothing either way, and its supervisor refuses a connect outside the working
	 * directory instead: the socket stays unreachable.
	 */
	@ForEachLinuxMechanism
	void withoutHiddenDirectoriesAHostSocketIsReachable(MechanismChoice mechanism) throws IOException {
		SandboxSettings settings = settings(mechanism).hiddenDirectories(List.of())
			.filesystemView(SandboxSettings.Filesystem.View.HOST)
			.build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		if (!gives(mechanism, LinuxNamespace.MOUNT)) {
			assertThat(capability.verified()).anyMatch((fact) -> fact.startsWith("not given: hidden directories"));
			Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
			try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket);
					ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
				ExecutionResult result = executor
					.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "isolated")).build());
				assertThat(result.exitCode()).isNotZero();
				assertThat(result.stderrText())
					.contains(unixSocketRefusal(mechanism, socket, "connect: No such file or directory"));
				ExecutionResult control = unisolated
					.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "control")).build());
				assertThat(control.exitCode()).as(control.stderrText()).isZero();
				assertThat(listener.awaitReceived("control\n")).containsExactly("control\n");
			}
			return;
		}
		// Only the home of the private directories and the launcher stays hidden.
		assertThat(capability.verified()).contains("hidden: " + PrivateHome.of(settings.workDirectory()).toRealPath()
				+ " (private empty tmpfs, 256 MiB each)");
		Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket);
				ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "leaked")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(listener.awaitReceived("leaked\n")).containsExactly("leaked\n");
		}
	}

	/**
	 * The tmpfs over a hidden directory belongs to a namespace in which the command has
	 * no capability, and a namespace the command creates itself copies the mounts locked
	 * together (mount_namespaces(7)): neither way uncovers the host's directory. A
	 * mechanism without a mount namespace has nothing to uncover: the attempts fail (no
	 * capability, Landlock refuses mounts) and the socket in sight is refused by the
	 * launcher's supervisor.
	 */
	@ForEachLinuxMechanism
	void commandCannotUncoverAHiddenDirectory(MechanismChoice mechanism, @TempDir Path directory) throws IOException {
		Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		Files.writeString(directory.resolve("client.pl"), UnixSockets.CLIENT_PROGRAM);
		String client = "perl client.pl " + socket + " ";
		String script = "umount /tmp; umount -l /tmp; unshare --user --mount --keep-caps sh -c 'umount /tmp; "
				+ "umount -l /tmp; " + client + "uncovered'; " + client + "uncovered";
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket)) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder("sh", "-c", script).workingDirectory(directory).build());
			assertThat(result.exitCode()).isNotZero();
			assertThat(result.stderrText()).contains("umount",
					unixSocketRefusal(mechanism, socket, "connect: No such file or directory"));
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder("sh", "-c", client + "control").workingDirectory(directory).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * What stays visible by design: the working directory, so a socket placed in it is
	 * reachable, on every mechanism (without a mount namespace through the launcher's
	 * supervisor of {@code connect(2)}).
	 */
	@ForEachLinuxMechanism
	void socketInTheWorkingDirectoryIsReachable(MechanismChoice mechanism, @TempDir Path directory) throws IOException {
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(directory.resolve("app.sock"))) {
			// Writable by everyone: the seccomp mechanism's command user is a uid of the
			// host
			// without any capability.
			Files.setPosixFilePermissions(directory.resolve("app.sock"), PosixFilePermissions.fromString("rwxrwxrwx"));
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client("app.sock", "by-design"))
					.workingDirectory(directory)
					.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(listener.awaitReceived("by-design\n")).containsExactly("by-design\n");
		}
	}

	/**
	 * Without a mount namespace the rest of {@code /tmp} stays readable, as the verdict
	 * says; what stays is that the command cannot change it.
	 */
	@ForEachLinuxMechanism
	void privateWorkingDirectoryInTmpIsVisibleButNothingElseOfTmp(MechanismChoice mechanism) throws IOException {
		Path sibling = Files.writeString(Path.of("/tmp", "cave-sandbox-sibling-" + UUID.randomUUID()), "host");
		try {
			if (!gives(mechanism, LinuxNamespace.MOUNT)) {
				assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: hidden directories"));
				ExecutionResult result = isolated(mechanism).execute("sh", "-c",
						"pwd; echo data > file; cat file; echo changed > " + sibling);
				List<String> lines = result.stdoutText().lines().toList();
				assertThat(lines.get(0)).startsWith("/tmp/cave-sandbox-");
				assertThat(lines.subList(1, lines.size())).containsExactly("data");
				assertThat(result.exitCode()).isNotZero();
				assertThat(result.stderrText()).contains("Permission denied");
				assertThat(sibling).hasContent("host");
				return;
			}
			ExecutionResult result = isolated(mechanism).execute("sh", "-c",
					"pwd; echo data > file; cat file; ls -A /tmp | wc -l; cat " + sibling);
			List<String> lines = result.stdoutText().lines().toList();
			assertThat(lines.get(0)).startsWith("/tmp/cave-sandbox-");
			assertThat(lines.subList(1, 3)).containsExactly("data", "1");
			assertThat(result.stderrText()).contains("No such file or directory");
			assertThat(unisolated.execute("cat", sibling.toString()).stdoutText()).isEqualTo("host");
		}
		finally {
			Files.delete(sibling);
		}
	}

	/**
	 * Two executions at the same time, each in a private working directory: the second
	 * cannot list or read the first's, even given its path; an unisolated command given
	 * the same path reads it. Without a mount namespace the first's directory stays
	 * readable, as the verdict says, and the second cannot write into it.
	 */
	@ForEachLinuxMechanism
	void concurrentExecutionsCannotSeeEachOthersWorkingDirectories(MechanismChoice mechanism) {
		String marker = "37" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		ByteArrayOutputStream firstOutput = new ByteArrayOutputStream();
		CompletableFuture<ExecutionResult> first = isolated(mechanism).executeAsync(
				ExecutionRequest.builder("sh", "-c", "echo first-secret > marker && pwd && exec sleep " + marker)
					.stdoutSink(firstOutput)
					.build());
		try {
			await().atMost(Duration.ofSeconds(30))
				.until(() -> firstOutput.toString(StandardCharsets.UTF_8).endsWith("\n"));
			Path firstDirectory = Path.of(firstOutput.toString(StandardCharsets.UTF_8).trim());
			assertThat(firstDirectory.resolve("marker")).as("the first execution is running")
				.hasContent("first-secret");
			if (!gives(mechanism, LinuxNamespace.MOUNT)) {
				assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: hidden directories"));
				ExecutionResult second = isolated(mechanism).execute("sh", "-c", "echo overwritten > "
						+ firstDirectory.resolve("marker") + "; echo planted > " + firstDirectory.resolve("planted"));
				assertThat(second.exitCode()).isNotZero();
				assertThat(second.stderrText()).contains("Permission denied");
				assertThat(firstDirectory.resolve("marker")).hasContent("first-secret");
				assertThat(firstDirectory.resolve("planted")).doesNotExist();
				assertThat(first).isNotDone();
				return;
			}
			String look = "pwd; ls -A " + firstDirectory.getParent() + "; cat " + firstDirectory.resolve("marker");
			ExecutionResult second = isolated(mechanism).execute("sh", "-c", look);
			List<String> lines = second.stdoutText().lines().toList();
			assertThat(lines).hasSize(2);
			Path secondDirectory = Path.of(lines.get(0));
			assertThat(secondDirectory).isNotEqualTo(firstDirectory);
			assertThat(secondDirectory.getParent()).isEqualTo(firstDirectory.getParent());
			assertThat(lines.get(1)).as("the parent lists only the second's own directory")
				.isEqualTo(secondDirectory.getFileName().toString());
			assertThat(second.exitCode()).isNotZero();
			assertThat(second.stderrText()).contains(firstDirectory + "/marker: No such file or directory");
			assertThat(first).isNotDone();
			ExecutionResult control = unisolated.execute("cat", firstDirectory.resolve("marker").toString());
			assertThat(control.stdoutText()).isEqualTo("first-secret\n");
		}
		finally {
			first.cancel(true);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
		}
	}

	/**
	 * A working directory outside the hidden directories, on the read-only root, whose
	 * name has quotes, blanks and shell syntax: it stays writable and nothing in its name
	 * runs.
	 */
	@ForEachLinuxMechanism
	void workingDirectoryWithQuotesSpacesAndShellSyntaxIsUsedAsIs(MechanismChoice mechanism) throws IOException {
		Path parent = VisibleDirectories.create("hostile-");
		Path directory = Files.createDirectory(parent.resolve("it's a $(touch pwned) `dir`; x"));
		ExecutionResult result = isolated(mechanism).execute(
				ExecutionRequest.builder("sh", "-c", "pwd; echo kept > out.txt").workingDirectory(directory).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo(directory.toRealPath() + "\n");
		assertThat(directory.resolve("out.txt")).hasContent("kept");
		assertThat(parent.resolve("pwned")).doesNotExist();
		DirectoryTrees.delete(parent);
	}

	/**
	 * A read-only bind of the root; without a mount namespace, Landlock's refusal of
	 * writes outside the working directory.
	 */
	@ForEachLinuxMechanism
	void hostFilesystemIsReadOnlyOutsideTheWorkingDirectory(MechanismChoice mechanism) throws IOException {
		Path outside = VisibleDirectories.create("read-only-test-");
		Path file = outside.resolve(mechanism + "-" + UUID.randomUUID());
		// Listed, so that the system view shows it: read-only, as a listed readable path.
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("touch", file.toString()).readablePaths(outside).build());
		assertThat(result.exitCode()).isNotZero();
		assertThat(result.stderrText())
			.contains(gives(mechanism, LinuxNamespace.MOUNT) ? "Read-only file system" : "Permission denied");
		assertThat(file).doesNotExist();
		assertThat(unisolated.execute("touch", file.toString()).exitCode()).isZero();
		assertThat(file).exists();
		Files.delete(file);
	}

	/**
	 * Outside the working directory the command changes no file's mode or times either: a
	 * file of the JVM's user made writable by others, or a directory of the JVM's made
	 * open to them, is a write by another name. The read-only root refuses both (EROFS).
	 * Landlock handles no such right, so a mechanism without a mount namespace does not
	 * give it: its verdict says so (a {@code not given:} fact), and a write to the file's
	 * contents is still refused. The control shows that the JVM's user may change both.
	 */
	@ForEachLinuxMechanism
	void hostFilesKeepTheirModeAndTimesOutsideTheWorkingDirectory(MechanismChoice mechanism) throws IOException {
		Path file = Files.writeString(
				VisibleDirectories.create("metadata-test-").resolve(mechanism + "-" + UUID.randomUUID()), "host");
		Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
		if (!gives(mechanism, LinuxNamespace.MOUNT)) {
			assertThat(verdict(mechanism))
				.anyMatch((fact) -> fact.startsWith("not given: the metadata of files outside the working directory"));
			String write = "if echo changed > " + file + "; then echo written; else echo refused; fi";
			ExecutionResult result = isolated(mechanism).execute("sh", "-c", write);
			assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("refused\n");
			assertThat(result.stderrText()).contains("Permission denied");
			assertThat(file).hasContent("host");
			assertThat(unisolated.execute("sh", "-c", write).stdoutText()).isEqualTo("written\n");
			assertThat(file).hasContent("changed");
			Files.delete(file);
			return;
		}
		FileTime modified = Files.getLastModifiedTime(file);
		String script = "chmod 666 " + file + "; echo chmod=$?; touch -m -d 2001-01-01 " + file + "; echo times=$?";
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
		assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("chmod=1\ntimes=1\n");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
		assertThat(Files.getLastModifiedTime(file)).isEqualTo(modified);
		assertThat(unisolated.execute("sh", "-c", script).stdoutText()).isEqualTo("chmod=0\ntimes=0\n");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-rw-rw-");
		Files.delete(file);
	}

	/**
	 * A mechanism without a mount namespace has no read-only bind to leave out: Landlock
	 * refuses writes outside the working directory whatever the setting, and its verdict
	 * says so.
	 */
	@ForEachLinuxMechanism
	void writableRootCanBeChosen(MechanismChoice mechanism) throws IOException {
		SandboxSettings settings = settings(mechanism).readOnlyRoot(false)
			.filesystemView(SandboxSettings.Filesystem.View.HOST)
			.build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		Path file = VisibleDirectories.create("writable-root-test-").resolve(mechanism + "-" + UUID.randomUUID());
		if (!gives(mechanism, LinuxNamespace.MOUNT)) {
			assertThat(capability.verified())
				.contains("root filesystem: writes refused outside the working directory (Landlock), reads allowed; "
						+ "readOnlyRoot=false has no effect on this mechanism: Landlock limits writes all the same");
			try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
				ExecutionResult result = executor.execute("touch", file.toString());
				assertThat(result.exitCode()).isNotZero();
				assertThat(result.stderrText()).contains("Permission denied");
			}
			assertThat(file).doesNotExist();
			return;
		}
		assertThat(capability.verified()).contains("root filesystem: writable");
		try (ProcessIsolatedExecutor writable = ProcessIsolatedExecutor.isolated(settings, capability)) {
			ExecutionResult result = writable.execute("touch", file.toString());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
		}
		assertThat(file).exists();
		Files.delete(file);
	}

	/**
	 * A root caller's uid 0 is the host's: global sysctls ({@code kernel.core_pattern}
	 * runs a program as host root) must not be writable. Checked with access(2), never by
	 * writing (see {@link #writability}).
	 */
	@ForEachLinuxMechanism
	void procSysIsNotWritable(MechanismChoice mechanism) {
		String[] files = { "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches" };
		ExecutionResult result = writability(mechanism, files);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().lines()).containsExactly("read-only", "read-only");
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(unisolated.execute("sh", "-c", accessScript(files)).stdoutText().lines())
				.containsExactly("writable", "writable");
		}
	}

	/**
	 * Whether the command may write each file, a line each ({@code writable} or
	 * {@code read-only}), found without writing: with access(2) on a mechanism with a
	 * mount namespace, whose read-only mounts answer EROFS. Without one, {@code /proc} is
	 * the host's and access(2) does not ask Landlock: the command opens each file for
	 * writing (open(2) is where Landlock refuses) and closes it without writing a byte (a
	 * sysctl or sysrq acts on write(2) only).
	 */
	private static ExecutionResult writability(MechanismChoice mechanism, String... files) {
		if (gives(mechanism, LinuxNamespace.MOUNT)) {
			return isolated(mechanism).execute("sh", "-c", accessScript(files));
		}
		String opening = """
				import os, sys
				for f in sys.argv[1:]:
				    try:
				        os.close(os.open(f, os.O_WRONLY))
				        print("writable")
				    except PermissionError:
				        print("read-only")
				""";
		List<String> argv = new ArrayList<>(List.of("python3", "-c", opening));
		argv.addAll(List.of(files));
		return isolated(mechanism).execute(ExecutionRequest.builder(argv).build());
	}

	/** The access(2) check of {@link #writability}, for the files. */
	private static String accessScript(String... files) {
		return "for f in " + String.join(" ", files)
				+ "; do if [ -w $f ]; then echo writable; else echo read-only; fi; done";
	}

	/**
	 * {@code /proc/sysrq-trigger} (write-only, for root) is on a read-only mount inside:
	 * access(2) reports EROFS, so {@code test -w} is false. Checked only with access(2);
	 * nothing, not even the control, ever writes to it. Without a mount namespace, see
	 * {@link #writability}.
	 */
	@ForEachLinuxMechanism
	void procSysrqTriggerIsNotWritable(MechanismChoice mechanism) {
		assumeThat(Path.of("/proc/sysrq-trigger")).as("the kernel has sysrq").exists();
		String script = accessScript("/proc/sysrq-trigger");
		ExecutionResult result = writability(mechanism, "/proc/sysrq-trigger");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo("read-only\n");
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(unisolated.execute("sh", "-c", script).stdoutText()).isEqualTo("writable\n");
		}
	}

	/**
	 * bubblewrap gives the command a minimal {@code /dev}: no disk that a command running
	 * as root could write past the read-only mounts. (The unshare mechanism keeps the
	 * host's {@code /dev}; see the threat model.)
	 */
	@Test
	void bubblewrapShowsNoHostBlockDevice() {
		String list = "find /dev -maxdepth 1 -type b | head -n 1";
		String device = unisolated.execute("sh", "-c", list).stdoutText().trim();
		assumeThat(device).as("this host has a block device in /dev").isNotEmpty();
		ExecutionResult result = isolated(MechanismChoice.BWRAP).execute("sh", "-c", list + "; ls /dev");
		assertThat(result.stdoutText()).doesNotContain(device).contains("null", "urandom", "pts", "shm");
	}

	/**
	 * A mechanism without an IPC namespace names it in its verdict; nothing stands in for
	 * it (System V IPC and POSIX message queues of the JVM's user are in reach there).
	 */
	@ForEachLinuxMechanism
	void commandHasItsOwnIpcNamespace(MechanismChoice mechanism) throws IOException {
		if (!gives(mechanism, LinuxNamespace.IPC)) {
			assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: IPC namespace"));
		}
		Assumptions.assumeTrue(gives(mechanism, LinuxNamespace.IPC),
				"the " + mechanism + " mechanism gives no IPC namespace, and nothing stands in for it");
		String host = Files.readSymbolicLink(Path.of("/proc/self/ns/ipc")).toString();
		assertThat(unisolated.execute("readlink", "/proc/self/ns/ipc").stdoutText()).isEqualTo(host + "\n");
		ExecutionResult result = isolated(mechanism).execute("readlink", "/proc/self/ns/ipc");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).startsWith("ipc:[").isNotEqualTo(host + "\n");
	}

	/**
	 * No capability, except for a host root JVM's command user on the mechanisms with a
	 * user namespace, which keeps {@code CAP_DAC_OVERRIDE} and {@code CAP_FOWNER} over
	 * root:root files ({@code CAP_DAC_OVERRIDE} alone on namespaces, without a read-only
	 * root) (see {@link LauncherCommandUserTests}); on the seccomp mechanism, a uid of
	 * the host, it has none.
	 */
	@ForEachLinuxMechanism
	void commandHasNoCapabilities(MechanismChoice mechanism) {
		List<String> read = List.of("grep", "-E", "^Cap(Inh|Prm|Eff|Amb):", "/proc/self/status");
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest.builder(read).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		String expected = !commandUser(mechanism) || mechanism == MechanismChoice.SECCOMP ? "\t0000000000000000"
				: (mechanism == MechanismChoice.NAMESPACES) ? "\t0000000000000002" : "\t000000000000000a";
		assertThat(result.stdoutText().lines()).hasSize(4).allSatisfy((line) -> assertThat(line).endsWith(expected));
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(unisolated.execute(ExecutionRequest.builder(read).build()).stdoutText())
				.containsPattern("CapEff:\t0*[1-9a-f]");
		}
	}

	/**
	 * The command runs in a session of its own (the launcher's setsid(2) as init, pid1 or
	 * contain), begun inside the sandbox, so it has no controlling terminal of the JVM's
	 * to push input into (TIOCSTI). Read in the PID namespace, the session id is the pid
	 * of its leader there (bwrap's init or the command itself); a session begun outside
	 * the namespace, such as the JVM's, reads as 0 (pid_namespaces(7)). The control shows
	 * that a plain child stays in the JVM's session. Without a mount namespace
	 * {@code /proc} is the host's, which names processes by their pids in the JVM's PID
	 * namespace: there the process reads its own entry ({@code /proc/self/stat} of
	 * {@code cat}, in the shell's session), and its session must not be the JVM's.
	 */
	@ForEachLinuxMechanism
	void commandRunsInASessionOfItsOwn(MechanismChoice mechanism) throws IOException {
		boolean ownProc = gives(mechanism, LinuxNamespace.MOUNT);
		String pidAndSession = ownProc ? "set -- $(cat /proc/$$/stat); echo \"$1 $6\""
				: "set -- $(cat /proc/self/stat); echo \"$1 $6\"";
		String jvmSession = Files.readString(Path.of("/proc/self/stat")).replaceFirst("^.*\\) ", "").split(" ")[3];
		String[] control = unisolated.execute("sh", "-c", pidAndSession).stdoutText().trim().split(" ");
		assertThat(control[1]).as("a plain child stays in the JVM's session").isEqualTo(jvmSession);
		assertThat(control[0]).isNotEqualTo(control[1]);
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", pidAndSession);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		String[] inside = result.stdoutText().trim().split(" ");
		assertThat(inside).hasSize(2);
		assertThat(inside[1]).as("session id of pid %s", inside[0]).matches("[1-9][0-9]*");
		if (!ownProc) {
			assertThat(inside[1]).as("session id of pid %s", inside[0]).isNotEqualTo(jvmSession);
		}
	}

	/**
	 * Host processes are outside the command's PID namespace: a pid of the host names
	 * nothing there ({@code kill} fails with ESRCH) and {@code kill -KILL -1} reaches
	 * only the namespace. The control shows the same {@code kill -TERM} ends the process
	 * from the host. {@code kill -1} is sent only from a PID namespace other than the
	 * JVM's, and never in a control run. Without a PID namespace, host processes are in
	 * sight and Landlock's signal scope refuses the signal (EPERM).
	 */
	@ForEachLinuxMechanism
	void hostProcessesCannotBeSignalled(MechanismChoice mechanism) throws IOException, InterruptedException {
		boolean pidNamespace = gives(mechanism, LinuxNamespace.PID);
		if (!pidNamespace) {
			assertThat(verdict(mechanism)).anyMatch((fact) -> fact.startsWith("not given: PID namespace"));
			Assumptions.assumeTrue(
					verdict(mechanism)
						.contains("signals to the JVM and every process outside the sandbox: refused (Landlock scope)"),
					"without a PID namespace only Landlock's signal scope (ABI 6+) keeps host processes out of reach");
		}
		String hostPidNamespace = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
		Process host = new ProcessBuilder("sleep", "300").start();
		try {
			String script = "kill -TERM " + host.pid() + "; echo term $?; "
					+ "if [ \"$(readlink /proc/self/ns/pid)\" != '" + hostPidNamespace + "' ]; "
					+ "then kill -KILL -1; echo all $?; else echo the host\\'s PID namespace; fi";
			ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
			// kill(-1) reports no EPERM (kernel/signal.c kill_something_info): with a
			// process of
			// the launcher's own in the namespace (the namespaces mechanism's supervisor,
			// which
			// Landlock's scope keeps out of reach) it answers 0 instead of ESRCH.
			assertThat(result.stdoutText())
				.matches(pidNamespace ? "term 1\nall [01]\n" : "term 1\nthe host's PID namespace\n");
			assertThat(result.stderrText()).contains(pidNamespace ? "No such process" : "Operation not permitted");
			assertThat(host.isAlive()).isTrue();
			ExecutionResult control = unisolated.execute("kill", "-TERM", String.valueOf(host.pid()));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(host.waitFor(30, TimeUnit.SECONDS)).isTrue();
			assertThat(host.exitValue()).isEqualTo(143);
		}
		finally {
			host.destroyForcibly();
		}
	}

	@ForEachLinuxMechanism
	void privateLoopbackServesTheCommandItself(MechanismChoice mechanism) {
		ExecutionRequest request = ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).loopback(true).build();
		if (!gives(mechanism, LinuxNamespace.NETWORK)) {
			assertPrivateLoopbackRefused(mechanism, request);
			return;
		}
		ExecutionResult result = isolated(mechanism).execute(request);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo("served: private-hello\n");
	}

	@ForEachLinuxMechanism
	void hostLoopbackStaysUnreachableWithAPrivateLoopback(MechanismChoice mechanism) throws IOException {
		assertHostLoopbackUnreachable(mechanism, true);
	}

	@ForEachLinuxMechanism
	void hostLoopbackIsUnreachableWithoutAPrivateLoopback(MechanismChoice mechanism) throws IOException {
		assertHostLoopbackUnreachable(mechanism, false);
	}

	private void assertHostLoopbackUnreachable(MechanismChoice mechanism, boolean loopback) throws IOException {
		try (LoopbackListeners.Tcp listener = new LoopbackListeners.Tcp(IPV4_LOOPBACK)) {
			ExecutionRequest request = ExecutionRequest
				.builder("bash", "-c", tcpSend("127.0.0.1", listener, "isolated"))
				.loopback(loopback)
				.build();
			if (loopback && !gives(mechanism, LinuxNamespace.NETWORK)) {
				assertPrivateLoopbackRefused(mechanism, request);
				return;
			}
			ExecutionResult result = isolated(mechanism).execute(request);
			assertThat(result.exitCode()).isNotZero();
			// Without a private loopback the filter refuses the socket; with one, lo is
			// up and nothing listens there.
			assertThat(result.stderrText()).contains(loopback ? "Connection refused" : NO_ADDRESS_FAMILY);
			ExecutionResult control = unisolated.execute("bash", "-c", tcpSend("127.0.0.1", listener, "control"));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitAccepted("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * A mechanism without a network namespace is unavailable where a private loopback is
	 * required, with the cause that names it.
	 */
	@ForEachLinuxMechanism
	void loopbackCanBeTheExecutorsDefault(MechanismChoice mechanism) {
		SandboxSettings settings = settings(mechanism).loopback(true).build();
		if (!gives(mechanism, LinuxNamespace.NETWORK)) {
			IsolationCapability refused = new NetworkIsolationProbe(settings).probe();
			assertThat(refused.available()).as("%s", refused).isFalse();
			assertThat(refused.cause()).isEqualTo(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE);
			return;
		}
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo("served: private-hello\n");
		}
	}

	/**
	 * Every mechanism with a network namespace brings {@code lo} up itself (bwrap, and
	 * the launcher's root for unshare and namespaces; no {@code ip(8)} is run) and serves
	 * a loopback request. A mechanism without a network namespace has no loopback to
	 * give: a loopback request is refused with a code, and requiring a loopback makes it
	 * unavailable, with a fix that names the mechanisms that give one.
	 */
	@ForEachLinuxMechanism
	void everyNetworkNamespaceProvidesALoopbackAndTheOthersRefuseOne(MechanismChoice mechanism) {
		SandboxSettings settings = settings(mechanism).build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		boolean network = gives(mechanism, LinuxNamespace.NETWORK);
		assertThat(capability.privateLoopback()).isEqualTo(network);
		ExecutionRequest request = ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).loopback(true).build();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			if (network) {
				ExecutionResult result = executor.execute(request);
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				assertThat(result.stdoutText()).isEqualTo("served: private-hello\n");
			}
			else {
				assertThatExceptionOfType(InvalidExecutionRequestException.class)
					.isThrownBy(() -> executor.execute(request))
					.withMessageContaining("has no network namespace")
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
			}
			assertThat(executor.execute("true").exitCode()).isZero();
		}
		IsolationCapability required = new NetworkIsolationProbe(settings(mechanism).loopback(true).build()).probe();
		assertThat(required.available()).isEqualTo(network);
		assertThat(required.cause()).isEqualTo(network ? null : UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE);
		assertThat(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix()).contains("bwrap, unshare or namespaces")
			.doesNotContain("iproute2");
	}

	/**
	 * A command that ignores SIGTERM runs into its timeout with three children: one that
	 * attempted a session of its own ({@code setsid}, refused on every mechanism:
	 * {@link NewSession}; it runs once the refusal, which the command's stderr shows, has
	 * come), one that ignores SIGTERM and one that does not; none is left. The timeout
	 * leaves the sandbox and the shells time to start on a loaded machine.
	 */
	@ForEachLinuxMechanism
	void timeoutKillsTheWholeTreeIncludingSetsidAndTermIgnoringChildren(MechanismChoice mechanism) {
		String marker = "34" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		boolean refused = NewSession.refused(mechanism);
		String script = "trap '' TERM; " + NewSession.setsid(refused, "sleep " + marker)
				+ " & sh -c 'trap \"\" TERM; sleep " + marker + "' & sleep " + marker;
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("sh", "-c", script).timeout(Duration.ofSeconds(3)).build());
		assertThat(result.timedOut()).isTrue();
		NewSession.assertAttempted(refused, result.stderrText());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	/**
	 * A daemon that the command leaves behind (a double fork, so that it is orphaned, in
	 * a session of its own where the mechanism gives one: {@link NewSession}) does not
	 * outlive a command that exits by itself. The command exits only once the daemon
	 * runs.
	 */
	@ForEachLinuxMechanism
	void normalExitLeavesNoBackgroundProcess(MechanismChoice mechanism) {
		String marker = "35" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		boolean refused = NewSession.refused(mechanism);
		String script = "( " + NewSession.setsid(refused, "sh -c 'echo > running; exec sleep " + marker + "'")
				+ " & ); while [ ! -e running ]; do sleep 0.05; done; echo started";
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
		assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("started\n");
		NewSession.assertAttempted(refused, result.stderrText());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	/**
	 * The parent-death signal follows the thread that spawned the sandbox (prctl(2)):
	 * when that thread ends, the sandbox and everything in it is killed
	 * ({@code bwrap --die-with-parent}, {@code setpriv --pdeathsig KILL}).
	 */
	@ForEachLinuxMechanism
	void sandboxDiesWithTheThreadThatSpawnedIt(MechanismChoice mechanism, @TempDir Path directory) throws Exception {
		String marker = "36" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		IsolationCapability capability = LinuxMechanisms.verified(settings(mechanism).build());
		List<String> commandLine = capability.mechanism()
			.commandLine(List.of("sh", "-c", "sleep " + marker + " & sleep " + marker), directory, false);
		AtomicBoolean running = new AtomicBoolean();
		Thread spawner = new Thread(() -> {
			try {
				new ProcessBuilder(commandLine).directory(directory.toFile()).start();
				await().atMost(Duration.ofSeconds(30))
					.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).size() >= 2);
				running.set(true);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		});
		try (java.io.Closeable grant = LinuxMechanisms.forCommandUser(capability.mechanism(), directory)) {
			spawner.start();
			spawner.join(60_000);
			assertThat(spawner.isAlive()).isFalse();
			assertThat(running).as("both sleeps ran in the sandbox").isTrue();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
		}
	}

	/**
	 * A Perl one-liner that listens on the address, connects to itself, and prints what
	 * its server received: it needs a loopback that is up.
	 */
	private static List<String> loopbackRoundTrip(String address) {
		return List.of("perl", "-MIO::Socket::INET", "-e", "my $server = IO::Socket::INET->new(LocalAddr => '" + address
				+ "', LocalPort => 0, Listen => 1) "
				+ "or die \"listen: $!\\n\"; my $client = IO::Socket::INET->new(PeerAddr => '" + address
				+ "', PeerPort => $server->sockport) or die \"connect: $!\\n\"; print $client \"private-hello\\n\"; "
				+ "close $client; my $peer = $server->accept; print 'served: ', scalar <$peer>;");
	}

}
