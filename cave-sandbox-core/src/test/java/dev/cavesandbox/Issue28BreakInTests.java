package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
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
 * Red team of issue 28 on the mechanisms without a mount namespace: ways around the
 * supervisor of unix sockets (hard links and renames of a host socket the command's uid
 * owns, {@code O_PATH} descriptors through {@code /proc}, {@code sendto(2)} with an
 * address, the address rewritten in memory during the call, a directory of a bind's path
 * swapped for a link), another execution's listener and shared memory (two at once, the
 * preload's {@code CAVE_SANDBOX_SHM} pointed elsewhere). Every listener is the test's own
 * unix socket; each must receive nothing.
 */
@EnabledOnOs(OS.LINUX)
class Issue28BreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

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
				(builder) -> builder.timeout(Duration.ofSeconds(120)).killGracePeriod(Duration.ofSeconds(1))));
	}

	@ParameterizedTest
	@MethodSource("withoutMounts")
	void hostSocketsStayUnreachableThroughLinksRenamesProcDescriptorsAndRaces(MechanismChoice mechanism,
			@TempDir Path base) throws Exception {
		Path work = directory(base.resolve("work"), "rwxrwxrwx");
		copy("issue28-unix-attacks.py", work);
		Path hostDirectory = directory(base.resolve("host"), "rwxrwxrwx");
		Path owned = directory(base.resolve("owned"), "rwxr-xr-x");
		try (Listener host = new Listener(hostDirectory.resolve("host.sock"));
				Listener ownedListener = new Listener(owned.resolve("owned.sock"))) {
			CompletableFuture<ExecutionResult> running = CompletableFuture
				.supplyAsync(() -> isolated(mechanism).execute(ExecutionRequest
					.builder(PYTHON, "issue28-unix-attacks.py", host.path().toString(), owned.toString())
					.workingDirectory(work)
					.build()));
			await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(work.resolve("uid")));
			String uid = Files.readString(work.resolve("uid")).trim();
			// The host directory and socket become the command's uid's:
			// protected_hardlinks
			// then lets it link the socket, and only Landlock stands in the way.
			Process chown = new ProcessBuilder("chown", "-R", uid, owned.toString()).inheritIO().start();
			assertThat(chown.waitFor(30, TimeUnit.SECONDS) && chown.exitValue() == 0).isTrue();
			Files.writeString(work.resolve("go"), "");
			ExecutionResult result = running.get(180, TimeUnit.SECONDS);
			Map<String, String> outcome = parse(result);
			System.out.println("Issue28 " + mechanism + " " + outcome);
			assertThat(outcome).as(result.stderrText())
				.containsEntry("connect(/proc/pid/fd)", "EACCES")
				.containsEntry("connect(/proc/self/fd)", "EACCES")
				.containsEntry("connect(relative after fchdir(O_PATH))", "EACCES")
				.containsKeys("rewritten address connects", "swapped directory binds");
			for (String refused : new String[] { "link(owned socket)", "connect(linked)", "rename(owned directory)",
					"connect(moved)", "sendto(stream)", "sendto(seqpacket)" }) {
				assertThat(outcome.get(refused)).as(refused + ": " + result.stderrText())
					.isNotNull()
					.isNotEqualTo("OK");
			}
			assertThat(host.connections()).as("the host listener").isZero();
			assertThat(ownedListener.connections()).as("the listener of the command's uid").isZero();
			try (Stream<Path> planted = Files.list(hostDirectory)) {
				assertThat(planted.map((path) -> path.getFileName().toString())).containsExactly("host.sock");
			}
		}
	}

	/**
	 * A connect(2) from a thread that is not its process's leader (a JVM's main thread,
	 * every worker thread): the supervisor finds the caller by the notification's pid,
	 * which is the thread's id.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void aThreadThatIsNotTheLeaderConnectsToTheCommandsOwnSocket(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path work = directory(base.resolve("work"), "rwxrwxrwx");
		String script = "import socket, threading\nl = socket.socket(socket.AF_UNIX); l.bind('t.sock'); l.listen(1)\n"
				+ "def go():\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect('t.sock'); print('OK')\n"
				+ "    except OSError as e: print(e.errno)\nt = threading.Thread(target=go); t.start(); t.join()\n";
		Files.writeString(work.resolve("thread.py"), script);
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder(PYTHON, "thread.py").workingDirectory(work).build());
		assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("OK\n");
	}

	@ParameterizedTest
	@MethodSource("withoutMounts")
	void anotherRunningExecutionsListenerAndSharedMemoryStayOutOfReach(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		Path first = directory(base.resolve("first"), "rwxrwxrwx");
		Path second = directory(base.resolve("second"), "rwxrwxrwx");
		copy("issue28-owner.py", first);
		copy("issue28-neighbour.py", second);
		String object = "cave28-" + UUID.randomUUID().toString().substring(0, 8);
		Path hostObject = Path.of("/dev/shm", object + "-host");
		Files.write(hostObject, new byte[] { 42 });
		Files.setPosixFilePermissions(hostObject, PosixFilePermissions.fromString("rw-rw-rw-"));
		try {
			CompletableFuture<ExecutionResult> owner = CompletableFuture.supplyAsync(() -> isolated(mechanism)
				.execute(ExecutionRequest.builder(PYTHON, "issue28-owner.py", object).workingDirectory(first).build()));
			await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(first.resolve("shmdir")));
			String shm = Files.readString(first.resolve("shmdir"));
			ExecutionResult neighbour = isolated(mechanism).execute(
					ExecutionRequest
						.builder(PYTHON, "issue28-neighbour.py", first.toString(), shm, object,
								hostObject.getFileName().toString())
						.workingDirectory(second)
						.build());
			Files.writeString(first.resolve("done"), "");
			ExecutionResult ownerResult = owner.get(180, TimeUnit.SECONDS);
			Map<String, String> outcome = parse(neighbour);
			System.out.println("Issue28 " + mechanism + " " + outcome + " " + parse(ownerResult));
			assertThat(outcome).as(neighbour.stderrText()).hasSize(12);
			outcome.forEach((attempt, result) -> assertThat(result).as(attempt).isNotEqualTo("OK"));
			assertThat(parse(ownerResult)).as(ownerResult.stderrText())
				.containsEntry("arrived", "0")
				.containsEntry("memory", "42");
			assertThat(Files.readAllBytes(hostObject)).containsExactly(42);
			assertThat(Path.of("/dev/shm", "cave28-planted")).doesNotExist();
		}
		finally {
			Files.deleteIfExists(hostObject);
		}
	}

	/**
	 * Two executions in private working directories at once; the second is told the
	 * first's directory and shared-memory directory (a command could only guess them,
	 * 36^6 names after the tag) and can neither read, list, write nor connect there.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void anotherExecutionsPrivateDirectoryStaysOutOfReachEvenByName(MechanismChoice mechanism) throws Exception {
		String object = "cave28-" + UUID.randomUUID().toString().substring(0, 8);
		try (SandboxedProcess owner = isolated(mechanism).start(ExecutionRequest.builder(PYTHON, "owner.py", object)
			.inputFile("owner.py", script("issue28-private-owner.py"))
			.build())) {
			BufferedReader lines = new BufferedReader(new InputStreamReader(owner.stdout(), StandardCharsets.UTF_8));
			String directory = lines.readLine();
			String shm = lines.readLine();
			assertThat(directory).as("the first execution's directory").isNotNull().startsWith("/");
			ExecutionResult neighbour = isolated(mechanism)
				.execute(ExecutionRequest.builder(PYTHON, "neighbour.py", directory, shm, object)
					.inputFile("neighbour.py", script("issue28-private-neighbour.py"))
					.build());
			owner.stdin().write("done\n".getBytes(StandardCharsets.UTF_8));
			owner.stdin().flush();
			Map<String, String> ownerOutcome = new LinkedHashMap<>();
			for (String line = lines.readLine(); line != null; line = lines.readLine()) {
				ownerOutcome.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
			}
			Map<String, String> outcome = parse(neighbour);
			System.out
				.println("Issue28 " + mechanism + " " + directory + " " + shm + " " + outcome + " " + ownerOutcome);
			assertThat(outcome).as(neighbour.stderrText()).hasSize(10);
			outcome.forEach((attempt, result) -> assertThat(result).as(attempt).isNotEqualTo("OK"));
			assertThat(ownerOutcome).containsEntry("arrived", "0")
				.containsEntry("memory", "42")
				.containsEntry("entries", "a.sock,owner.py,secret");
		}
	}

	/**
	 * The supervisor's 64 workers all blocked in connect(2) to a listener whose backlog
	 * is full (80 processes, each one call), and the command sleeping: the execution
	 * still ends at its timeout, and nothing of the tree is left after the result.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void blockedWorkersDoNotOutliveTheTimeout(MechanismChoice mechanism, @TempDir Path base) throws Exception {
		Path work = directory(base.resolve("work"), "rwxrwxrwx");
		String marker = "cave28-blocked-" + UUID.randomUUID();
		String script = "import os, socket, sys, time\nl = socket.socket(socket.AF_UNIX); l.bind('full.sock'); l.listen(0)\n"
				+ "for i in range(80):\n    if os.fork() == 0:\n        s = socket.socket(socket.AF_UNIX)\n"
				+ "        try: s.connect('full.sock')\n        except OSError: pass\n        time.sleep(100); os._exit(0)\n"
				+ "print('forked', flush=True)\ntime.sleep(100)\n";
		Files.writeString(work.resolve("blocked.py"), script);
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest.builder(PYTHON, "blocked.py", marker)
			.workingDirectory(work)
			.timeout(Duration.ofSeconds(5))
			.build());
		assertThat(result.timedOut()).as(result.stderrText()).isTrue();
		assertThat(result.stdoutText()).isEqualTo("forked\n");
		assertThat(ProcessHandle.allProcesses()
			.filter((handle) -> handle.info()
				.arguments()
				.map((arguments) -> List.of(arguments).contains(marker))
				.orElse(false))
			.map(ProcessHandle::pid)).as("left of the tree").isEmpty();
	}

	/**
	 * An unprivileged JVM (nobody, through setpriv): its command shares its uid, so
	 * protected_hardlinks lets it link the JVM's attach socket and a host socket of that
	 * uid; Landlock must refuse the link and the rename, and the supervisor (of the same
	 * uid, without CAP_SYS_PTRACE) every path outside. The JVM is a child JVM of nobody's
	 * whose attach socket {@code jcmd} opened.
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void anUnprivilegedJvmsAttachSocketAndSocketsOfItsUidStayUnreachable(MechanismChoice choice, @TempDir Path base)
			throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path work = directory(base.resolve("work"), "rwxrwxrwx");
		copy("issue28-unix-attacks.py", work);
		Files.writeString(work.resolve("go"), "");
		Path hostDirectory = directory(base.resolve("host"), "rwxrwxrwx");
		Path owned = directory(base.resolve("owned"), "rwxr-xr-x");
		Path program = base.resolve("Sleeper.java");
		Files.writeString(program,
				"class Sleeper { public static void main(String[] a) throws Exception { Thread.sleep(120000); } }");
		List<String> nobody = List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--");
		Process jvm = new ProcessBuilder(concat(nobody, List.of("java", program.toString()))).directory(base.toFile())
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		try (Listener host = new Listener(hostDirectory.resolve("host.sock"));
				Listener ownedListener = new Listener(owned.resolve("owned.sock"))) {
			Process chown = new ProcessBuilder("chown", "-R", "65534:65534", owned.toString(), work.toString()).start();
			assertThat(chown.waitFor(30, TimeUnit.SECONDS) && chown.exitValue() == 0).isTrue();
			Path attach = Path.of("/tmp/.java_pid" + jvm.pid());
			await().atMost(Duration.ofSeconds(60)).until(() -> {
				Process jcmd = new ProcessBuilder(
						concat(nobody, List.of("jcmd", String.valueOf(jvm.pid()), "VM.version")))
					.redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.DISCARD)
					.start();
				return jcmd.waitFor(30, TimeUnit.SECONDS) && Files.exists(attach);
			});
			SandboxMechanism mechanism = unprivileged(choice, base);
			List<String> command = concat(nobody, mechanism.commandLine(List.of(PYTHON, "issue28-unix-attacks.py",
					host.path().toString(), owned.toString(), attach.toString()), work.toRealPath(), false));
			Process sandboxed = new ProcessBuilder(command).directory(work.toFile()).start();
			String output = new String(sandboxed.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			String errors = new String(sandboxed.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(sandboxed.waitFor(120, TimeUnit.SECONDS)).isTrue();
			Map<String, String> outcome = new LinkedHashMap<>();
			output.lines()
				.filter((line) -> line.contains("="))
				.forEach((line) -> outcome.put(line.substring(0, line.lastIndexOf('=')),
						line.substring(line.lastIndexOf('=') + 1)));
			System.out.println("Issue28 unprivileged " + choice + " " + outcome);
			assertThat(outcome).as(errors).containsKeys("connect(attach)", "swapped directory binds");
			for (String refused : new String[] { "link(attach)", "connect(attach link)", "rename(attach)",
					"connect(attach moved)", "connect(attach)", "link(owned socket)", "connect(linked)",
					"rename(owned directory)", "connect(moved)", "connect(/proc/pid/fd)",
					"connect(relative after fchdir(O_PATH))", "sendto(stream)", "sendto(seqpacket)" }) {
				assertThat(outcome.get(refused)).as(refused + ": " + errors).isNotNull().isNotEqualTo("OK");
			}
			assertThat(attach).as("the attach socket stays where it was").exists();
			assertThat(host.connections()).as("the host listener").isZero();
			assertThat(ownedListener.connections()).as("the listener of the command's uid").isZero();
			try (Stream<Path> planted = Files.list(hostDirectory)) {
				assertThat(planted.map((path) -> path.getFileName().toString())).containsExactly("host.sock");
			}
		}
		finally {
			jvm.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
	}

	/**
	 * The verified mechanism's command line for nobody, with a launcher copy nobody may
	 * run.
	 */
	private static SandboxMechanism unprivileged(MechanismChoice choice, Path base) throws IOException {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		Path launcherCopy = base.resolve("cave-sandbox-launcher");
		Launcher launcher = new Launcher(launcherCopy, false);
		if (mechanism instanceof NamespacesMechanism namespaces) {
			Files.copy(namespaces.launcher().path(), launcherCopy);
			mechanism = new NamespacesMechanism(namespaces.setpriv(), namespaces.unshare(), launcher,
					namespaces.filesystem(), 65534, 65534, true);
		}
		else if (mechanism instanceof SeccompMechanism seccomp) {
			Files.copy(seccomp.launcher().path(), launcherCopy);
			mechanism = new SeccompMechanism(launcher, seccomp.filesystem());
		}
		Files.setPosixFilePermissions(launcherCopy, PosixFilePermissions.fromString("r-xr-xr-x"));
		return mechanism;
	}

	private static List<String> concat(List<String> first, List<String> second) {
		return Stream.concat(first.stream(), second.stream()).toList();
	}

	/**
	 * The preload library ({@code LD_PRELOAD}) lies outside the working directory, where
	 * Landlock refuses writes but not {@code chmod(2)}: a command that could change its
	 * mode would open it and its directory to everyone. A root JVM's command user keeps
	 * no {@code CAP_FOWNER} without a mount namespace (the red team's finding, fixed), so
	 * the library stays unwritable for others and the next execution runs with it intact.
	 * (A JVM of another user runs its commands as itself, the owner of its files: see the
	 * README's threat model.)
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void theCommandCannotOpenThePreloadLibraryToOthers(MechanismChoice mechanism) throws Exception {
		assumeRootJvm();
		String script = "import errno, os\nlibrary = [p for p in os.environ.get('LD_PRELOAD', '').split(':') if 'cave-shm' in p][0]\n"
				+ "print(library)\nfor path, mode in ((os.path.dirname(library), 0o777), (library, 0o666)):\n"
				+ "    try:\n        os.chmod(path, mode); print('chmod=OK')\n"
				+ "    except OSError as e: print('chmod=' + errno.errorcode[e.errno])\n";
		ExecutionResult first = isolated(mechanism).execute(ExecutionRequest.builder(PYTHON, "chmod.py")
			.inputFile("chmod.py", script.getBytes(StandardCharsets.UTF_8))
			.build());
		Path library = Path.of(first.stdoutText().lines().findFirst().orElseThrow());
		String modes = PosixFilePermissions.toString(Files.getPosixFilePermissions(library.getParent())) + " "
				+ PosixFilePermissions.toString(Files.getPosixFilePermissions(library));
		ExecutionResult next = isolated(mechanism).execute(ExecutionRequest.builder("/bin/echo", "next").build());
		String after = PosixFilePermissions.toString(Files.getPosixFilePermissions(library.getParent())) + " "
				+ PosixFilePermissions.toString(Files.getPosixFilePermissions(library));
		System.out.println("Issue28 preload " + mechanism + " " + first.stdoutText().replace('\n', ' ')
				+ " modes after: " + modes + ", after the next execution: " + after + ", next: " + next.exitCode() + " "
				+ next.stderrText());
		assertThat(next.exitCode()).as(next.stderrText()).isZero();
		assertThat(modes).as("right after the command").isEqualTo("rwxr-xr-x r--r--r--");
	}

	/**
	 * A root:root file of the host outside the working directory (here a file of the
	 * test's, mode 0600): the command must not make it readable and writable for every
	 * local user. Without a mount namespace no read-only root stands in the way and
	 * Landlock does not cover {@code chmod(2)}: the red team's finding was that the
	 * namespaces mechanism's command user kept {@code CAP_FOWNER} over root:root files
	 * (fixed: {@code CAP_DAC_OVERRIDE} alone there).
	 */
	@ParameterizedTest
	@MethodSource("withoutMounts")
	void theCommandCannotOpenARootFileOfTheHostToEveryone(MechanismChoice mechanism, @TempDir Path base)
			throws Exception {
		assumeRootJvm();
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path secret = base.resolve("root-secret");
		Files.writeString(secret, "42");
		Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
		String script = "import errno, os, sys\ntry:\n    os.chmod(sys.argv[1], 0o666); print('chmod=OK')\n"
				+ "except OSError as e: print('chmod=' + errno.errorcode[e.errno])\n";
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder(PYTHON, "chmod.py", secret.toString())
				.inputFile("chmod.py", script.getBytes(StandardCharsets.UTF_8))
				.build());
		System.out.println("Issue28 root file " + mechanism + " " + result.stdoutText().trim() + " "
				+ PosixFilePermissions.toString(Files.getPosixFilePermissions(secret)));
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secret))).as(result.stdoutText())
			.isEqualTo("rw-------");
	}

	/**
	 * A root JVM's: a JVM of another user runs its commands as itself, its files' owner.
	 */
	private static void assumeRootJvm() {
		assumeThat(System.getProperty("user.name")).as("the JVM runs as root").isEqualTo("root");
	}

	private static byte[] script(String resource) throws IOException {
		try (InputStream script = Issue28BreakInTests.class.getResourceAsStream(resource)) {
			assertThat(script).as(resource).isNotNull();
			return script.readAllBytes();
		}
	}

	private static Path directory(Path path, String mode) throws IOException {
		Files.setPosixFilePermissions(path.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
		Files.createDirectory(path);
		Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
		return path;
	}

	private static void copy(String resource, Path directory) throws IOException {
		try (InputStream script = Issue28BreakInTests.class.getResourceAsStream(resource)) {
			assertThat(script).as(resource).isNotNull();
			Files.copy(script, directory.resolve(resource), StandardCopyOption.REPLACE_EXISTING);
		}
	}

	private static Map<String, String> parse(ExecutionResult result) {
		Map<String, String> outcome = new LinkedHashMap<>();
		result.stdoutText().lines().filter((line) -> line.contains("=")).forEach((line) -> {
			int equals = line.lastIndexOf('=');
			outcome.put(line.substring(0, equals).trim(), line.substring(equals + 1));
		});
		return outcome;
	}

	/**
	 * A unix stream listener of the test's own, writable by everyone, counting what
	 * arrives.
	 */
	private static final class Listener implements AutoCloseable {

		private final Path path;

		private final ServerSocketChannel channel;

		private int count;

		Listener(Path path) throws IOException {
			this.path = path;
			this.channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
			this.channel.bind(UnixDomainSocketAddress.of(path), 512);
			this.channel.configureBlocking(false);
			Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxrwxrwx"));
		}

		Path path() {
			return this.path;
		}

		int connections() throws IOException {
			SocketChannel connection;
			while ((connection = this.channel.accept()) != null) {
				connection.close();
				this.count++;
			}
			return this.count;
		}

		@Override
		public void close() throws IOException {
			this.channel.close();
			Files.deleteIfExists(this.path);
		}

	}

}
