package dev.cavesandbox;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class ExecutionRequestTests {

	@Test
	void emptyArgvIsRejected() {
		assertInvalid(() -> ExecutionRequest.of(), "argv must name a command: it is empty");
		assertInvalid(() -> ExecutionRequest.builder(List.of()), "it is empty");
		assertInvalid(() -> ExecutionRequest.of(""), "argv[0] must name a command: it is an empty string");
	}

	@Test
	void nullArgumentIsRejected() {
		assertInvalid(() -> ExecutionRequest.builder(Arrays.asList("echo", null)), "argv[1] is null");
	}

	@Test
	void nulByteInAnArgumentIsRejected() {
		assertInvalid(() -> ExecutionRequest.of("echo", "a\0b"), "argv[1] contains a NUL byte");
		assertInvalid(() -> ExecutionRequest.of("ec\0ho"), "argv[0] contains a NUL byte");
	}

	@Test
	void badEnvironmentIsRejected() {
		assertInvalid(() -> ExecutionRequest.builder("env").environment("A=B", "x"), "contain no '='");
		assertInvalid(() -> ExecutionRequest.builder("env").environment("", "x"), "must be non-empty");
		assertInvalid(() -> ExecutionRequest.builder("env").environment("A", "x\0y"), "contains a NUL byte");
		assertInvalid(() -> ExecutionRequest.builder("env").passEnvironment("A\0"), "contains a NUL byte");
	}

	@Test
	void zeroOrNegativeTimeoutIsRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").timeout(Duration.ZERO), "timeout must be positive");
		assertInvalid(() -> ExecutionRequest.builder("true").timeout(Duration.ofMillis(-1)),
				"timeout must be positive");
	}

	@Test
	void zeroOrNegativeOutputCapIsRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").maxOutputBytes(0), "maxOutputBytes must be positive");
		assertInvalid(() -> ExecutionRequest.builder("true").maxOutputBytes(-5), "maxOutputBytes must be positive");
	}

	@Test
	void requestIsImmutableAndKeepsWhatWasSet() {
		List<String> argv = new java.util.ArrayList<>(List.of("cat", "-"));
		byte[] input = "in".getBytes(StandardCharsets.UTF_8);
		ExecutionRequest request = ExecutionRequest.builder(argv)
			.workingDirectory(Path.of("/srv"))
			.environment("A", "1")
			.passEnvironment("TZ")
			.stdin(input)
			.timeout(Duration.ofSeconds(3))
			.maxOutputBytes(10)
			.build();
		argv.add("changed");
		input[0] = 'X';
		assertThat(request.argv()).containsExactly("cat", "-");
		assertThat(request.workingDirectory()).isEqualTo(Path.of("/srv"));
		assertThat(request.environment()).containsEntry("A", "1");
		assertThat(request.passEnvironment()).containsExactly("TZ");
		assertThat(request.timeout()).isEqualTo(Duration.ofSeconds(3));
		assertThat(request.maxOutputBytes()).isEqualTo(10);
		assertThat(request.stdin().get()).hasContent("in");
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> request.argv().add("x"));
	}

	@Test
	void unsetValuesAreLeftToTheExecutor() {
		ExecutionRequest request = ExecutionRequest.of("true");
		assertThat(request.workingDirectory()).isNull();
		assertThat(request.timeout()).isNull();
		assertThat(request.maxOutputBytes()).isNull();
		assertThat(request.stdin()).isNull();
		assertThat(request.limits()).isEqualTo(ResourceLimits.NONE);
	}

	@Test
	void limitsOfTheRequestOverrideOnlyTheValuesTheySet() {
		ResourceLimits settings = ResourceLimits.defaults().toBuilder().fileSize(1024).build();
		ExecutionRequest request = ExecutionRequest.builder("true")
			.limits(ResourceLimits.builder().cpuTime(Duration.ofMillis(1500)).memory(256L * 1024 * 1024).build())
			.build();
		ResourceLimits merged = settings.overriddenBy(request.limits());
		assertThat(merged).isEqualTo(new ResourceLimits(256L * 1024 * 1024, ResourceLimits.DEFAULT_PROCESSES,
				Duration.ofMillis(1500), 1024L, null, ResourceLimits.DEFAULT_TMPFS_SIZE));
		assertThat(merged.cpuSeconds()).isEqualTo(2);
		assertThat(settings.overriddenBy(ExecutionRequest.of("true").limits())).isEqualTo(settings);
	}

	@Test
	void nullLimitsAreRejected() {
		assertThatExceptionOfType(NullPointerException.class)
			.isThrownBy(() -> ExecutionRequest.builder("true").limits(null))
			.withMessageContaining("limits must not be null");
	}

	/**
	 * A readable or writable path of a request must be absolute and not the root: the
	 * builder refuses it with the invalid-request code, naming it.
	 */
	@Test
	void relativeOrRootListedPathsAreRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").readablePaths(Path.of("data")),
				"readable path must be an absolute path other than /, but was data");
		assertInvalid(() -> ExecutionRequest.builder("true").readablePaths(Path.of("/")),
				"readable path must be an absolute path other than /, but was /");
		assertInvalid(() -> ExecutionRequest.builder("true").writablePaths(Path.of("out")),
				"writable path must be an absolute path other than /, but was out");
		assertInvalid(() -> ExecutionRequest.builder("true").writablePaths(Path.of("/srv"), Path.of("/")),
				"writable path must be an absolute path other than /, but was /");
		assertInvalid(() -> ExecutionRequest.builder("true").writablePaths((Path) null),
				"writable path must be an absolute path other than /, but was null");
	}

	/**
	 * The request keeps its listed paths, normalized, in their order and unchangeable;
	 * without any they are empty.
	 */
	@Test
	void listedPathsAreKeptNormalizedAndUnchangeable() {
		ExecutionRequest request = ExecutionRequest.builder("true")
			.readablePaths(Path.of("/srv/data"), Path.of("/srv/x/../docs"))
			.readablePaths(Path.of("/opt/tool"))
			.writablePaths(Path.of("/srv/out"))
			.build();
		assertThat(request.readablePaths()).containsExactly(Path.of("/srv/data"), Path.of("/srv/docs"),
				Path.of("/opt/tool"));
		assertThat(request.writablePaths()).containsExactly(Path.of("/srv/out"));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> request.readablePaths().add(Path.of("/etc")));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> request.writablePaths().add(Path.of("/etc")));
		assertThat(ExecutionRequest.of("true").readablePaths()).isEmpty();
		assertThat(ExecutionRequest.of("true").writablePaths()).isEmpty();
	}

	@Test
	void inputFilesAreKeptInOrderAsCopies() {
		byte[] content = "print(1)".getBytes(StandardCharsets.UTF_8);
		ExecutionRequest.Builder builder = ExecutionRequest.builder("python3", "main.py")
			.inputFile("main.py", content)
			.inputFile("data/in.txt", new byte[0]);
		ExecutionRequest request = builder.build();
		content[0] = 'X';
		assertThat(request.inputFiles()).containsOnlyKeys("main.py", "data/in.txt");
		assertThat(List.copyOf(request.inputFiles().keySet())).containsExactly("main.py", "data/in.txt");
		assertThat(request.inputFiles().get("main.py")).asString(StandardCharsets.UTF_8).isEqualTo("print(1)");
		request.inputFiles().get("main.py")[0] = 'Y';
		assertThat(request.inputFiles().get("main.py")).asString(StandardCharsets.UTF_8).isEqualTo("print(1)");
		assertThat(ExecutionRequest.of("true").inputFiles()).isEmpty();
	}

	@Test
	void inputFilesWithAWorkingDirectoryAreRejected() {
		assertInvalid(
				() -> ExecutionRequest.builder("true")
					.inputFile("a", new byte[0])
					.workingDirectory(Path.of("/srv/work"))
					.build(),
				"input files are written into the private working directory, but the request names the working "
						+ "directory /srv/work; leave the working directory unset");
	}

	@Test
	void outputFilesAndGlobsAreKeptInOrderWithoutRepeats() {
		ExecutionRequest request = ExecutionRequest.builder("soffice", "--convert-to", "pdf", "in.odt")
			.outputFile("in.pdf")
			.outputFile("logs/run.log")
			.outputFile("in.pdf")
			.outputFiles("*.png", "out/**", "*.png")
			.maxOutputFileBytes(4096)
			.build();
		assertThat(request.outputFiles()).containsExactly("in.pdf", "logs/run.log");
		assertThat(request.outputFileGlobs()).containsExactly("*.png", "out/**");
		assertThat(request.maxOutputFileBytes()).isEqualTo(4096);
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> request.outputFiles().add("x"));
		ExecutionRequest none = ExecutionRequest.of("true");
		assertThat(none.outputFiles()).isEmpty();
		assertThat(none.outputFileGlobs()).isEmpty();
		assertThat(none.maxOutputFileBytes()).isNull();
	}

	@Test
	void zeroOrNegativeOutputFileCapIsRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").maxOutputFileBytes(0),
				"maxOutputFileBytes must be positive, but was 0");
		assertInvalid(() -> ExecutionRequest.builder("true").maxOutputFileBytes(-1),
				"maxOutputFileBytes must be positive, but was -1");
	}

	@Test
	void outputFilesWithAWorkingDirectoryAreRejected() {
		assertInvalid(
				() -> ExecutionRequest.builder("true").outputFile("a").workingDirectory(Path.of("/srv/work")).build(),
				"output files are read back from the private working directory, but the request names the "
						+ "working directory /srv/work; leave the working directory unset, or read the files from "
						+ "it yourself");
		assertInvalid(() -> ExecutionRequest.builder("true").outputFiles("*").workingDirectory(Path.of("/w")).build(),
				"output files are read back from the private working directory");
	}

	@Test
	void anOutputDirectoryIsKeptWithTheOutputFiles() {
		ExecutionRequest request = ExecutionRequest.builder("true")
			.outputFile("a.pdf")
			.outputDirectory(Path.of("/srv/out/../results"))
			.build();
		assertThat(request.outputDirectory()).isEqualTo(Path.of("/srv/results"));
		assertThat(ExecutionRequest.of("true").outputDirectory()).isNull();
	}

	@Test
	void anOutputDirectoryThatIsRelativeOrTheRootOrWithoutOutputFilesIsRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").outputDirectory(Path.of("out")),
				"output directory must be an absolute path other than /, but was out");
		assertInvalid(() -> ExecutionRequest.builder("true").outputDirectory(Path.of("/")),
				"output directory must be an absolute path other than /, but was /");
		assertInvalid(() -> ExecutionRequest.builder("true").outputDirectory(Path.of("/srv/..")),
				"output directory must be an absolute path other than /, but was /");
		assertInvalid(() -> ExecutionRequest.builder("true").outputDirectory(Path.of("/srv/out")).build(),
				"the request names the output directory /srv/out but no output files; name them with outputFile or "
						+ "outputFiles, or leave the output directory unset");
	}

	private static void assertInvalid(ThrowingCallable call, String message) {
		assertThatExceptionOfType(InvalidExecutionRequestException.class).isThrownBy(call)
			.withMessageContaining(message)
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith("cave_sandbox_invalid_request: "));
	}

}
