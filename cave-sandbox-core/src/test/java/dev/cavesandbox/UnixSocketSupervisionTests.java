package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Unix sockets between the command's own processes, on every mechanism: on the two
 * without a mount namespace ({@code namespaces}, {@code seccomp}) through the launcher's
 * supervisor of {@code connect(2)} and {@code bind(2)}, which performs them itself only
 * beneath the working directory. Each attempt towards the host is aimed at a listener of
 * the test's own, writable by everyone, outside the working directory: it must receive
 * nothing, while the control outside the sandbox reaches it. Everything stays on this
 * machine: unix sockets the test made, and the test JVM's attach socket.
 */
@EnabledOnOs(OS.LINUX)
class UnixSocketSupervisionTests {

	private static final String PYTHON = "/usr/bin/python3";

	private static final String ATTEMPTS = "unix-socket-attempts.py";

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> executors = new ConcurrentHashMap<>();

	@AfterAll
	static void closeExecutors() {
		executors.values().forEach(ProcessIsolatedExecutor::close);
	}

	static Stream<MechanismChoice> withoutMounts() {
		return Stream.of(MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.computeIfAbsent(mechanism, (key) -> LinuxMechanisms.isolated(key,
				(builder) -> builder.timeout(Duration.ofSeconds(60)).killGracePeriod(Duration.ofSeconds(1))));
	}

	private static ExecutionResult run(MechanismChoice mechanism, Path work, String... argv) {
		return isolated(mechanism).execute(ExecutionRequest.builder(argv).workingDirectory(work).build());
	}

	/**
	 * The command's own stream and seqpacket sockets beneath its working directory (a
	 * relative name, an absolute one, one in a subdirectory; the name it bound is the
	 * name it gets back) work on every mechanism; a unix datagram socket is refused
	 * without a mount namespace.
	 */
	@ParameterizedTest
	@MethodSource("dev.cavesandbox.LinuxMechanisms#all")
	void theCommandsOwnSocketsWorkBeneathItsWorkingDirectory(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path work = workingDirectory(base);
		try (HostListener host = new HostListener(hostDirectory(base).resolve("host.sock"))) {
			ExecutionResult result = run(mechanism, work, PYTHON, ATTEMPTS, host.path().toString());
			Map<String, String> outcome = parse(result);
			assertThat(outcome).as(result.stderrText())
				.containsEntry("own(relative)", "OK")
				.containsEntry("own(absolute)", "OK")
				.containsEntry("own(subdirectory)", "OK")
				.containsEntry("own(seqpacket)", "OK")
				.containsEntry("autobind", "OK");
			assertThat(host.connections()).as("the host listener").isZero();
			if (withoutMounts().anyMatch(mechanism::equals)) {
				assertThat(outcome).containsEntry("socket(SOCK_DGRAM)", "EAFNOSUPPORT");
			}
		}
	}

	/**
	 * Every way from the working directory to a host listener outside it is refused with
	 * {@code EACCES} where the supervisor judges the address: the path itself, a symbolic
	 * link to the socket and one to its directory (made inside the working directory),
	 * {@code ..}, a relative name after {@code chdir(2)} out of the working directory,
	 * and a bind outside it directly or through a linked directory (nothing planted). The
	 * JVM's attach socket ({@code /tmp/.java_pid<pid>}, which {@code jcmd} makes the JVM
	 * open) is out of reach too. The control, the same script outside the sandbox,
	 * connects to the listener.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void hostSocketsAndTheJvmsAttachSocketAreUnreachable(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path work = workingDirectory(base);
		Path hostDirectory = hostDirectory(base);
		Path attach = attachSocket();
		try (HostListener host = new HostListener(hostDirectory.resolve("host.sock"))) {
			ExecutionResult result = run(mechanism, work, PYTHON, ATTEMPTS, host.path().toString(), attach.toString());
			Map<String, String> expected = new LinkedHashMap<>();
			for (String name : List.of("connect(host)", "connect(symlink)", "connect(symlinked directory)",
					"connect(dot-dot)", "connect(relative, outside)", "bind(outside)", "bind(symlinked directory)",
					"connect(extra 0)")) {
				expected.put(name, "EACCES");
			}
			// A name directly in /tmp is the command's own
			// (aNameDirectlyInTmpIsTheCommandsOwn):
			// the JVM's attach socket is not there.
			expected.put("connect(extra 0)", "ENOENT");
			assertThat(parse(result)).as(result.stderrText()).containsAllEntriesOf(expected);
			assertThat(host.connections()).as("the host listener").isZero();
			try (Stream<Path> planted = Files.list(hostDirectory)) {
				assertThat(planted.map((path) -> path.getFileName().toString())).containsExactly("host.sock");
			}

			Path control = Files.createDirectory(base.resolve("control"));
			Files.copy(work.resolve(ATTEMPTS), control.resolve(ATTEMPTS));
			Process unconfined = new ProcessBuilder(PYTHON, ATTEMPTS, host.path().toString())
				.directory(control.toFile())
				.redirectErrorStream(true)
				.start();
			String output = new String(unconfined.getInputStream().readAllBytes());
			assertThat(unconfined.waitFor(60, TimeUnit.SECONDS)).isTrue();
			assertThat(output).contains("connect(host)=OK", "connect(symlink)=OK", "connect(relative, outside)=OK");
			assertThat(host.connections()).as("the control reaches the listener").isPositive();
		}
	}

	/**
	 * An abstract name: on {@code namespaces} the network namespace, and with it the
	 * abstract namespace, is the sandbox's own, so binding one works; on {@code seccomp}
	 * it is the host's, where a bound name could be reached from the host, so the
	 * supervisor refuses the bind ({@code EACCES}) but an autobind.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void anAbstractNameIsBoundOnlyInANetworkNamespaceOfTheSandboxsOwn(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path work = workingDirectory(base);
		String script = "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.bind('\\0cave-"
				+ UUID.randomUUID() + "'); print('bound')\nexcept OSError as e: print('refused', e.errno)\n";
		Files.writeString(work.resolve("abstract.py"), script);
		ExecutionResult result = run(mechanism, work, PYTHON, "abstract.py");
		assertThat(result.stdoutText()).as(result.stderrText())
			.isEqualTo((mechanism == MechanismChoice.SECCOMP) ? "refused 13\n" : "bound\n");
	}

	/**
	 * The supervisor killed while the command runs: nothing hangs. The command's next
	 * {@code bind(2)} would get {@code ENOSYS} from a listener nobody holds; the
	 * supervisor's death ends the command first ({@code seccomp}: the parent-death
	 * signal; {@code namespaces}: PID 1 exits with it and the PID namespace ends), long
	 * before the timeout.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void aKilledSupervisorEndsTheCommandInsteadOfHangingIt(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path work = workingDirectory(base);
		String script = "import os, socket, time\nopen('ready', 'w').close()\n"
				+ "while not os.path.exists('go'): time.sleep(0.05)\n"
				+ "try:\n    socket.socket(socket.AF_UNIX).bind('after.sock'); print('bound')\n"
				+ "except OSError as e: print('refused', e.errno)\n";
		Files.writeString(work.resolve("killed.py"), script);
		String marker = "cave-marker-" + UUID.randomUUID();
		CompletableFuture<ExecutionResult> running = CompletableFuture
			.supplyAsync(() -> run(mechanism, work, PYTHON, "killed.py", marker));
		await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(work.resolve("ready")));
		// The command's parent, found from the host: a pid the command reads would be its
		// PID namespace's on namespaces.
		ProcessHandle command = ProcessHandle.allProcesses()
			.filter((handle) -> handle.info()
				.arguments()
				.map((arguments) -> List.of(arguments).equals(List.of("killed.py", marker)))
				.orElse(false))
			.findFirst()
			.orElseThrow();
		ProcessHandle supervisor = command.parent().orElseThrow();
		assertThat(supervisor.pid()).as("the launcher, not the JVM").isNotEqualTo(ProcessHandle.current().pid());
		supervisor.destroyForcibly();
		Files.writeString(work.resolve("go"), "");
		ExecutionResult result = running.get(90, TimeUnit.SECONDS);
		assertThat(result.timedOut()).as(result.stderrText()).isFalse();
		assertThat(result.stdoutText()).doesNotContain("bound");
	}

	/**
	 * A blocking {@code connect(2)} to a full backlog, which the supervisor performs in a
	 * thread of its own, is interrupted by a signal as the kernel interrupts it, and the
	 * socket can connect once the backlog has room: the same lines as the control outside
	 * the sandbox.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void aSignalInterruptsABlockingConnectAsWithoutTheSupervisor(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path work = workingDirectory(base);
		try (InputStream script = UnixSocketSupervisionTests.class.getResourceAsStream("interrupted-connect.py")) {
			assertThat(script).isNotNull();
			Files.copy(script, work.resolve("interrupted-connect.py"));
		}
		ExecutionResult result = run(mechanism, work, PYTHON, "interrupted-connect.py");
		assertThat(result.stdoutText().replaceAll("after [0-9.]+\n", "after\n")).as(result.stderrText())
			.isEqualTo("backlog full after\ninterrupted after\nthen connected\n");
	}

	/**
	 * Python's {@code multiprocessing.Manager()}: a server process on a unix socket under
	 * {@code TMPDIR} (the working directory), which the parent connects to by the name
	 * the server bound.
	 */
	@ParameterizedTest
	@MethodSource("dev.cavesandbox.LinuxMechanisms#all")
	void pythonsMultiprocessingManagerWorks(MechanismChoice mechanism, @TempDir Path base) throws Exception {
		Path work = workingDirectory(base);
		Files.writeString(work.resolve("manager.py"),
				"import multiprocessing\nif __name__ == '__main__':\n    with multiprocessing.Manager() as manager:\n"
						+ "        shared = manager.dict()\n        shared['answer'] = 42\n"
						+ "        print('manager', shared['answer'])\n");
		ExecutionResult result = run(mechanism, work, PYTHON, "manager.py");
		assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("manager 42\n");
		assertThat(result.exitCode()).isZero();
	}

	/**
	 * A name directly in {@code /tmp} (where LibreOffice puts its pipe whatever
	 * {@code TMPDIR} says) is the command's own: without a mount namespace its socket is
	 * made in the working directory's private socket directory, so the command binds and
	 * connects to it as to a private {@code /tmp}, while a host listener of that very
	 * name in the host's {@code /tmp} receives nothing and the host's {@code /tmp} gets
	 * no file.
	 */
	@ParameterizedTest
	@MethodSource("dev.cavesandbox.LinuxMechanisms#all")
	void aNameDirectlyInTmpIsTheCommandsOwn(MechanismChoice mechanism, @TempDir Path base) throws Exception {
		Path work = workingDirectory(base);
		Path name = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		Path own = Path.of("/tmp", "cave-sandbox-test-" + UUID.randomUUID() + ".sock");
		Files.writeString(work.resolve("tmp.py"),
				"import socket, sys\nfor path in sys.argv[1:]:\n"
						+ "    try:\n        l = socket.socket(socket.AF_UNIX); l.bind(path); l.listen(1)\n"
						+ "        c = socket.socket(socket.AF_UNIX); c.connect(path); c.sendall(b'own')\n"
						+ "        print(l.accept()[0].recv(3).decode())\n"
						+ "    except OSError as e: print('refused', e.errno)\n");
		try (HostListener host = new HostListener(name)) {
			ExecutionResult result = run(mechanism, work, PYTHON, "tmp.py", name.toString(), own.toString());
			assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("own\nown\n");
			assertThat(host.connections()).as("the host's listener of that name").isZero();
			assertThat(own).as("nothing made in the host's /tmp").doesNotExist();
		}
	}

	/**
	 * LibreOffice's conversion (its pipe in {@code /tmp}, a restart after it made its
	 * profile) on every mechanism: the document, made on the host by the same
	 * {@code soffice}, comes back as a PDF.
	 */
	@ParameterizedTest
	@MethodSource("dev.cavesandbox.LinuxMechanisms#all")
	void libreOfficeConvertsADocument(MechanismChoice mechanism, @TempDir Path base) throws Exception {
		assumeThat(Path.of("/usr/bin/soffice")).as("LibreOffice installed").exists();
		Path work = workingDirectory(base);
		Path source = Files.createDirectory(base.resolve("source"));
		Files.writeString(source.resolve("doc.txt"), "Hello from cave-sandbox\n");
		Process convert = new ProcessBuilder("/usr/bin/soffice", "-env:UserInstallation=file://" + source.resolve("p"),
				"--headless", "--convert-to", "odt", "doc.txt")
			.directory(source.toFile())
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		assertThat(convert.waitFor(120, TimeUnit.SECONDS)).isTrue();
		Files.copy(source.resolve("doc.odt"), work.resolve("doc.odt"));
		// Debian's LibreOffice links its shared extension cache to
		// /var/spool/libreoffice,
		// outside the system view.
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest
			.builder("/usr/bin/soffice", "-env:UserInstallation=file://" + work.resolve("profile"), "--headless",
					"--convert-to", "pdf", "doc.odt")
			.workingDirectory(work)
			.readablePaths(Path.of("/var/spool/libreoffice").toRealPath())
			.build());
		System.out.printf("FIGURE libreoffice %s: %d ms%n", mechanism, result.wallTime().toMillis());
		assertThat(result.exitCode()).as(result.stdoutText() + result.stderrText()).isZero();
		assertThat(Files.readString(work.resolve("doc.pdf"), java.nio.charset.StandardCharsets.ISO_8859_1))
			.startsWith("%PDF-");
	}

