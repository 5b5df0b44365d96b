package dev.cavesandbox.langchain4j;

import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The engine running code in this host's real sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class SandboxedCodeExecutionEngineTests {

	private final IsolatedExecutor executor = TestSandbox.executor();

	private final SandboxedCodeExecutionEngine python = new SandboxedCodeExecutionEngine(this.executor, "python",
			List.of("python3"));

	@Test
	void returnsWhatPythonPrintedWithoutTheTrailingLineBreak() {
		assertThat(this.python.execute("import math\nprint(math.factorial(10))")).isEqualTo("3628800");
	}

	@Test
	void runsNodeAndShellWhenConfiguredSo() {
		assertThat(new SandboxedCodeExecutionEngine(this.executor, "javascript", List.of("node"))
			.execute("console.log([3, 1, 2].sort().join(','))")).isEqualTo("1,2,3");
		assertThat(new SandboxedCodeExecutionEngine(this.executor, "shell", List.of("sh")).execute("echo $((6 * 7))"))
			.isEqualTo("42");
	}

	@Test
	void codeThatFailsGivesItsExitCodeStdoutAndStderr() {
		String result = this.python.execute("print('before')\nraise ValueError('bad input')");
		assertThat(result).startsWith("Exit code 1.\nstdout:\nbefore\nstderr:\nTraceback")
			.endsWith("ValueError: bad input");
	}

	@Test
	void codeThatPrintsNothingSaysSoWithItsStderr() {
		assertThat(this.python.execute("x = 42")).isEqualTo(SandboxedCodeExecutionEngine.NO_OUTPUT);
		assertThat(this.python.execute("import sys\nsys.stderr.write('only a warning')"))
			.isEqualTo(SandboxedCodeExecutionEngine.NO_OUTPUT + "\nstderr:\nonly a warning");
	}

	@Test
	void codeThatRunsTooLongIsKilledAndSaysWhatItPrinted() {
		SandboxedCodeExecutionEngine quick = new SandboxedCodeExecutionEngine(this.executor, "python",
				List.of("python3"), Duration.ofMillis(500), 8192);
		assertThat(quick.execute("import time\nprint('started', flush=True)\ntime.sleep(60)"))
			.isEqualTo("Timed out after 500 ms; its processes were killed.\nstdout:\nstarted\nstderr:\n");
	}

	@Test
	void longOutputIsCutAndSaysSo() {
		SandboxedCodeExecutionEngine small = new SandboxedCodeExecutionEngine(this.executor, "python",
				List.of("python3"), Duration.ofSeconds(20), 100);
		assertThat(small.execute("print('x' * 10000)"))
			.isEqualTo("x".repeat(100) + "\n[output truncated at 100 bytes]");
	}

	@Test
	void theCodeCannotReachAListenerOnTheHostsLoopback() throws Exception {
		try (ServerSocketChannel listener = TestSandbox.loopbackListener()) {
			String code = """
					import socket
					try:
					    socket.create_connection(("127.0.0.1", %d), timeout=5).close()
					    print("connected")
					except OSError as e:
					    print("no network:", type(e).__name__)
					""".formatted(TestSandbox.port(listener));
			assertThat(this.python.execute(code)).startsWith("no network:");
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("the code reached the host's listener").isNull();
			}
		}
	}

	@Test
	void anInterpreterThatIsMissingIsAnErrorText() {
		SandboxedCodeExecutionEngine ruby = new SandboxedCodeExecutionEngine(this.executor, "ruby",
				List.of("cave-lc4j-no-such-ruby"));
		assertThat(ruby.execute("puts 42")).startsWith("Error: the interpreter of ruby cannot run: ")
			.contains("cave-lc4j-no-such-ruby");
	}

	@Test
	void noCodeIsAnErrorText() {
		assertThat(this.python.execute(null)).isEqualTo("Error: no code to execute");
		assertThat(this.python.execute("  \n")).isEqualTo("Error: no code to execute");
	}

	@Test
	void inStrictModeWithoutIsolationTheCodeNeverRuns() {
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.UNSHARE)
			.unsharePath(java.nio.file.Path.of("/nonexistent/cave-lc4j/unshare"))
			.build();
		try (IsolatedExecutor unavailable = IsolatedExecutors.create(settings)) {
			SandboxedCodeExecutionEngine engine = new SandboxedCodeExecutionEngine(unavailable, "python",
					List.of("python3"));
			assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
				.isThrownBy(() -> engine.execute("print(1)"));
		}
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void inFallbackModeEachUnisolatedRunIsWarned(CapturedOutput output) {
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.NONE)
			.mode(SandboxMode.FALLBACK)
			.build();
		try (IsolatedExecutor unisolated = IsolatedExecutors.create(settings)) {
			SandboxedCodeExecutionEngine engine = new SandboxedCodeExecutionEngine(unisolated, "python",
					List.of("python3"));
			assertThat(engine.execute("print(6 * 7)")).isEqualTo("42");
			assertThat(output.getAll()).containsPattern(
					"WARN .*Code of python ran WITHOUT network isolation \\(none \\(NOT network isolated\\)\\)");
		}
	}

	@Test
	void rejectsALanguageThatIsNoFileExtensionAndAnEmptyCommand() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new SandboxedCodeExecutionEngine(this.executor, "../py", List.of("python3")))
			.withMessage("language must be a name of letters, digits, '-' and '_', but was '../py'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new SandboxedCodeExecutionEngine(this.executor, "python", List.of()))
			.withMessage("the command of language 'python' is empty");
	}

}
