package dev.cavesandbox;

import java.util.List;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class InputFilePathsTests {

	@Test
	void inputFilePathsOutsideTheWorkingDirectoryOrAmbiguousAreRejected() {
		byte[] none = new byte[0];
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("", none), "must name a file");
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("/etc/passwd", none),
				"is absolute; give it relative to the working directory, for example etc/passwd");
		for (String path : List.of("..", "../up", "a/../b", ".", "./a", "a/./b", "a//b", "a/", "a/..")) {
			assertInvalid(() -> ExecutionRequest.builder("true").inputFile(path, none),
					"input file path " + path + " has an empty, '.' or '..' name");
		}
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("a\0b", none), "contains a NUL byte");
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("d/" + "\u00e9".repeat(128), none),
				"has a name of more than 255 bytes");
		assertThat(ExecutionRequest.builder("true").inputFile("d/" + "x".repeat(255), none).build().inputFiles())
			.hasSize(1);
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("a", none).inputFile("a", none),
				"collides with a, given before");
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("a", none).inputFile("a/b", none),
				"input file path a/b collides with a");
		assertInvalid(() -> ExecutionRequest.builder("true").inputFile("a/b", none).inputFile("a", none),
				"input file path a collides with a/b");
	}

	private static void assertInvalid(ThrowingCallable call, String message) {
		assertThatExceptionOfType(InvalidExecutionRequestException.class).isThrownBy(call)
			.withMessageContaining(message)
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith("cave_sandbox_invalid_request: "));
	}

}
