package dev.cavesandbox.internal.workspace;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.OutputFiles;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.SharedExecutors;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The request's output files written into a directory of the caller's
 * ({@link ExecutionRequest.Builder#outputDirectory}) by real executions on the default
 * mechanism (bwrap) and on seccomp, whose command is another uid of the host for a root
 * JVM (as the tests run here). The command names the files and may plant links among
 * them; the caller's directory may hold links of its own at those names. Neither kind of
 * link is followed: the files they point to keep their content.
 */
@EnabledOnOs(OS.LINUX)
class OutputDirectoryTests {

	private static final String VICTIM = "the JVM user's";

	private static final Duration NO_HANG = Duration.ofSeconds(120);

	private static final SharedExecutors executors = new SharedExecutors((settings) -> settings);

	@AfterAll
	static void closeExecutors() {
		executors.close();
	}

	static Stream<MechanismChoice> mechanisms() {
		return Stream.of(MechanismChoice.BWRAP, MechanismChoice.SECCOMP);
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.isolated(mechanism);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("mechanisms")
	void theFilesAreWrittenIntoTheDirectoryInsteadOfTheResult(MechanismChoice mechanism, @TempDir Path destination)
			throws Exception {
		String text = "report " + UUID.randomUUID();
		ExecutionResult result = execute(mechanism, destination,
				(request) -> request.outputFile("report.txt").outputFiles("out/**.bin"),
				"printf %s \"$1\" > report.txt && mkdir -p out/deep && head -c 3000000 /dev/urandom"
						+ " > out/deep/data.bin && sha256sum out/deep/data.bin",
				text);
		OutputFiles files = result.outputFiles();
		assertThat(files.files()).as("nothing is held in memory").isEmpty();
		assertThat(files.written()).containsExactly(destination.resolve("report.txt"),
				destination.resolve("out/deep/data.bin"));
		assertThat(files.unwritten()).isEmpty();
		assertThat(Files.readString(destination.resolve("report.txt"))).isEqualTo(text);
		Path data = destination.resolve("out/deep/data.bin");
		assertThat(Files.size(data)).isEqualTo(3_000_000);
		assertThat(result.stdoutText()).startsWith(sha256(data));
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rw-------");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(destination.resolve("out/deep"))))
			.isEqualTo("rwx------");
	}

	/**
	 * The example of docs/output-files.md: the files go into the caller's directory,
	 * pages below a directory of their own, and the result names their paths there.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("mechanisms")
	void theDocumentedExampleWritesIntoTheDirectory(MechanismChoice mechanism, @TempDir Path temporary)
			throws Exception {
		IsolatedExecutor executor = isolated(mechanism);
		Path results = Files.createDirectory(temporary.resolve("job-42"));
		// docs/output-files.md: begin
		ExecutionResult result = executor.execute(ExecutionRequest
			.builder("sh", "-c", "mkdir pages && split -l 1 -d input.txt pages/page- && wc -l < input.txt > count.txt")
			.inputFile("input.txt", "one\ntwo\nthree\n".getBytes(StandardCharsets.UTF_8))
			.outputFile("count.txt")
			.outputFiles("pages/*")
			.outputDirectory(results)
			.build());
		List<Path> written = result.outputFiles().written();
		// docs/output-files.md: end
		System.out.println(result);
		written.forEach(System.out::println);
		assertThat(written).containsExactly(results.resolve("count.txt"), results.resolve("pages/page-00"),
				results.resolve("pages/page-01"), results.resolve("pages/page-02"));
		assertThat(Files.readString(results.resolve("pages/page-02"))).isEqualTo("three\n");
	}

	/**
	 * The command plants links named like the requested files (a file and a directory of
	 * the JVM user's outside): they are skipped, as without an output directory, and
	 * nothing is written at their names or through them.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("mechanisms")
	void linksTheCommandPlantedAreNeitherFollowedNorWritten(MechanismChoice mechanism, @TempDir Path destination,
			@TempDir Path outside) throws Exception {
		Path victim = victimIn(outside);
		OutputFiles files = execute(mechanism, destination,
				(request) -> request.outputFile("report.txt")
					.outputFile("out/victim.txt")
					.outputFiles("*.txt", "out/*"),
				"ln -s \"$1/victim.txt\" report.txt && ln -s \"$1\" out && ln -s /etc/shadow shadow.txt"
						+ " && echo ok > ok.txt",
				outside.toString())
			.outputFiles();
		assertThat(files.written()).containsExactly(destination.resolve("ok.txt"));
		assertThat(files.skipped()).containsExactlyInAnyOrder("report.txt", "out/victim.txt", "shadow.txt");
		try (Stream<Path> names = Files.list(destination)) {
			assertThat(names).containsExactly(destination.resolve("ok.txt"));
		}
		assertThat(Files.readString(victim)).isEqualTo(VICTIM);
		try (Stream<Path> names = Files.list(outside)) {
			assertThat(names).containsExactly(victim);
		}
	}

	/**
	 * The caller's directory already holds the names: a link to a file of the JVM user's,
	 * a regular file, a link where a directory of the path goes. None is replaced or
	 * followed; the files are named as unwritten, and the rest are written.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("mechanisms")
	void namesTheDirectoryHoldsAreNeitherReplacedNorFollowed(MechanismChoice mechanism, @TempDir Path destination,
			@TempDir Path outside) throws Exception {
		Path victim = victimIn(outside);
		Files.createSymbolicLink(destination.resolve("report.txt"), victim);
		Files.createSymbolicLink(destination.resolve("out"), outside);
		Files.writeString(destination.resolve("kept.txt"), "the caller's");
		OutputFiles files = execute(mechanism, destination,
				(request) -> request.outputFile("report.txt")
					.outputFile("kept.txt")
					.outputFile("out/victim.txt")
					.outputFile("new.txt"),
				"echo command > report.txt && echo command > kept.txt && mkdir out && echo command > out/victim.txt"
						+ " && echo new > new.txt")
			.outputFiles();
		assertThat(files.unwritten()).containsExactly("report.txt", "kept.txt", "out/victim.txt");
		assertThat(files.written()).containsExactly(destination.resolve("new.txt"));
		assertThat(Files.readString(victim)).isEqualTo(VICTIM);
		assertThat(Files.isSymbolicLink(destination.resolve("report.txt"))).isTrue();
		assertThat(Files.readString(destination.resolve("kept.txt"))).isEqualTo("the caller's");
		try (Stream<Path> names = Files.list(outside)) {
			assertThat(names).containsExactly(victim);
		}
	}

	@Test
	void filesPastTheCapAreNeitherWrittenNorCreated(@TempDir Path destination) throws Exception {
		ExecutionResult result = executors.unisolated()
			.execute(ExecutionRequest
				.builder("sh", "-c", "head -c 600 /dev/zero > a; head -c 600 /dev/zero > b; head -c 300 /dev/zero > c")
				.outputFiles("*")
				.maxOutputFileBytes(1000)
				.outputDirectory(destination)
				.build());
		assertThat(result.outputFiles().written()).containsExactly(destination.resolve("a"), destination.resolve("c"));
		assertThat(result.outputFiles().omitted()).containsExactly("b");
		assertThat(result.outputFilesTruncated()).isTrue();
		assertThat(destination.resolve("b")).doesNotExist();
		assertThat(Files.size(destination.resolve("c"))).isEqualTo(300);
	}

	/**
	 * An unusable directory fails the request before the command runs (it would leave a
	 * marker), and gives back what it took: the one slot serves the next request.
	 */
	@Test
	void anUnusableDirectoryFailsBeforeTheCommandRuns(@TempDir Path parent) throws Exception {
		Path file = Files.writeString(parent.resolve("file"), "x");
		Path link = Files.createSymbolicLink(parent.resolve("link"), Files.createDirectory(parent.resolve("real")));
		Path marker = parent.resolve("ran");
		record Case(Path directory, String message) {
		}
		List<Case> cases = List.of(new Case(parent.resolve("missing"), "does not exist; create it first"),
				new Case(parent.resolve("missing/below"), "does not exist; create it first"),
				new Case(link, "is a symbolic link, which is not followed"), new Case(file, "is not a directory"));
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor
			.unisolated(SandboxSettings.builder().maxConcurrent(1).queueTimeout(Duration.ofMillis(300)).build())) {
			for (Case unusable : cases) {
				ExecutionRequest request = ExecutionRequest.builder("touch", marker.toString())
					.outputFile("out.txt")
					.outputDirectory(unusable.directory())
					.build();
				assertThatExceptionOfType(InvalidExecutionRequestException.class)
					.isThrownBy(() -> executor.execute(request))
					.withMessageStartingWith("cave_sandbox_invalid_request: output directory " + unusable.directory())
					.withMessageContaining(unusable.message())
					.withMessageEndingWith("or leave the output directory unset to get the files in the result");
				assertThatExceptionOfType(InvalidExecutionRequestException.class)
					.isThrownBy(() -> executor.start(request));
			}
			assertThat(marker).doesNotExist();
			assertThat(Files.isSymbolicLink(link)).isTrue();
			assertThat(executor.execute("true").exitCode()).as("the slot was given back").isZero();
		}
	}

	/**
	 * The directory is held open from the launch's preparation to its end, and closed
	 * however it ends: written, or refused by a later phase (a command that is not
	 * there).
	 */
	@Test
	void theDirectoryIsNotLeftOpen(@TempDir Path destination) throws Exception {
		IsolatedExecutor executor = isolated(MechanismChoice.BWRAP);
		assertThatExceptionOfType(CommandNotFoundException.class)
			.isThrownBy(() -> executor.execute(ExecutionRequest.builder("no-such-command-" + UUID.randomUUID())
				.outputFile("a")
				.outputDirectory(destination)
				.build()));
		assertThat(descriptorsOf(destination)).isZero();
		SandboxedProcess process = executor.start(ExecutionRequest.builder("sh", "-c", "echo a > a")
			.outputFile("a")
			.outputDirectory(destination)
			.build());
		assertThat(process.waitFor(NO_HANG)).isTrue();
		assertThat(process.outputFiles().written()).containsExactly(destination.resolve("a"));
		assertThat(descriptorsOf(destination)).isZero();
	}

	/** How many descriptors of this JVM are open on the directory. */
	private static long descriptorsOf(Path directory) throws Exception {
		try (Stream<Path> descriptors = Files.list(Path.of("/proc/self/fd"))) {
			return descriptors.filter((descriptor) -> {
				try {
					return Files.readSymbolicLink(descriptor).equals(directory);
				}
				catch (Exception ex) {
					return false; // closed since the listing
				}
			}).count();
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("mechanisms")
	void aStartedProcessWritesItsFilesWhenItHasEnded(MechanismChoice mechanism, @TempDir Path destination,
			@TempDir Path outside) throws Exception {
		Path victim = victimIn(outside);
		Files.createSymbolicLink(destination.resolve("linked.txt"), victim);
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.builder("sh", "-c", "read l; printf %s \"$l\" > line.txt; echo x > linked.txt")
				.outputFile("line.txt")
				.outputFile("linked.txt")
				.outputDirectory(destination)
				.build());
		assertThat(destination.resolve("line.txt")).doesNotExist();
		process.stdin().write("at exit\n".getBytes(StandardCharsets.UTF_8));
		process.stdin().close();
		assertThat(process.waitFor(NO_HANG)).isTrue();
		assertThat(process.outputFiles().written()).containsExactly(destination.resolve("line.txt"));
		assertThat(process.outputFiles().unwritten()).containsExactly("linked.txt");
		assertThat(Files.readString(destination.resolve("line.txt"))).isEqualTo("at exit");
		assertThat(Files.readString(victim)).isEqualTo(VICTIM);
	}

	/** Run a script whose output files go to the destination; it must exit 0. */
	private static ExecutionResult execute(MechanismChoice mechanism, Path destination,
			UnaryOperator<ExecutionRequest.Builder> outputFiles, String script, String... arguments) {
		List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "sh"));
		argv.addAll(List.of(arguments));
		ExecutionResult result = isolated(mechanism)
			.execute(outputFiles.apply(ExecutionRequest.builder(argv)).outputDirectory(destination).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		return result;
	}

	/** A file of the JVM user's that no link may lead a write to. */
	private static Path victimIn(Path outside) throws Exception {
		return Files.writeString(outside.resolve("victim.txt"), VICTIM);
	}

	private static String sha256(Path file) throws Exception {
		byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
		StringBuilder hex = new StringBuilder();
		for (byte b : digest) {
			hex.append(String.format("%02x", b));
		}
		return hex.toString();
	}

}
