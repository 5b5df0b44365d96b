package dev.cavesandbox;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import dev.cavesandbox.internal.egress.EgressProxy;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Break-in attempts on the egress allow-list (issue 14): the proxy's parsing and checks,
 * the bridge inside the sandbox, the egress directory and socket, other executions'
 * proxies. Loopback only: every listener is this test's own on {@code 127.0.0.1}, and the
 * only resolvers map test names to loopback or unspecified addresses (which, if the proxy
 * were broken, would still only reach this machine). An attempt that is held is a passing
 * test asserting it is held; one that got through is {@code @Disabled("FINDING: ...")}.
 */
@EnabledOnOs(OS.LINUX)
class EgressBreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

	/** The allowed destination. */
	private Upstream allowed;

	/** A destination that no allow-list names: nothing may ever arrive here. */
	private LoopbackListeners.Tcp forbidden;

	/** A directory outside the hidden directories, with a planted file. */
	private Path srv;

	@BeforeEach
	void start() throws IOException {
		this.allowed = new Upstream();
		this.forbidden = new LoopbackListeners.Tcp(InetAddress.getByName("127.0.0.1"));
		this.srv = Files.createDirectories(Path.of("/srv", "cave-i14-red-" + UUID.randomUUID()));
		Files.setPosixFilePermissions(this.srv, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path secret = Files.writeString(this.srv.resolve("secret"), "planted secret beside the work directory\n");
		Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-r--r--"));
	}

	@AfterEach
	void stop() throws IOException {
		this.allowed.close();
		this.forbidden.close();
		DirectoryTrees.delete(this.srv);
	}

	static Stream<MechanismChoice> mechanismsWithANetworkNamespace() {
		return Stream.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE, MechanismChoice.NAMESPACES);
	}

	// ---- the proxy itself ------------------------------------------------------------

	/**
	 * Requests that name the forbidden port in another form, hide it behind the allowed
	 * one (userinfo, a fragment, the Host header, a second request, bare line feeds,
	 * chunked framing) or use another spelling of loopback: none reaches the forbidden
	 * listener. {@code A} stands for the allowed port, {@code F} for the forbidden one.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "CONNECT 127.0.0.1:F HTTP/1.1\r\n\r\n", "CONNECT localhost:F HTTP/1.1\r\n\r\n",
			"CONNECT LOCALHOST.:F HTTP/1.1\r\n\r\n", "CONNECT [::ffff:127.0.0.1]:F HTTP/1.1\r\n\r\n",
			"CONNECT [::ffff:7f00:1]:F HTTP/1.1\r\n\r\n", "CONNECT [::1]:F HTTP/1.1\r\n\r\n",
			"CONNECT 2130706433:F HTTP/1.1\r\n\r\n", "CONNECT 0x7f.1:F HTTP/1.1\r\n\r\n",
			"CONNECT 127.1:F HTTP/1.1\r\n\r\n", "CONNECT 0177.0.0.1:F HTTP/1.1\r\n\r\n",
			"CONNECT 0.0.0.0:F HTTP/1.1\r\n\r\n", "CONNECT localhost:A@127.0.0.1:F HTTP/1.1\r\n\r\n",
			"CONNECT localhost:A:F HTTP/1.1\r\n\r\n", "CONNECT localhost%3aF:A HTTP/1.1\r\n\r\n",
			"CONNECT localhost:0F HTTP/1.1\r\n\r\n", "CONNECT localhost: F HTTP/1.1\r\n\r\n",
			"CONNECT localhost:A HTTP/1.1\r\n\r\nCONNECT 127.0.0.1:F HTTP/1.1\r\n\r\n",
			"GET http://localhost:A@127.0.0.1:F/ HTTP/1.1\r\n\r\n",
			"GET http://127.0.0.1:F\\@localhost:A/ HTTP/1.1\r\n\r\n",
			"GET http://localhost:A#@127.0.0.1:F/ HTTP/1.1\r\n\r\n",
			"GET http://localhost:A?@127.0.0.1:F/ HTTP/1.1\r\n\r\n", "GET HTTP://LOCALHOST:F/ HTTP/1.1\r\n\r\n",
			"GET http://[::1]:F/ HTTP/1.1\r\n\r\n", "GET http://localhost.:F/ HTTP/1.1\r\n\r\n",
			"GET / HTTP/1.0\r\nHost: 127.0.0.1:F\r\n\r\n", "GET / HTTP/1.0\r\n\r\n", "GET 127.0.0.1:F HTTP/1.1\r\n\r\n",
			"GET //127.0.0.1:F/ HTTP/1.1\r\nHost: localhost:A\r\n\r\n",
			"GET http://localhost:A/ HTTP/1.1\r\nHost: 127.0.0.1:F\r\n\r\n",
			"GET http://localhost:A/ HTTP/1.1\nHost: x\n\nCONNECT 127.0.0.1:F HTTP/1.1\r\n\r\n",
			"GET http://localhost:A/ HTTP/1.1\r\nContent-Length: 0\r\n\r\nGET http://127.0.0.1:F/ HTTP/1.1\r\n\r\n",
			"POST http://localhost:A/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"
					+ "GET http://127.0.0.1:F/ HTTP/1.1\r\n\r\n",
			"POST http://localhost:A/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
					+ "CONNECT 127.0.0.1:F HTTP/1.1\r\n\r\n",
			"GET http://127.0.0.1:F/ http://localhost:A/ HTTP/1.1\r\n\r\n",
			"GET http://localhost:A/\t127.0.0.1:F HTTP/1.1\r\n\r\n", "\r\nCONNECT 127.0.0.1:F HTTP/1.1\r\n\r\n" })
	void otherSpellingsAndSmugglingNeverReachTheForbiddenPort(String template, @TempDir Path directory)
			throws Exception {
		String request = template.replace(":A", ":" + this.allowed.port()).replace(":F", ":" + this.forbidden.port());
		HostResolver resolver = (host) -> {
			// Only the allowed name resolves; a broken proxy could reach nothing else.
			return List.of(InetAddress.getByName("127.0.0.1"));
		};
		try (EgressProxy proxy = EgressProxy.start(directory.resolve("egress.sock"),
				new EgressPolicy(EgressAllowList.of(List.of("localhost:" + this.allowed.port())), true, resolver),
				EgressListener.NONE)) {
			String answer = exchange(proxy.socketPath(), request, "tunnelled after the head\r\n\r\n");
			System.out.println("[request] " + request.replace("\r", "\\r").replace("\n", "\\n") + "\n[answer] "
					+ answer.lines().findFirst().orElse("") + "\n[decisions] " + proxy.decisions() + "\n[upstream] "
					+ this.allowed.received);
			assertThat(proxy.decisions()).as(answer)
				.noneMatch((decision) -> decision.allowed() && decision.port() == this.forbidden.port());
		}
		assertNothingArrivedAtTheForbiddenPort();
	}

	/**
	 * Names of the allow-list whose resolver answers another spelling of loopback (an
	 * IPv4-mapped IPv6 address object, the unspecified addresses, which Linux connects to
	 * the local host) are refused without private destinations; if not, the connection
	 * would only reach this test's own listener.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "mapped", "zero", "zero6", "mixed" })
	void loopbackInDisguiseFromTheResolverIsRefused(String form, @TempDir Path directory) throws Exception {
		HostResolver resolver = (host) -> switch (form) {
			case "mapped" -> List.of(Inet6Address.getByAddress("mapped.test",
					new byte[] { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1 }, -1));
			case "zero" -> List.of(InetAddress.getByAddress("zero.test", new byte[4]));
			case "zero6" -> List.of(InetAddress.getByAddress("zero6.test", new byte[16]));
			default -> List.of(InetAddress.getByName("127.0.0.1"), InetAddress.getByAddress(new byte[4]));
		};
		try (EgressProxy proxy = EgressProxy.start(directory.resolve("egress.sock"),
				new EgressPolicy(EgressAllowList.of(List.of("name.test:" + this.forbidden.port())), false, resolver),
				EgressListener.NONE)) {
			String answer = exchange(proxy.socketPath(),
					"CONNECT name.test:" + this.forbidden.port() + " HTTP/1.1\r\n\r\n", "through\r\n\r\n");
			assertThat(answer).startsWith("HTTP/1.1 403 ");
			assertThat(proxy.decisions()).singleElement()
				.satisfies((decision) -> assertThat(decision.reason()).isEqualTo("private_destination"));
		}
		assertNothingArrivedAtTheForbiddenPort();
	}

	// ---- the sandbox: the bridge, descriptors and processes ---------------------------

	/**
	 * What the command attempts against every process of its sandbox (the bridge, its
	 * connection processes, PID 1): the targets of its descriptors, its working
	 * directory, its memory, a signal; through a descriptor or working directory that
	 * leads out, the file planted beside the JVM's work directory and the proxy socket of
	 * the egress directory. Also its own descriptors, the routes (DNS would need one) and
	 * the address families the filter refuses (AF_VSOCK, AF_NETLINK: socket creation
	 * only).
	 */
	private static final String ATTEMPTS = """
			import os, socket, sys, errno
			forbidden = sys.argv[1]
			out = []
			def note(line):
			    out.append(line)
			def attempt(path):
			    # through a descriptor or cwd that leads out of the view
			    for rel in ('egress.sock', '../egress.sock', '../secret', '../../secret', '..'):
			        p = path + '/' + rel
			        try:
			            if rel.endswith('secret'):
			                note('SECRET via %s: %s' % (p, open(p).read().strip()))
			            elif rel == '..':
			                note('LISTED %s: %s' % (p, sorted(os.listdir(p))[:20]))
			            elif os.path.exists(p):
			                s = socket.socket(socket.AF_UNIX)
			                s.settimeout(5)
			                s.connect(p)
			                s.sendall(b'CONNECT localhost:' + forbidden.encode() + b' HTTP/1.1\\r\\n\\r\\nvia-proc\\r\\n\\r\\n')
			                note('PROXY via %s: %r' % (p, s.recv(200)[:60]))
			                s.close()
			        except OSError as e:
			            pass
			me = int(os.readlink('/proc/self'))
			def link(path):
			    try:
			        return os.readlink(path)
			    except OSError as e:
			        return errno.errorcode[e.errno]
			note('self fds: %s' % sorted((fd, link('/proc/self/fd/' + fd)) for fd in os.listdir('/proc/self/fd')))
			for pid in sorted(os.listdir('/proc'), key=lambda p: (len(p), p)):
			    if not pid.isdigit() or int(pid) == me:
			        continue
			    try:
			        cmd = open('/proc/%s/cmdline' % pid, 'rb').read().replace(b'\\0', b' ')[:80]
			    except OSError:
			        continue
			    try:
			        st = os.stat('/proc/' + pid)
			        owner = (st.st_uid, st.st_gid)
			    except OSError:
			        owner = None
			    try:
			        cwd = os.readlink('/proc/%s/cwd' % pid)
			        note('pid %s %r owner %s cwd %s' % (pid, cmd, owner, cwd))
			        attempt('/proc/%s/cwd' % pid)
			    except OSError as e:
			        note('pid %s %r owner %s cwd %s' % (pid, cmd, owner, errno.errorcode[e.errno]))
			    try:
			        fds = os.listdir('/proc/%s/fd' % pid)
			        for fd in fds:
			            try:
			                target = os.readlink('/proc/%s/fd/%s' % (pid, fd))
			            except OSError as e:
			                target = errno.errorcode[e.errno]
			            note('pid %s fd %s -> %s' % (pid, fd, target))
			            if os.path.isdir('/proc/%s/fd/%s' % (pid, fd)):
			                attempt('/proc/%s/fd/%s' % (pid, fd))
			    except OSError as e:
			        note('pid %s fds %s' % (pid, errno.errorcode[e.errno]))
			    try:
			        with open('/proc/%s/mem' % pid, 'rb') as m:
			            note('pid %s MEM opened' % pid)
			    except OSError as e:
			        note('pid %s mem %s' % (pid, errno.errorcode[e.errno]))
			    try:
			        os.kill(int(pid), 0)
			        note('pid %s signal 0 allowed' % pid)
			    except OSError as e:
			        note('pid %s signal 0 %s' % (pid, errno.errorcode[e.errno]))
			for name, family in (('vsock', 40), ('netlink', 16), ('packet', 17), ('unix', 1)):
			    try:
			        socket.socket(family, socket.SOCK_DGRAM if family != 17 else socket.SOCK_RAW).close()
			        note('socket %s created' % name)
			    except OSError as e:
			        note('socket %s %s' % (name, errno.errorcode[e.errno]))
			for table in ('/proc/net/route', '/proc/net/ipv6_route', '/proc/net/dev'):
			    try:
			        note('%s: %r' % (table, open(table).read()))
			    except OSError as e:
			        note('%s %s' % (table, errno.errorcode[e.errno]))
			print('\\n'.join(out))
			""";

	/**
	 * A root JVM (this one): the command walks every process of its sandbox. Nothing
	 * leads to the egress directory, the planted file or the proxy; VSOCK and NETLINK
	 * sockets cannot be created; no route but loopback's.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void theCommandFindsNoWayToTheEgressDirectoryThroughTheSandboxsProcesses(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		Path workDirectory = Files.createDirectory(this.srv.resolve("work"));
		Files.writeString(work.resolve("attempts.py"), ATTEMPTS);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(builder) -> builder.workDirectory(workDirectory)
					.allowedHosts(List.of("localhost:" + this.allowed.port()))
					.allowPrivateDestinations(true)
					.timeout(Duration.ofSeconds(60)))) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder(PYTHON, "attempts.py", String.valueOf(this.forbidden.port()))
					.workingDirectory(work)
					.build());
			String output = result.stdoutText();
			System.out.println("[" + mechanism + ", root JVM]\n" + output + result.stderrText());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			// The egress directory is a private directory of the JVM's home (root's).
			assertThat(output).doesNotContain("SECRET", "PROXY via", "LISTED", "MEM opened")
				.doesNotContainPattern("cave-sandbox-0/[0-9a-z]{9}")
				.contains("socket vsock EAFNOSUPPORT", "socket netlink EAFNOSUPPORT", "socket packet EAFNOSUPPORT")
				.contains("/proc/net/route: 'Iface\\tDestination\\tGateway \\tFlags\\tRefCnt\\tUse\\tMetric\\tMask"
						+ "\\t\\tMTU\\tWindow\\tIRTT                                                       \\n'");
			if (mechanism == MechanismChoice.NAMESPACES) {
				assertThat(output).contains("socket unix EAFNOSUPPORT");
			}
			assertThat(result.egressDecisions()).isEmpty();
		}
		assertNothingArrivedAtTheForbiddenPort();
	}

	/**
	 * A JVM of an unprivileged user (nobody here): the command runs with the JVM's uid,
	 * in a nested user namespace on unshare and namespaces, below PID 1, the mechanism's
	 * {@code sh} script, which runs with the same uid of the host and inherits outer's
	 * egress directory at descriptor 6.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void aNonRootJvmsCommandFindsNoWayToTheEgressDirectoryThroughTheSandboxsProcesses(MechanismChoice choice,
			@TempDir Path work, @TempDir Path launcherDirectory) throws Exception {
		NonRootRun run = runAsNobody(choice, work, launcherDirectory);
		System.out.println("[" + choice + ", nobody's JVM]\n" + run.output());
		assertThat(run.output()).doesNotContain("SECRET", "PROXY via", "LISTED", "MEM opened", "cave-egress");
		assertNothingArrivedAtTheForbiddenPort();
	}

	private record NonRootRun(String output, List<EgressDecision> decisions) {
	}

	private NonRootRun runAsNobody(MechanismChoice choice, Path work, Path launcherDirectory) throws Exception {
		Path workDirectory = Files.createDirectory(this.srv.resolve("work"));
		Files.setPosixFilePermissions(workDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
		NobodyCommandLines.giveToNobody(workDirectory);
		Path egressDirectory = Files.createDirectory(workDirectory.resolve("cave-egress-red"));
		NobodyCommandLines.giveToNobody(egressDirectory);
		Files.setPosixFilePermissions(egressDirectory, PosixFilePermissions.fromString("rwx--x--x"));
		Files.writeString(work.resolve("attempts.py"), ATTEMPTS);
		NobodyCommandLines.giveToNobody(work);
		NobodyCommandLines.giveToNobody(work.resolve("attempts.py"));
		try (EgressProxy proxy = EgressProxy.start(egressDirectory.resolve(LauncherContract.EGRESS_SOCKET),
				new EgressPolicy(EgressAllowList.of(List.of("localhost:" + this.allowed.port())), true,
						(host) -> List.of(InetAddress.getByName("127.0.0.1"))),
				EgressListener.NONE)) {
			SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory)
				.withEgress(new Launcher.Egress(egressDirectory, SandboxSettings.Egress.PROXY_PORT));
			List<String> command = NobodyCommandLines.asNobody(mechanism.commandLine(
					List.of(PYTHON, "attempts.py", String.valueOf(this.forbidden.port())), work.toRealPath(), true));
			NobodyCommandLines.Run run = NobodyCommandLines.run(command, work);
			assertThat(run.exitCode()).as(run.output()).isZero();
			return new NonRootRun(run.output(), proxy.decisions());
		}
	}

	// ---- other executions' proxies ---------------------------------------------------

	/**
	 * What a command tries against every egress socket it can find in the work directory:
	 * a CONNECT to the port of the other execution's allow-list.
	 */
	private static final String OTHER_PROXIES = """
			import glob, socket, sys
			port = sys.argv[2]
			found = glob.glob(sys.argv[1] + '/**/egress.sock', recursive=True)
			print('found', len(found))
			# The exact path of the other execution's socket, which the test found as root.
			found += sys.argv[3:]
			for path in found:
			    try:
			        s = socket.socket(socket.AF_UNIX)
			        s.settimeout(5)
			        s.connect(path)
			        s.sendall(('CONNECT localhost:%s HTTP/1.1\\r\\n\\r\\nfrom the other execution' % port).encode())
			        print('answer', s.recv(100)[:40])
			        s.close()
			    except OSError as e:
			        print('refused', e)
			""";

	/**
	 * Two executions at once in the default (system) view, with a work directory outside
	 * the hidden directories: the second cannot see the first's egress directory.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void anotherExecutionsProxyIsOutOfReachInTheSystemView(MechanismChoice mechanism, @TempDir Path work)
			throws Exception {
		String output = concurrently(mechanism, work, SandboxSettings.Filesystem.View.SYSTEM, true);
		assertThat(output).doesNotContain("answer");
		assertNothingArrivedAtTheForbiddenPort();
	}

	/**
	 * The same in the host view ({@code cave.sandbox.filesystem.view=host}) on the
	 * mechanism without a mount namespace: socket(AF_UNIX) is refused.
	 */
	@Test
	void anotherExecutionsProxyIsOutOfReachInTheHostViewOnNamespaces(@TempDir Path work) throws Exception {
		String output = concurrently(MechanismChoice.NAMESPACES, work, SandboxSettings.Filesystem.View.HOST, true);
		assertThat(output).doesNotContain("answer");
		assertNothingArrivedAtTheForbiddenPort();
	}

	/**
	 * The host view with a work directory outside the hidden directories, on bwrap and
	 * unshare (read-only root, the default): the work directory is visible read-only, the
	 * other execution's egress directory is 0711 and its socket 0666 (a root JVM's
	 * command user also has CAP_DAC_OVERRIDE over root:root directories), and connect(2)
	 * to a socket on a read-only mount works. The second execution's command uses the
	 * first's proxy and reaches the port of the first's allow-list, which its own does
	 * not name.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "BWRAP", "UNSHARE" })
	void anotherExecutionsProxyIsOutOfReachInTheHostView(MechanismChoice mechanism, @TempDir Path work)
			throws Exception {
		String output = concurrently(mechanism, work, SandboxSettings.Filesystem.View.HOST, true);
		assertThat(output).doesNotContain("answer");
		assertNothingArrivedAtTheForbiddenPort();
	}

	/**
	 * Another local user of the host (nobody, outside any sandbox), with the work
	 * directory in a world-listable directory such as the default {@code java.io.tmpdir}
	 * ({@code /tmp}, 1777): it lists the work directory, passes the 0711 egress directory
	 * and connects to the 0666 socket of a running execution, and the proxy relays it to
	 * the execution's allowed destination from the JVM (its uid, its network namespace).
	 */
	@Test
	void aLocalUserOfTheHostCannotUseARunningExecutionsProxy() throws Exception {
		Path workDirectory = Files.createDirectory(this.srv.resolve("tmp"));
		Files.setPosixFilePermissions(workDirectory, PosixFilePermissions.fromString("rwxrwxrwx"));
		assertThat(new ProcessBuilder("chmod", "1777", workDirectory.toString()).start().waitFor()).isZero();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(MechanismChoice.BWRAP,
				(builder) -> builder.workDirectory(workDirectory).allowPrivateDestinations(true))) {
			CompletableFuture<ExecutionResult> first = CompletableFuture.supplyAsync(() -> executor.execute(
					ExecutionRequest.builder("sleep", "6").allowedHosts("localhost:" + this.forbidden.port()).build()));
			await().atMost(Duration.ofSeconds(20)).until(() -> egressSockets(workDirectory).size() == 1);
			NobodyCommandLines.Run run = NobodyCommandLines.run(
					NobodyCommandLines.asNobody(List.of(PYTHON, "-c", OTHER_PROXIES, workDirectory.toString(),
							String.valueOf(this.forbidden.port()), egressSockets(workDirectory).get(0).toString())),
					this.srv);
			ExecutionResult firstResult = first.get(60, TimeUnit.SECONDS);
			System.out
				.println("[host user] " + run.output() + "\nexecution's decisions: " + firstResult.egressDecisions());
			assertThat(run.output()).doesNotContain("answer");
		}
		assertNothingArrivedAtTheForbiddenPort();
	}

	/**
	 * Run a first execution whose allow-list names the forbidden port and, while it runs,
	 * a second whose list names only the allowed port and which tries every egress socket
	 * of the work directory. Returns the second's output.
	 */
	private String concurrently(MechanismChoice mechanism, Path work, SandboxSettings.Filesystem.View view,
			boolean readOnlyRoot) throws Exception {
		Path workDirectory = Files.createDirectory(this.srv.resolve("work"));
		Files.writeString(work.resolve("others.py"), OTHER_PROXIES);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(builder) -> builder.workDirectory(workDirectory)
					.filesystemView(view)
					.readOnlyRoot(readOnlyRoot)
					.allowPrivateDestinations(true)
					.timeout(Duration.ofSeconds(60)))) {
			CompletableFuture<ExecutionResult> first = CompletableFuture.supplyAsync(() -> executor.execute(
					ExecutionRequest.builder("sleep", "8").allowedHosts("localhost:" + this.forbidden.port()).build()));
			await().atMost(Duration.ofSeconds(20)).until(() -> egressSockets(workDirectory).size() == 1);
			ExecutionResult second = executor.execute(ExecutionRequest
				.builder(PYTHON, "others.py", workDirectory.toString(), String.valueOf(this.forbidden.port()),
						egressSockets(workDirectory).get(0).toString())
				.allowedHosts("localhost:" + this.allowed.port())
				.workingDirectory(work)
				.build());
			ExecutionResult firstResult = first.get(60, TimeUnit.SECONDS);
			String output = second.stdoutText() + second.stderrText();
			System.out.println("[" + mechanism + ", " + view + "] second: " + output + "\nfirst's decisions: "
					+ firstResult.egressDecisions() + "\nsecond's decisions: " + second.egressDecisions());
			return output;
		}
	}

	/** The egress sockets under the work directory, as this (root) JVM finds them. */
	private static List<Path> egressSockets(Path workDirectory) throws IOException {
		try (Stream<Path> entries = Files.find(workDirectory, 8,
				(path, attributes) -> path.getFileName().toString().equals("egress.sock"))) {
			return entries.toList();
		}
		catch (java.io.UncheckedIOException ex) {
			// An execution's directory removed while it was walked.
			return List.of();
		}
	}

	// ---- helpers
	// -----------------------------------------------------------------------

	/**
	 * Show that nothing arrived at the forbidden listener: a control connection sent now
	 * comes after whatever a command had sent, and must be the only one.
	 */
	private void assertNothingArrivedAtTheForbiddenPort() throws IOException {
		try (SocketChannel control = SocketChannel
			.open(new java.net.InetSocketAddress(InetAddress.getByName("127.0.0.1"), this.forbidden.port()))) {
			control.write(ByteBuffer.wrap("control".getBytes(StandardCharsets.US_ASCII)));
		}
		assertThat(this.forbidden.awaitAccepted("control")).containsExactly("control");
	}

	/**
	 * Send a request to the proxy's socket, then more bytes, half-close, and return what
	 * came back.
	 */
	private static String exchange(Path socket, String request, String more) throws IOException {
		try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX);
				java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
			client.connect(UnixDomainSocketAddress.of(socket));
			client.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.ISO_8859_1)));
			client.write(ByteBuffer.wrap(more.getBytes(StandardCharsets.ISO_8859_1)));
			client.shutdownOutput();
			client.configureBlocking(false);
			client.register(selector, java.nio.channels.SelectionKey.OP_READ);
			java.io.ByteArrayOutputStream answer = new java.io.ByteArrayOutputStream();
			ByteBuffer buffer = ByteBuffer.allocate(8192);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (System.nanoTime() < deadline) {
				selector.select(200);
				selector.selectedKeys().clear();
				int read = client.read(buffer.clear());
				if (read < 0) {
					break;
				}
				answer.write(buffer.array(), 0, read);
			}
			return answer.toString(StandardCharsets.ISO_8859_1);
		}
		catch (IOException ex) {
			return "error: " + ex;
		}
	}

	/** A server that answers each connection with 200 once the client paused or ended. */
	static final class Upstream implements AutoCloseable {

		private final java.net.ServerSocket server;

		final List<String> received = java.util.Collections.synchronizedList(new ArrayList<>());

		Upstream() throws IOException {
			this.server = new java.net.ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
			Thread thread = new Thread(this::serve, "egress-red-upstream");
			thread.setDaemon(true);
			thread.start();
		}

		int port() {
			return this.server.getLocalPort();
		}

		private void serve() {
			while (!this.server.isClosed()) {
				try (java.net.Socket socket = this.server.accept()) {
					socket.setSoTimeout(1000);
					java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
					byte[] buffer = new byte[8192];
					try {
						int read;
						while ((read = socket.getInputStream().read(buffer)) > 0) {
							bytes.write(buffer, 0, read);
						}
					}
					catch (java.net.SocketTimeoutException ex) {
						// paused: answer
					}
					this.received.add(bytes.toString(StandardCharsets.ISO_8859_1));
					socket.getOutputStream()
						.write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
							.getBytes(StandardCharsets.US_ASCII));
				}
				catch (IOException ex) {
					// closed, or the client went away
				}
			}
		}

		@Override
		public void close() throws IOException {
			this.server.close();
		}

	}

}
