package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
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
		return SandboxSettings.builder()
			.mechanism(mechanism)
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
			assertThat(capability.privateLoopback()).as("private loopback of %s", key).isTrue();
			return ProcessIsolatedExecutor.isolated(settings, capability);
		});
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
			ExecutionResult namespaced = isolated(mechanism)
				.execute(ExecutionRequest.builder("bash", "-c", tcpSend("127.0.0.1", listener, "namespaced"))
					.loopback(true)
					.build());
			assertThat(namespaced.exitCode()).isNotZero();
			// The private lo is up, and nothing listens there.
			assertThat(namespaced.stderrText()).contains("Connection refused");
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
			ExecutionResult namespaced = isolated(mechanism)
				.execute(ExecutionRequest.builder("bash", "-c", tcpSend("::1", listener, "namespaced"))
					.loopback(true)
					.build());
			assertThat(namespaced.exitCode()).isNotZero();
			assertThat(namespaced.stderrText()).containsAnyOf("Cannot assign requested address",
					"Network is unreachable", "Connection refused");
			ExecutionResult control = unisolated.execute("bash", "-c", tcpSend("::1", listener, "control"));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitAccepted("control\n")).containsExactly("control\n");
			assertThat(listener.peers()).containsExactly(ipv6);
		}
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
			ExecutionResult namespaced = isolated(mechanism)
				.execute(ExecutionRequest.builder("bash", "-c", send.formatted("namespaced")).loopback(true).build());
			assertThat(namespaced.exitCode()).as(namespaced.stderrText()).isZero();
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
	 * the command.
	 */
	@ForEachLinuxMechanism
	void dnsLookupFailsAndNoQueryArrives(MechanismChoice mechanism, @TempDir Path directory) throws IOException {
		assumeThat(System.getProperty("user.name")).as("binding 127.0.0.1:53 needs root").isEqualTo("root");
		Path resolvConf = directory.resolve("resolv.conf");
		Files.writeString(resolvConf, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
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
		// uid 0 of a new
		// user namespace to the host's uid 0 (that needs CAP_SETFCAP, Linux 5.12+).
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

	@ForEachLinuxMechanism
	void childSeesOnlyLoopbackInItsOwnPidNamespace(MechanismChoice mechanism) throws IOException {
		String script = "cat /proc/net/dev; readlink /proc/self/ns/pid";
		ExecutionResult control = unisolated.execute("sh", "-c", script);
		assertThat(interfaces(control.stdoutText())).as("the host's interfaces").contains("lo").hasSizeGreaterThan(1);
		String hostPidNamespace = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
		assertThat(control.stdoutText()).contains(hostPidNamespace);
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(interfaces(result.stdoutText())).containsExactly("lo");
		assertThat(result.stdoutText()).contains("pid:[").doesNotContain(hostPidNamespace);
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

	@ForEachLinuxMechanism
	void childKeepsTheCallersUid(MechanismChoice mechanism) throws IOException {
		String uid = new String(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).trim();
		assertThat(uid).matches("[0-9]+");
		ExecutionResult result = isolated(mechanism).execute("id", "-u");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo(uid + "\n");
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

	private void assertHostSocketIsHidden(MechanismChoice mechanism, Path socket) throws IOException {
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket)) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "isolated")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			assertThat(result.stderrText()).contains("connect: No such file or directory");
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "control")).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control\n")).containsExactly("control\n");
		}
	}

	@ForEachLinuxMechanism
	void hostAbstractUnixSocketIsUnreachable(MechanismChoice mechanism) throws IOException {
		try (UnixSockets.AbstractListener listener = new UnixSockets.AbstractListener(
				"cave-sandbox-test-" + UUID.randomUUID())) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client(listener.address(), "isolated")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			assertThat(result.stderrText()).contains("connect: Connection refused");
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder(UnixSockets.client(listener.address(), "control")).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control")).containsExactly("control");
		}
	}

	/**
	 * The control that shows why directories are hidden: the same mechanism without
	 * hidden directories (but the home of the private directories) lets the command reach
	 * a host socket, network namespace or not.
	 */
	@ForEachLinuxMechanism
	void withoutHiddenDirectoriesAHostSocketIsReachable(MechanismChoice mechanism) throws IOException {
		SandboxSettings settings = settings(mechanism).hiddenDirectories(List.of()).build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		// Only the home of the private directories and the launcher stays hidden.
		assertThat(capability.verified()).contains(
				"hidden: " + PrivateDirectories.home(settings.workDirectory()).toRealPath() + " (private empty tmpfs)");
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
	 * together (mount_namespaces(7)): neither way uncovers the host's directory.
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
			assertThat(result.stderrText()).contains("umount", "connect: No such file or directory");
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder("sh", "-c", client + "control").workingDirectory(directory).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitReceived("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * What stays visible by design: the working directory, so a socket placed in it is
	 * reachable.
	 */
	@ForEachLinuxMechanism
	void socketInTheWorkingDirectoryIsReachable(MechanismChoice mechanism, @TempDir Path directory) throws IOException {
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(directory.resolve("app.sock"))) {
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client("app.sock", "by-design"))
					.workingDirectory(directory)
					.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(listener.awaitReceived("by-design\n")).containsExactly("by-design\n");
		}
	}

	@ForEachLinuxMechanism
	void privateWorkingDirectoryInTmpIsVisibleButNothingElseOfTmp(MechanismChoice mechanism) throws IOException {
		Path sibling = Files.writeString(Path.of("/tmp", "cave-sandbox-sibling-" + UUID.randomUUID()), "host");
		try {
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
	 * the same path reads it.
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

	@ForEachLinuxMechanism
	void hostFilesystemIsReadOnlyOutsideTheWorkingDirectory(MechanismChoice mechanism) throws IOException {
		Path outside = VisibleDirectories.create("read-only-test-");
		Path file = outside.resolve(mechanism + "-" + UUID.randomUUID());
		ExecutionResult result = isolated(mechanism).execute("touch", file.toString());
		assertThat(result.exitCode()).isNotZero();
		assertThat(result.stderrText()).contains("Read-only file system");
		assertThat(file).doesNotExist();
		assertThat(unisolated.execute("touch", file.toString()).exitCode()).isZero();
		assertThat(file).exists();
		Files.delete(file);
	}

	@ForEachLinuxMechanism
	void writableRootCanBeChosen(MechanismChoice mechanism) throws IOException {
		SandboxSettings settings = settings(mechanism).readOnlyRoot(false).build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		assertThat(capability.verified()).contains("root filesystem: writable");
		Path file = VisibleDirectories.create("writable-root-test-").resolve(mechanism + "-" + UUID.randomUUID());
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
	 * writing.
	 */
	@ForEachLinuxMechanism
	void procSysIsNotWritable(MechanismChoice mechanism) {
		String script = "for f in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches; do "
				+ "if [ -w $f ]; then echo writable; else echo read-only; fi; done";
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().lines()).containsExactly("read-only", "read-only");
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(unisolated.execute("sh", "-c", script).stdoutText().lines()).containsExactly("writable",
					"writable");
		}
	}

	/**
	 * {@code /proc/sysrq-trigger} (write-only, for root) is on a read-only mount inside:
	 * access(2) reports EROFS, so {@code test -w} is false. Checked only with access(2);
	 * nothing, not even the control, ever writes to it.
	 */
	@ForEachLinuxMechanism
	void procSysrqTriggerIsNotWritable(MechanismChoice mechanism) {
		assumeThat(Path.of("/proc/sysrq-trigger")).as("the kernel has sysrq").exists();
		String script = "if [ -w /proc/sysrq-trigger ]; then echo writable; else echo read-only; fi";
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
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

	@ForEachLinuxMechanism
	void commandHasItsOwnIpcNamespace(MechanismChoice mechanism) throws IOException {
		String host = Files.readSymbolicLink(Path.of("/proc/self/ns/ipc")).toString();
		assertThat(unisolated.execute("readlink", "/proc/self/ns/ipc").stdoutText()).isEqualTo(host + "\n");
		ExecutionResult result = isolated(mechanism).execute("readlink", "/proc/self/ns/ipc");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).startsWith("ipc:[").isNotEqualTo(host + "\n");
	}

	@ForEachLinuxMechanism
	void commandHasNoCapabilities(MechanismChoice mechanism) {
		List<String> read = List.of("grep", "-E", "^Cap(Inh|Prm|Eff|Amb):", "/proc/self/status");
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest.builder(read).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().lines()).hasSize(4)
			.allSatisfy((line) -> assertThat(line).endsWith("\t0000000000000000"));
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(unisolated.execute(ExecutionRequest.builder(read).build()).stdoutText())
				.containsPattern("CapEff:\t0*[1-9a-f]");
		}
	}

	/**
	 * The command runs in a session of its own (bwrap {@code --new-session}, setsid(1)
	 * for unshare), begun inside the sandbox, so it has no controlling terminal of the
	 * JVM's to push input into (TIOCSTI). Read in the PID namespace, the session id is
	 * the pid of its leader there (bwrap's init or the command itself); a session begun
	 * outside the namespace, such as the JVM's, reads as 0 (pid_namespaces(7)). The
	 * control shows that a plain child stays in the JVM's session.
	 */
	@ForEachLinuxMechanism
	void commandRunsInASessionOfItsOwn(MechanismChoice mechanism) throws IOException {
		String pidAndSession = "set -- $(cat /proc/$$/stat); echo \"$1 $6\"";
		String jvmSession = Files.readString(Path.of("/proc/self/stat")).replaceFirst("^.*\\) ", "").split(" ")[3];
		String[] control = unisolated.execute("sh", "-c", pidAndSession).stdoutText().trim().split(" ");
		assertThat(control[1]).as("a plain child stays in the JVM's session").isEqualTo(jvmSession);
		assertThat(control[0]).isNotEqualTo(control[1]);
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", pidAndSession);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		String[] inside = result.stdoutText().trim().split(" ");
		assertThat(inside).hasSize(2);
		assertThat(inside[1]).as("session id of pid %s", inside[0]).matches("[1-9][0-9]*");
	}

	/**
	 * Host processes are outside the command's PID namespace: a pid of the host names
	 * nothing there ({@code kill} fails with ESRCH) and {@code kill -KILL -1} reaches
	 * only the namespace. The control shows the same {@code kill -TERM} ends the process
	 * from the host. {@code kill -1} is sent only from a PID namespace other than the
	 * JVM's, and never in a control run.
	 */
	@ForEachLinuxMechanism
	void hostProcessesCannotBeSignalled(MechanismChoice mechanism) throws IOException, InterruptedException {
		String hostPidNamespace = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
		Process host = new ProcessBuilder("sleep", "300").start();
		try {
			String script = "kill -TERM " + host.pid() + "; echo term $?; "
					+ "if [ \"$(readlink /proc/self/ns/pid)\" != '" + hostPidNamespace + "' ]; "
					+ "then kill -KILL -1; echo all $?; else echo the host\\'s PID namespace; fi";
			ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
			assertThat(result.stdoutText()).isEqualTo("term 1\nall 1\n");
			assertThat(result.stderrText()).contains("No such process");
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
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).loopback(true).build());
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
			ExecutionResult result = isolated(mechanism)
				.execute(ExecutionRequest.builder("bash", "-c", tcpSend("127.0.0.1", listener, "isolated"))
					.loopback(loopback)
					.build());
			assertThat(result.exitCode()).isNotZero();
			// Without a private loopback the filter refuses the socket; with one, lo is
			// up
			// and nothing listens there.
			assertThat(result.stderrText()).contains(loopback ? "Connection refused" : NO_ADDRESS_FAMILY);
			ExecutionResult control = unisolated.execute("bash", "-c", tcpSend("127.0.0.1", listener, "control"));
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.awaitAccepted("control\n")).containsExactly("control\n");
		}
	}

	@ForEachLinuxMechanism
	void loopbackCanBeTheExecutorsDefault(MechanismChoice mechanism) {
		SandboxSettings settings = settings(mechanism).loopback(true).build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo("served: private-hello\n");
		}
	}

	/**
	 * Without the {@code ip} binary, bwrap still brings {@code lo} up itself and serves a
	 * loopback request, while unshare cannot: its verdict says so, a loopback request is
	 * refused with a code, and requiring a loopback makes it unavailable.
	 */
	@ForEachLinuxMechanism
	void withoutTheIpBinaryOnlyBubblewrapProvidesALoopback(MechanismChoice mechanism, @TempDir Path directory) {
		SandboxSettings settings = settings(mechanism).ipPath(directory.resolve("no-ip")).build();
		IsolationCapability capability = LinuxMechanisms.verified(settings);
		boolean bwrap = mechanism == MechanismChoice.BWRAP;
		assertThat(capability.privateLoopback()).isEqualTo(bwrap);
		assertThat(capability.verified().stream().anyMatch((fact) -> fact.contains("no ip binary"))).isEqualTo(!bwrap);
		ExecutionRequest request = ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).loopback(true).build();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			if (bwrap) {
				ExecutionResult result = executor.execute(request);
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				assertThat(result.stdoutText()).isEqualTo("served: private-hello\n");
			}
			else {
				assertThatExceptionOfType(InvalidExecutionRequestException.class)
					.isThrownBy(() -> executor.execute(request))
					.withMessageContaining("iproute2")
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
			}
			assertThat(executor.execute("true").exitCode()).isZero();
		}
		IsolationCapability required = new NetworkIsolationProbe(
				settings(mechanism).ipPath(directory.resolve("no-ip")).loopback(true).build())
			.probe();
		assertThat(required.available()).isEqualTo(bwrap);
		assertThat(required.cause()).isEqualTo(bwrap ? null : UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE);
	}

	@ForEachLinuxMechanism
	void timeoutKillsTheWholeTreeIncludingSetsidAndTermIgnoringChildren(MechanismChoice mechanism) {
		String marker = "34" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		String script = "trap '' TERM; setsid sleep " + marker + " & sh -c 'trap \"\" TERM; sleep " + marker
				+ "' & sleep " + marker;
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("sh", "-c", script).timeout(Duration.ofMillis(500)).build());
		assertThat(result.timedOut()).isTrue();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	@ForEachLinuxMechanism
	void normalExitLeavesNoBackgroundProcess(MechanismChoice mechanism) {
		String marker = "35" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", "setsid sleep " + marker + " & echo started");
		assertThat(result.stdoutText()).isEqualTo("started\n");
		await().atMost(Duration.ofSeconds(30))
			.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	/**
	 * The parent-death signal follows the thread that spawned the sandbox (prctl(2)):
	 * when that thread ends, the sandbox and everything in it is killed
	 * ({@code bwrap --die-with-parent}, {@code setpriv --pdeathsig KILL}).
	 */
	@ForEachLinuxMechanism
	void sandboxDiesWithTheThreadThatSpawnedIt(MechanismChoice mechanism, @TempDir Path directory)
			throws InterruptedException {
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
		spawner.start();
		spawner.join(60_000);
		assertThat(spawner.isAlive()).isFalse();
		assertThat(running).as("both sleeps ran in the sandbox").isTrue();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
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
