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
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Break-in attempts on the system filesystem view (issue 13), by a command of this (root)
 * JVM on every mechanism: read a file of the host outside the view, or a masked secret,
 * by any path other than its own. Each planted secret is a file of mode 644 holding a
 * marker that only this test knows, in {@code /srv} and in {@code /root} (and, for the
 * masks, in {@code /etc/ssh}); every attempt has an unisolated control that reads the
 * marker, so that a test fails when the boundary breaks. Everything planted is removed.
 */
@EnabledOnOs(OS.LINUX)
class FilesystemViewBreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

	private static final List<String> ATTEMPTS = List.of("direct", "proc-self-root", "proc-1-root", "proc-1-cwd",
			"dot-dot", "other-processes", "open-by-handle", "hard-link");

	private final String marker = "cave-sandbox-red-team-" + UUID.randomUUID();

	private final List<Path> planted = new ArrayList<>();

	private Path srv;

	private Path home;

	@BeforeEach
	void plantSecrets() throws IOException {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
		this.srv = directory(Path.of("/srv", "cave-red-team-" + UUID.randomUUID()));
		this.home = directory(Path.of("/root", "cave-red-team-" + UUID.randomUUID()));
		secret(this.srv.resolve("secret"));
		secret(this.home.resolve("secret"));
	}

	@AfterEach
	void removeSecrets() throws IOException {
		for (int i = this.planted.size() - 1; i >= 0; i--) {
			Files.deleteIfExists(this.planted.get(i));
		}
	}

	/**
	 * Held: a file of everyone's in {@code /srv} and in {@code /root} cannot be read
	 * directly, through {@code /proc/self/root}, {@code /proc/1/root} or
	 * {@code /proc/1/cwd}, by {@code ..} from the working directory, through the
	 * {@code root}, {@code cwd}, {@code fd} and {@code map_files} of any other process in
	 * sight (Landlock mechanisms: the host's {@code /proc}), by
	 * {@code open_by_handle_at(2)} of its handle, nor by a hard link into the working
	 * directory (which lies on the same file system); unisolated, every one of these
	 * attempts reads it.
	 */
	@ForEachLinuxMechanism
	void hostFilesOutsideTheViewCannotBeReadByAnyPath(MechanismChoice choice, @TempDir Path work) throws Exception {
		Path secret = this.srv.resolve("secret");
		String handle = handle(work, secret);
		ExecutionResult result = execute(choice, work, (settings) -> settings,
				ExecutionRequest.builder(attemptsArgv(work)).environment("CAVE_HANDLE", handle));
		assertThat(result.stdoutText()).as(result.stderrText())
			.contains(ATTEMPTS.stream().map((attempt) -> "\n" + attempt + "=").toArray(String[]::new))
			.doesNotContain("=leak", "=no-marker");
		deleteLinks(work);
		String control = outside(attemptsArgv(work), work, handle, null);
		assertThat(control).as("the control: unisolated")
			.contains("direct=leak", "proc-self-root=leak", "dot-dot=leak", "other-processes=leak",
					"open-by-handle=leak", "hard-link=leak");
		deleteLinks(work);
	}

	/**
	 * Held: the command starts with no descriptor but its three pipes (nothing of the
	 * host's filesystem stays open into it: the launcher closes every other one); the
	 * control starts the same script unisolated with a planted secret as its standard
	 * input, which it sees.
	 */
	@ForEachLinuxMechanism
	void theCommandStartsWithNoDescriptorIntoTheHost(MechanismChoice choice, @TempDir Path work) throws Exception {
		ExecutionResult result = execute(choice, work, (settings) -> settings,
				ExecutionRequest.builder(attemptsArgv(work)).environment("CAVE_HANDLE", "1:00"));
		List<String> descriptors = result.stdoutText().lines().filter((line) -> line.startsWith("fd ")).toList();
		assertThat(descriptors).as(result.stdoutText())
			.hasSize(3)
			.allMatch((line) -> line.matches("fd [012]=pipe:\\[\\d+\\]"));
		deleteLinks(work);
		String control = outside(attemptsArgv(work), work, "1:00", this.srv.resolve("secret"));
		assertThat(control).contains("fd 0=" + this.srv.resolve("secret"));
		deleteLinks(work);
	}

	/**
	 * Held: a program outside the view (a copy of {@code true} in {@code /srv}, mode 755)
	 * cannot be run, neither by {@code execve(2)} nor through the dynamic loader (which
	 * reads and maps it); unisolated both run it.
	 */
	@ForEachLinuxMechanism
	void programsOutsideTheViewCannotBeRun(MechanismChoice choice, @TempDir Path work) throws Exception {
		Path tool = this.srv.resolve("tool");
		Files.copy(Path.of("/usr/bin/true"), tool, StandardCopyOption.COPY_ATTRIBUTES);
		this.planted.add(tool);
		Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
		String loader = Files.exists(Path.of("/lib64/ld-linux-x86-64.so.2")) ? "/lib64/ld-linux-x86-64.so.2"
				: "/lib/ld-linux-aarch64.so.1";
		List<String> argv = List.of("/bin/sh", "-c", "\"$0\"; echo exec=$?; " + loader + " \"$0\"; echo loader=$?",
				tool.toString());
		ExecutionResult result = execute(choice, work, (settings) -> settings, ExecutionRequest.builder(argv));
		assertThat(result.stdoutText()).as(result.stderrText())
			.containsPattern("exec=12[67]\n")
			.containsPattern("loader=(12[67]|1)\n");
		assertThat(outside(argv, work, "1:00", null)).contains("exec=0\n", "loader=0\n");
	}

	/**
	 * Found by the break-in attempt: a readable path listed for a request that is or
	 * holds a masked path was bound over the view's masks (the listed paths were mounted
	 * after the masked files and directories), and on {@code bwrap} {@code /etc} and
	 * {@code /etc/ssh}, on {@code unshare} {@code /etc/ssh} uncovered a file in the
	 * masked {@code /etc/ssh}. Now the masks are mounted last, so that a listed
	 * {@code /etc} keeps them, and a listed path inside a masked one is refused with a
	 * code. Without a listed path the mask holds; the control, the host view, reads the
	 * secret.
	 */
	@ForEachLinuxMechanism
	void aListedPathThatHoldsAMaskedSecretDoesNotUncoverIt(MechanismChoice choice, @TempDir Path work)
			throws Exception {
		Path ssh = Path.of("/etc/ssh");
		assumeThat(ssh).isDirectory();
		Path secret = secret(ssh.resolve("cave-red-team-" + UUID.randomUUID()));
		List<String> argv = List.of("/bin/cat", secret.toString());
		assertThat(execute(choice, work, (settings) -> settings, ExecutionRequest.builder(argv)).stdoutText())
			.doesNotContain(this.marker);
		assertThat(execute(choice, work, (settings) -> settings.filesystemView(SandboxSettings.Filesystem.View.HOST),
				ExecutionRequest.builder(argv))
			.stdoutText()).as("the control: the host view").contains(this.marker);
		ExecutionResult etcListed = execute(choice, work, (settings) -> settings,
				ExecutionRequest.builder(argv).readablePaths(Path.of("/etc")));
		assertThat(etcListed.stdoutText()).as("/etc listed: exit %d, %s", etcListed.exitCode(), etcListed.stderrText())
			.doesNotContain(this.marker);
		assertThat(etcListed.exitCode()).as("cat of the masked file's path fails: %s", etcListed.stderrText())
			.isNotZero();
		assertThatExceptionOfType(InvalidExecutionRequestException.class).isThrownBy(
				() -> execute(choice, work, (settings) -> settings, ExecutionRequest.builder(argv).readablePaths(ssh)))
			.withMessageContaining("lies in /etc/ssh, a secret the system view masks");
	}

	private ExecutionResult execute(MechanismChoice choice, Path work,
			UnaryOperator<SandboxSettings.Builder> customizer, ExecutionRequest.Builder request) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(choice, customizer)) {
			return executor.execute(request.workingDirectory(work).timeout(Duration.ofSeconds(120)).build());
		}
	}

	private List<String> attemptsArgv(Path work) throws IOException {
		Path script = work.resolve("attempts.py");
		if (!Files.exists(script)) {
			try (InputStream in = getClass().getResourceAsStream("filesystem-view-attempts.py")) {
				Files.copy(in, script);
			}
			Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rw-r--r--"));
		}
		return List.of(PYTHON, script.toString(), this.marker, this.srv.resolve("secret").toString(),
				this.home.resolve("secret").toString());
	}

	/** The file handle of a planted file (name_to_handle_at(2)), as TYPE:HEX. */
	private String handle(Path work, Path file) throws Exception {
		List<String> argv = new ArrayList<>(attemptsArgv(work).subList(0, 2));
		argv.addAll(List.of("handle", file.toString()));
		String handle = outside(argv, work, "", null).strip();
		assertThat(handle).matches("\\d+:[0-9a-f]+");
		return handle;
	}

	/** Run argv unisolated in the directory and return its output. */
	private static String outside(List<String> argv, Path work, String handle, Path stdin) throws Exception {
		ProcessBuilder builder = new ProcessBuilder(argv).directory(work.toFile()).redirectErrorStream(true);
		builder.environment().put("CAVE_HANDLE", handle);
		if (stdin != null) {
			builder.redirectInput(stdin.toFile());
		}
		Process process = builder.start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return output;
	}

	private static void deleteLinks(Path work) throws IOException {
		try (Stream<Path> files = Files.list(work)) {
			for (Path file : files.filter((f) -> f.getFileName().toString().startsWith("link")).toList()) {
				Files.delete(file);
			}
		}
	}

	private Path directory(Path directory) throws IOException {
		Files.createDirectory(directory);
		this.planted.add(directory);
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		return directory;
	}

	private Path secret(Path file) throws IOException {
		Files.writeString(file, this.marker + "\n");
		this.planted.add(file);
		Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
		return file;
	}

}
