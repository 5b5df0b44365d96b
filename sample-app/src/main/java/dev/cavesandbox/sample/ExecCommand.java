package dev.cavesandbox.sample;

import java.io.PrintStream;
import java.util.List;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.CommandNotExecutableException;
import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.ResourceLimit;

/**
 * {@code java -jar sample-app.jar [--cave.sandbox.*=...] exec -- CMD [ARG...]}: runs CMD
 * in the sandbox with stdin, stdout and stderr passed through (streamed, not capped).
 * Exit codes, as timeout(1) and env(1) use them: CMD's own; 124 on timeout; 125 when the
 * sandbox itself cannot run (the error code is printed on stderr); 126 when CMD is not
 * executable; 127 when CMD is not found; 1 when a {@code cave.sandbox.*} value is invalid
 * (Boot's binding report on stderr, before anything runs). When a resource limit ended
 * CMD ({@code cave.sandbox.limits.*}), {@code cave-sandbox: limit exceeded: <name>} is
 * printed on stderr and the exit code stays CMD's.
 */
final class ExecCommand {

	static final int TIMED_OUT = 124;

	static final int SANDBOX_FAILED = 125;

	static final int NOT_EXECUTABLE = 126;

	static final int NOT_FOUND = 127;

	private final IsolatedExecutor executor;

	private final PrintStream err;

	ExecCommand(IsolatedExecutor executor, PrintStream err) {
		this.executor = executor;
		this.err = err;
	}

	/**
	 * Run the command.
	 * @param argv CMD and its arguments (what follows {@code exec --})
	 * @return the exit code for this JVM
	 */
	int run(List<String> argv) {
		if (argv.isEmpty()) {
			this.err.println("cave-sandbox: usage: exec -- CMD [ARG...]");
			return SANDBOX_FAILED;
		}
		try {
			ExecutionResult result = this.executor.execute(ExecutionRequest.builder(argv)
				.stdin(() -> System.in)
				.stdoutSink(System.out)
				.stderrSink(System.err)
				.maxOutputBytes(Long.MAX_VALUE)
				.build());
			if (!result.isolation().networkIsolated()) {
				this.err.println("cave-sandbox: WARNING: the command ran WITHOUT network isolation (fallback mode)");
			}
			if (result.timedOut()) {
				this.err.println("cave-sandbox: timed out after " + result.wallTime().toMillis()
						+ " ms; the process tree was killed (cave.sandbox.timeout)");
				return TIMED_OUT;
			}
			ResourceLimit limit = result.limitExceeded();
			if (limit != null) {
				this.err.println("cave-sandbox: limit exceeded: " + limit.propertyName());
			}
			return result.exitCode();
		}
		catch (CommandNotFoundException ex) {
			this.err.println("cave-sandbox: " + ex.getMessage());
			return NOT_FOUND;
		}
		catch (CommandNotExecutableException ex) {
			this.err.println("cave-sandbox: " + ex.getMessage());
			return NOT_EXECUTABLE;
		}
		catch (CaveSandboxException ex) {
			this.err.println("cave-sandbox: " + ex.getMessage());
			return SANDBOX_FAILED;
		}
	}

}