	private static Path workingDirectory(Path base) throws IOException {
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path work = Files.createDirectory(base.resolve("work"));
		Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxrwxrwx"));
		try (InputStream script = UnixSocketSupervisionTests.class.getResourceAsStream(ATTEMPTS)) {
			assertThat(script).isNotNull();
			Files.copy(script, work.resolve(ATTEMPTS), StandardCopyOption.REPLACE_EXISTING);
		}
		return work;
	}

	private static Path hostDirectory(Path base) throws IOException {
		Path directory = Files.createDirectory(base.resolve("host"));
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
		return directory;
	}

	/** The test JVM's attach socket, which {@code jcmd} makes the JVM open. */
	private static Path attachSocket() throws IOException, InterruptedException {
		long pid = ProcessHandle.current().pid();
		Process jcmd = new ProcessBuilder("jcmd", String.valueOf(pid), "VM.version").redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		assertThat(jcmd.waitFor(60, TimeUnit.SECONDS)).isTrue();
		Path attach = Path.of("/tmp/.java_pid" + pid);
		assertThat(attach).as("the JVM's attach socket").exists();
		return attach;
	}

	private static Map<String, String> parse(ExecutionResult result) {
		Map<String, String> outcome = new LinkedHashMap<>();
		result.stdoutText().lines().forEach((line) -> {
			int equals = line.lastIndexOf('=');
			outcome.put(line.substring(0, equals), line.substring(equals + 1));
		});
		return outcome;
	}

	/**
	 * A unix stream listener of the test's own, writable by everyone, that counts the
	 * connections queued on it (never accepted before it is asked, so nothing that
	 * arrived is missed).
	 */
	private static final class HostListener implements AutoCloseable {

		private final Path path;

		private final ServerSocketChannel channel;

		private final List<SocketChannel> accepted = new ArrayList<>();

		HostListener(Path path) throws IOException {
			this.path = path;
			this.channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
			this.channel.bind(UnixDomainSocketAddress.of(path));
			this.channel.configureBlocking(false);
			Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxrwxrwx"));
		}

		Path path() {
			return this.path;
		}

		int connections() throws IOException {
			SocketChannel connection;
			while ((connection = this.channel.accept()) != null) {
				this.accepted.add(connection);
			}
			return this.accepted.size();
		}

		@Override
		public void close() throws IOException {
			for (SocketChannel connection : this.accepted) {
				connection.close();
			}
			this.channel.close();
			Files.deleteIfExists(this.path);
		}

	}

}
