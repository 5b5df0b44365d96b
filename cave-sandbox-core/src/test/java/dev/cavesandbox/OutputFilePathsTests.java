package dev.cavesandbox;

import java.util.List;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class OutputFilePathsTests {

	@Test
	void outputFilePathsOutsideTheWorkingDirectoryAreRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").outputFile(""),
				"output file path must name a file relative to the working directory, but was ''");
		assertInvalid(() -> ExecutionRequest.builder("true").outputFile("/etc/shadow"),
				"output file path /etc/shadow is absolute; give it relative to the working directory, for example "
						+ "etc/shadow");
		for (String path : List.of("..", "../up", "a/../b", ".", "./a", "a//b", "a/")) {
			assertInvalid(() -> ExecutionRequest.builder("true").outputFile(path),
					"output file path " + path + " has an empty, '.' or '..' name");
		}
		assertInvalid(() -> ExecutionRequest.builder("true").outputFile("a\0b"), "contains a NUL byte");
		assertInvalid(() -> ExecutionRequest.builder("true").outputFile("a\ud800"), "is not valid Unicode");
		assertThat(ExecutionRequest.builder("true").outputFile("out/in.pdf").build().outputFiles())
			.containsExactly("out/in.pdf");
	}

	@Test
	void outputFileGlobsOutsideTheWorkingDirectoryOrNotGlobsAreRejected() {
		assertInvalid(() -> ExecutionRequest.builder("true").outputFiles("/tmp/*.pdf"),
				"output file glob /tmp/*.pdf is absolute; give it relative to the working directory, for example "
						+ "tmp/*.pdf");
		for (String glob : List.of("../*.pdf", "a/../*", "**/..", "./*")) {
			assertInvalid(() -> ExecutionRequest.builder("true").outputFiles(glob),
					"output file glob " + glob + " has an empty, '.' or '..' name");
		}
		assertInvalid(() -> ExecutionRequest.builder("true").outputFiles("*.{pdf"),
				"output file glob *.{pdf is not a valid glob (Missing '}");
		assertInvalid(() -> ExecutionRequest.builder("true").outputFiles("*.pdf", ""),
				"output file glob must name a file relative to the working directory, but was ''");
		assertThat(ExecutionRequest.builder("true")
			.outputFiles("*.pdf", "out/**.png", "[a-c]?.txt")
			.build()
			.outputFileGlobs()).containsExactly("*.pdf", "out/**.png", "[a-c]?.txt");
	}

	private static void assertInvalid(ThrowingCallable call, String message) {
		assertThatExceptionOfType(InvalidExecutionRequestException.class).isThrownBy(call)
			.withMessageContaining(message)
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
	}

}
