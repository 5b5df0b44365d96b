package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The boundary, asked the same questions of every Linux mechanism, which must give the same
 * answers: host unix sockets (on the filesystem and abstract) stay unreachable, a private
 * loopback works without opening the host's, and the host's filesystem is read-only outside the
 * working directory. Each check that something is blocked has an unisolated control run that shows
 * the same check can fail. Network checks touch only listeners that the test opens itself.
 */
@EnabledOnOs(OS.LINUX)
class IsolationBoundaryTests {

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> executors = new EnumMap<>(
			MechanismChoice.class);

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createExecutors() {
		for (MechanismChoice mechanism : List.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE)) {
			SandboxSettings settings = settings(mechanism).build();
			IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
			assertThat(capability.available()).as("probe verdict for %s: %s", mechanism, capability).isTrue();
			assertThat(capability.privateLoopback()).as("private loopback of %s", mechanism).isTrue();
			executors.put(mechanism, ProcessIsolatedExecutor.isolated(settings, capability));
		}
		unisolated = ProcessIsolatedExecutor.unisolated(settings(MechanismChoice.NONE).mode(SandboxMode.FALLBACK).build());
	}

	private static SandboxSettings.Builder settings(MechanismChoice mechanism) {
		return SandboxSettings.builder()
			.mechanism(mechanism)
			.timeout(Duration.ofSeconds(20))
			.killGracePeriod(Duration.ofMillis(300));
	}

	@AfterAll
	static void closeExecutors() {
		executors.values().forEach(ProcessIsolatedExecutor::close);
		unisolated.close();
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void hostUnixSocketUnderTmpIsUnreachable(MechanismChoice mechanism) throws IOException {
		Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		assertHostSocketIsHidden(mechanism, socket);
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void hostUnixSocketUnderRunIsUnreachable(MechanismChoice mechanism) throws IOException {
		assumeThat(Files.isWritable(Path.of("/run"))).as("creating a socket in /run needs root").isTrue();
		Path socket = Path.of("/run", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		assertHostSocketIsHidden(mechanism, socket);
	}

	private void assertHostSocketIsHidden(MechanismChoice mechanism, Path socket) throws IOException {
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket)) {
			List<String> client = UnixSockets.client(socket.toString(), "secret-unix");
			ExecutionResult result = executors.get(mechanism).execute(ExecutionRequest.builder(client).build());
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			assertThat(listener.received(300)).isEmpty();
			ExecutionResult control = unisolated.execute(ExecutionRequest.builder(client).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.received(2000)).containsExactly("secret-unix\n");
		}
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void hostAbstractUnixSocketIsUnreachable(MechanismChoice mechanism) throws IOException {
		try (UnixSockets.AbstractListener listener = new UnixSockets.AbstractListener(
				"cave-sandbox-test-" + UUID.randomUUID())) {
			List<String> client = UnixSockets.client(listener.address(), "secret-abstract");
			ExecutionResult result = executors.get(mechanism).execute(ExecutionRequest.builder(client).build());
			assertThat(result.exitCode()).as(result.stderrText()).isNotZero();
			assertThat(listener.received(300)).isEmpty();
			assertThat(unisolated.execute(ExecutionRequest.builder(client).build()).exitCode()).isZero();
			assertThat(listener.awaitReceived()).containsExactly("secret-abstract");
		}
	}

	/**
	 * The control that shows why directories are hidden: the same mechanism without hidden
	 * directories lets the command reach a host socket, network namespace or not.
	 */
	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void withoutHiddenDirectoriesAHostSocketIsReachable(MechanismChoice mechanism) throws IOException {
		SandboxSettings settings = settings(mechanism).hiddenDirectories(List.of()).build();
		IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
		assertThat(capability.verified()).contains("hidden directories: none");
		Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket);
				ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder(UnixSockets.client(socket.toString(), "leaked")).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(listener.received(2000)).containsExactly("leaked\n");
		}
	}

	/**
	 * The tmpfs over a hidden directory belongs to a namespace in which the command has no
	 * capability, and a namespace the command creates itself copies the mounts locked together
	 * (mount_namespaces(7)): neither way uncovers the host's directory.
	 */
	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void commandCannotUncoverAHiddenDirectory(MechanismChoice mechanism, @TempDir Path directory) throws IOException {
		Path socket = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		Files.writeString(directory.resolve("client.pl"), UnixSockets.CLIENT_PROGRAM);
		String client = "perl client.pl " + socket + " uncovered";
		String script = "umount /tmp; umount -l /tmp; unshare --user --mount --keep-caps sh -c 'umount /tmp; "
				+ "umount -l /tmp; " + client + "'; " + client;
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(socket)) {
			ExecutionResult result = executors.get(mechanism)
				.execute(ExecutionRequest.builder("sh", "-c", script).workingDirectory(directory).build());
			assertThat(result.exitCode()).isNotZero();
			assertThat(result.stderrText()).contains("umount", "connect: No such file or directory");
			assertThat(listener.received(300)).isEmpty();
			ExecutionResult control = unisolated
				.execute(ExecutionRequest.builder("sh", "-c", client).workingDirectory(directory).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(listener.received(2000)).containsExactly("uncovered\n");
		}
	}

	/**
	 * What stays visible by design: the working directory, so a socket placed in it is reachable.
	 */
	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void socketInTheWorkingDirectoryIsReachable(MechanismChoice mechanism, @TempDir Path directory)
			throws IOException {
		try (UnixSockets.PathListener listener = new UnixSockets.PathListener(directory.resolve("app.sock"))) {
			ExecutionResult result = executors.get(mechanism)
				.execute(ExecutionRequest.builder(UnixSockets.client("app.sock", "by-design"))
					.workingDirectory(directory)
					.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(listener.received(2000)).containsExactly("by-design\n");
		}
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void privateWorkingDirectoryInTmpIsVisibleButNothingElseOfTmp(MechanismChoice mechanism) throws IOException {
		Path sibling = Files.writeString(Path.of("/tmp", "cave-sandbox-sibling-" + UUID.randomUUID()), "host");
		try {
			ExecutionResult result = executors.get(mechanism)
				.execute("sh", "-c", "pwd; echo data > file; cat file; ls -A /tmp | wc -l; cat " + sibling);
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
	 * A working directory outside the hidden directories, on the read-only root, whose name has
	 * quotes, blanks and shell syntax: it stays writable and nothing in its name runs.
	 */
	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void workingDirectoryWithQuotesSpacesAndShellSyntaxIsUsedAsIs(MechanismChoice mechanism) throws IOException {
		Path parent = VisibleDirectories.create("hostile-");
		Path directory = Files.createDirectory(parent.resolve("it's a $(touch pwned) `dir`; x"));
		ExecutionResult result = executors.get(mechanism)
			.execute(ExecutionRequest.builder("sh", "-c", "pwd; echo kept > out.txt").workingDirectory(directory).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo(directory.toRealPath() + "\n");
		assertThat(directory.resolve("out.txt")).hasContent("kept");
		assertThat(parent.resolve("pwned")).doesNotExist();
		ProcessIsolatedExecutor.deleteTree(parent);
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void hostFilesystemIsReadOnlyOutsideTheWorkingDirectory(MechanismChoice mechanism) throws IOException {
		Path outside = VisibleDirectories.create("read-only-test-");
		Path file = outside.resolve(mechanism + "-" + UUID.randomUUID());
		ExecutionResult result = executors.get(mechanism).execute("touch", file.toString());
		assertThat(result.exitCode()).isNotZero();
		assertThat(result.stderrText()).contains("Read-only file system");
		assertThat(file).doesNotExist();
		assertThat(unisolated.execute("touch", file.toString()).exitCode()).isZero();
		assertThat(file).exists();
		Files.delete(file);
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void writableRootCanBeChosen(MechanismChoice mechanism) throws IOException {
		SandboxSettings settings = settings(mechanism).readOnlyRoot(false).build();
		IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
		assertThat(capability.verified()).contains("root filesystem: writable");
		Path file = VisibleDirectories.create("writable-root-test-").resolve(mechanism + "-" + UUID.randomUUID());
		try (ProcessIsolatedExecutor writable = ProcessIsolatedExecutor.isolated(settings, capability)) {
			assertThat(writable.execute("touch", file.toString()).exitCode()).isZero();
		}
		assertThat(file).exists();
		Files.delete(file);
	}

	/**
	 * A root caller's uid 0 is the host's: global sysctls ({@code kernel.core_pattern} runs a
	 * program as host root) must not be writable. Checked with access(2), never by writing.
	 */
	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void procSysIsNotWritable(MechanismChoice mechanism) {
		String script = "for f in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches; do "
				+ "if [ -w $f ]; then echo writable; else echo read-only; fi; done";
		assertThat(executors.get(mechanism).execute("sh", "-c", script).stdoutText().lines())
			.containsExactly("read-only", "read-only");
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(unisolated.execute("sh", "-c", script).stdoutText().lines()).contains("writable");
		}
	}

	/**
	 * bubblewrap gives the command a minimal {@code /dev}: no disk that a command running as root
	 * could write past the read-only mounts. (The unshare mechanism keeps the host's {@code /dev};
	 * see the threat model.)
	 */
	@Test
	void bubblewrapShowsNoHostBlockDevice() {
		String list = "find /dev -maxdepth 1 -type b | head -n 1";
		String device = unisolated.execute("sh", "-c", list).stdoutText().trim();
		assumeThat(device).as("this host has a block device in /dev").isNotEmpty();
		ExecutionResult result = executors.get(MechanismChoice.BWRAP).execute("sh", "-c", list + "; ls /dev");
		assertThat(result.stdoutText()).doesNotContain(device).contains("null", "urandom", "pts", "shm");
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void commandHasItsOwnIpcAndPidNamespacesAndNoCapabilities(MechanismChoice mechanism) throws IOException {
		String script = "readlink /proc/self/ns/ipc /proc/self/ns/pid; grep CapEff /proc/self/status";
		List<String> lines = executors.get(mechanism).execute("sh", "-c", script).stdoutText().lines().toList();
		assertThat(lines.get(0)).isNotEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/ipc")).toString());
		assertThat(lines.get(1)).isNotEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString());
		assertThat(lines.get(2)).endsWith("0000000000000000");
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void privateLoopbackServesTheCommandItself(MechanismChoice mechanism) {
		ExecutionResult result = executors.get(mechanism)
			.execute(ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).loopback(true).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).isEqualTo("served: private-hello\n");
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void hostLoopbackStaysUnreachableWithAPrivateLoopback(MechanismChoice mechanism) throws IOException {
		assertHostLoopbackUnreachable(mechanism, true);
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void hostLoopbackIsUnreachableWithoutAPrivateLoopback(MechanismChoice mechanism) throws IOException {
		assertHostLoopbackUnreachable(mechanism, false);
	}

	private void assertHostLoopbackUnreachable(MechanismChoice mechanism, boolean loopback) throws IOException {
		try (LoopbackListeners.Tcp listener = new LoopbackListeners.Tcp(InetAddress.getLoopbackAddress())) {
			String script = "exec 3<>/dev/tcp/127.0.0.1/" + listener.port() + " && echo secret-lo >&3";
			ExecutionResult result = executors.get(mechanism)
				.execute(ExecutionRequest.builder("bash", "-c", script).loopback(loopback).build());
			assertThat(result.exitCode()).isNotZero();
			assertThat(listener.accepted(300)).isEmpty();
			assertThat(unisolated.execute("bash", "-c", script).exitCode()).isZero();
			assertThat(listener.accepted(2000)).containsExactly("secret-lo\n");
		}
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void loopbackCanBeTheExecutorsDefault(MechanismChoice mechanism) {
		SandboxSettings settings = settings(mechanism).loopback(true).build();
		IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			assertThat(executor.execute(ExecutionRequest.builder(loopbackRoundTrip("127.0.0.1")).build()).stdoutText())
				.isEqualTo("served: private-hello\n");
		}
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void loopbackIsRejectedWhereTheMechanismCannotProvideOne(MechanismChoice mechanism, @TempDir Path directory) {
		SandboxSettings settings = settings(mechanism).ipPath(directory.resolve("no-ip")).build();
		IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
		assertThat(capability.available()).isTrue();
		if (mechanism == MechanismChoice.BWRAP) {
			assertThat(capability.privateLoopback()).isTrue();
			return;
		}
		assertThat(capability.privateLoopback()).isFalse();
		assertThat(capability.verified()).anyMatch((fact) -> fact.contains("no ip binary"));
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> executor.execute(ExecutionRequest.builder("true").loopback(true).build()))
				.withMessageContaining("iproute2")
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
			assertThat(executor.execute("true").exitCode()).isZero();
		}
		IsolationCapability required = new NetworkIsolationProbe(
				settings(mechanism).ipPath(directory.resolve("no-ip")).loopback(true).build())
			.probe();
		assertThat(required.cause()).isEqualTo(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE);
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void timeoutKillsTheWholeTreeIncludingSetsidAndTermIgnoringChildren(MechanismChoice mechanism) {
		String marker = "34" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		String script = "trap '' TERM; setsid sleep " + marker + " & sh -c 'trap \"\" TERM; sleep " + marker
				+ "' & sleep " + marker;
		ExecutionResult result = executors.get(mechanism)
			.execute(ExecutionRequest.builder("sh", "-c", script).timeout(Duration.ofMillis(500)).build());
		assertThat(result.timedOut()).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void normalExitLeavesNoBackgroundProcess(MechanismChoice mechanism) {
		String marker = "35" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		ExecutionResult result = executors.get(mechanism).execute("sh", "-c", "setsid sleep " + marker + " & echo started");
		assertThat(result.stdoutText()).isEqualTo("started\n");
		await().atMost(Duration.ofSeconds(5)).until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	/**
	 * The parent-death signal follows the thread that spawned the sandbox (prctl(2)): when that
	 * thread ends, the sandbox and everything in it is killed ({@code bwrap --die-with-parent},
	 * {@code setpriv --pdeathsig KILL}).
	 */
	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	void sandboxDiesWithTheThreadThatSpawnedIt(MechanismChoice mechanism, @TempDir Path directory)
			throws InterruptedException {
		String marker = "36" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		IsolationCapability capability = new NetworkIsolationProbe(settings(mechanism).build()).probe();
		List<String> commandLine = capability.sandbox()
			.commandLine(List.of("sh", "-c", "sleep " + marker + " & sleep " + marker), directory, false);
		AtomicBoolean running = new AtomicBoolean();
		Thread spawner = new Thread(() -> {
			try {
				new ProcessBuilder(commandLine).directory(directory.toFile()).start();
				await().atMost(Duration.ofSeconds(5))
					.until(() -> ProcessIsolatedExecutorTests.processesWith(marker).size() >= 2);
				running.set(true);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		});
		spawner.start();
		spawner.join(10_000);
		assertThat(spawner.isAlive()).isFalse();
		assertThat(running).as("both sleeps ran in the sandbox").isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> ProcessIsolatedExecutorTests.processesWith(marker).isEmpty());
	}

	/**
	 * A Perl one-liner that listens on the address, connects to itself, and prints what its server
	 * received: it needs a loopback that is up.
	 */
	private static List<String> loopbackRoundTrip(String address) {
		return List.of("perl", "-MIO::Socket::INET", "-e",
				"my $server = IO::Socket::INET->new(LocalAddr => '" + address + "', LocalPort => 0, Listen => 1) "
						+ "or die \"listen: $!\\n\"; my $client = IO::Socket::INET->new(PeerAddr => '" + address
						+ "', PeerPort => $server->sockport) or die \"connect: $!\\n\"; print $client \"private-hello\\n\"; "
						+ "close $client; my $peer = $server->accept; print 'served: ', scalar <$peer>;");
	}

}
