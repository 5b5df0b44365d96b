package dev.cavesandbox.langchain4j;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.cavesandbox.CommandNotExecutableException;
import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ConcurrencyLimitExceededException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolatedExecutor;
import dev.langchain4j.code.CodeExecutionEngine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A LangChain4j {@link CodeExecutionEngine} that runs code of one language in a fresh
 * sandbox, through {@link IsolatedExecutor#execute(ExecutionRequest)}, and returns what
 * it printed to stdout.
 * <p>
 * The code is written as {@code snippet.<language>} into the execution's private working
 * directory and runs as the language's command followed by that file name (for example
 * {@code python3 snippet.python}, {@code node snippet.javascript}, {@code sh
 * snippet.shell}). It gets no network at all: the request's allow-list is empty whatever
 * the executor's allowed hosts are. The working directory is removed afterwards; the
 * executor's limits and filesystem view apply.
 * <p>
 * {@link #execute(String)} returns text for a model, as LangChain4j's own engines do,
 * never an exception for what the code did:
 * <ul>
 * <li>exit code 0: stdout, its trailing whitespace removed, or {@value #NO_OUTPUT} when
 * it printed nothing (then with its stderr, if any);</li>
 * <li>another exit code: {@code Exit code N.} followed by stdout and stderr;</li>
 * <li>the time limit reached: {@code Timed out after T; its processes were killed.}
 * followed by what it printed until then;</li>
 * <li>code that cannot run (none given, an interpreter that is missing or not executable,
 * no free slot in the executor): a line starting with {@code Error: }.</li>
 * </ul>
 * Each stream is cut to the output size; the cut says so. An executor that cannot isolate
 * in strict mode throws its {@link dev.cavesandbox.NetworkIsolationUnavailableException},
 * and nothing runs; in fallback mode ({@code cave.sandbox.mode=fallback}) the code runs
 * unisolated, and each such execution is logged as a WARN that says so (the text returned
 * is the code's, as above).
 */
public final class SandboxedCodeExecutionEngine implements CodeExecutionEngine {

	/** The result of code that ended with exit code 0 and printed nothing to stdout. */
	public static final String NO_OUTPUT = "No result: the code printed nothing to stdout";

	/** The default time limit of one execution: 10 seconds. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

	/** The default size of stdout and of stderr returned, each: 8 KiB. */
	public static final long DEFAULT_MAX_OUTPUT_BYTES = 8192;

	private static final Log logger = LogFactory.getLog(SandboxedCodeExecutionEngine.class);

	private final IsolatedExecutor executor;

	private final String language;

	private final List<String> command;

	private final Duration timeout;

	private final long maxOutputBytes;

	/**
	 * Create an engine with the default time limit and output size.
	 * @param executor the executor that runs the code
	 * @param language the language's name, the extension of the code's file (for example
	 * {@code python})
	 * @param command the interpreter's command (for example {@code [python3]}); the
	 * code's file name is appended as the last argument
	 */
	public SandboxedCodeExecutionEngine(IsolatedExecutor executor, String language, List<String> command) {
		this(executor, language, command, DEFAULT_TIMEOUT, DEFAULT_MAX_OUTPUT_BYTES);
	}

	/**
	 * Create an engine.
	 * @param executor the executor that runs the code
	 * @param language the language's name, the extension of the code's file (for example
	 * {@code python})
	 * @param command the interpreter's command (for example {@code [python3, -I]}); the
	 * code's file name is appended as the last argument
	 * @param timeout the time limit of one execution
	 * @param maxOutputBytes the size of stdout and of stderr returned, each, in bytes
	 */
	public SandboxedCodeExecutionEngine(IsolatedExecutor executor, String language, List<String> command,
			Duration timeout, long maxOutputBytes) {
		this.executor = Objects.requireNonNull(executor, "executor must not be null");
		if (language.isBlank() || !language.matches("[A-Za-z0-9_-]+")) {
			throw new IllegalArgumentException(
					"language must be a name of letters, digits, '-' and '_', but was '" + language + "'");
		}
		if (command.isEmpty()) {
			throw new IllegalArgumentException("the command of language '" + language + "' is empty");
		}
		if (maxOutputBytes <= 0) {
			throw new IllegalArgumentException("maxOutputBytes must be positive, but was " + maxOutputBytes);
		}
		this.language = language;
		this.command = List.copyOf(command);
		this.timeout = Objects.requireNonNull(timeout, "timeout must not be null");
		this.maxOutputBytes = maxOutputBytes;
	}

	/**
	 * Return the language this engine runs.
	 * @return the language's name
	 */
	public String language() {
		return this.language;
	}

	/**
	 * Return the interpreter's command, without the code's file name.
	 * @return the command
	 */
	public List<String> command() {
		return this.command;
	}

	/**
	 * Run the code in a fresh sandbox without network.
	 * @param code the code
	 * @return what it printed, or why it failed or did not run (see the class
	 * description)
	 * @throws dev.cavesandbox.NetworkIsolationUnavailableException isolation is
	 * unavailable and the mode is strict
	 */
	@Override
	public String execute(@Nullable String code) {
		if (code == null || code.isBlank()) {
			return "Error: no code to execute";
		}
		String fileName = "snippet." + this.language;
		List<String> argv = new ArrayList<>(this.command);
		argv.add(fileName);
		ExecutionResult result;
		try {
			result = this.executor.execute(ExecutionRequest.builder(argv)
				.timeout(this.timeout)
				.maxOutputBytes(this.maxOutputBytes)
				.allowedHosts()
				.inputFile(fileName, code.getBytes(StandardCharsets.UTF_8))
				.build());
		}
		catch (CommandNotFoundException | CommandNotExecutableException ex) {
			return "Error: the interpreter of " + this.language + " cannot run: " + ex.getMessage();
		}
		catch (ConcurrencyLimitExceededException ex) {
			return "Error: the sandbox is busy, try again later: " + ex.getMessage();
		}
		catch (InvalidExecutionRequestException ex) {
			return "Error: invalid request: " + ex.getMessage();
		}
		if (!result.isolation().networkIsolated()) {
			logger.warn("Code of " + this.language + " ran WITHOUT network isolation (" + result.isolation()
					+ "): cave.sandbox.mode is fallback and isolation is unavailable on this host");
		}
		return describe(result);
	}

	private String describe(ExecutionResult result) {
		String stdout = text(result.stdoutText(), result.stdoutTruncated());
		String stderr = text(result.stderrText(), result.stderrTruncated());
		if (result.timedOut()) {
			return "Timed out after " + this.timeout.toMillis() + " ms; its processes were killed."
					+ streams(stdout, stderr);
		}
		if (result.exitCode() != 0) {
			return "Exit code " + result.exitCode() + "." + streams(stdout, stderr);
		}
		if (stdout.isBlank()) {
			return NO_OUTPUT + (stderr.isBlank() ? "" : "\nstderr:\n" + stderr.stripTrailing());
		}
		return stdout.stripTrailing();
	}

	private static String streams(String stdout, String stderr) {
		return "\nstdout:\n" + stdout.stripTrailing() + "\nstderr:\n" + stderr.stripTrailing();
	}

	private String text(String text, boolean truncated) {
		return truncated ? text + "\n[output truncated at " + this.maxOutputBytes + " bytes]" : text;
	}

	@Override
	public String toString() {
		return "SandboxedCodeExecutionEngine[" + this.language + ": " + String.join(" ", this.command) + "]";
	}

}
