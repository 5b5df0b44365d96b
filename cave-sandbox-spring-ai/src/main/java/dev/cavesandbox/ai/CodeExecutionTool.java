package dev.cavesandbox.ai;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.cavesandbox.CommandNotExecutableException;
import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ConcurrencyLimitExceededException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolatedExecutor;

import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.function.FunctionToolCallback;

/**
 * A code-execution tool for a model: runs a snippet ({@link CodeSnippet}) in a fresh
 * sandbox through {@link IsolatedExecutor#execute(ExecutionRequest)} and returns what it
 * printed ({@link CodeExecutionResult}).
 * <p>
 * The snippet is written as {@code snippet.<language>} into the execution's private
 * working directory, with its input files, and runs as the language's command followed by
 * that file name (for example {@code python3 snippet.python}). It gets no network at all:
 * the request's allow-list is empty whatever the executor's allowed hosts are. Its
 * working directory is removed afterwards; the executor's limits and filesystem view
 * apply. A snippet that cannot run (an unknown language, a language whose interpreter is
 * missing or not executable, an invalid file name, no free slot) gives a result with an
 * {@link CodeExecutionResult#error() error} for the model, not an exception; an executor
 * that cannot isolate in strict mode throws, and nothing runs.
 */
public final class CodeExecutionTool {

	/** The name of the tool, as the model sees it. */
	public static final String TOOL_NAME = "cave_sandbox_run_code";

	private static final String DESCRIPTION = "Run a code snippet in a fresh sandbox without any network access and "
			+ "return its exit code, stdout and stderr. The snippet runs as a file in an empty working directory "
			+ "(also its current directory), where the given input files are written first; it can read and write "
			+ "files there. Nothing persists between calls. Languages: ";

	private final IsolatedExecutor executor;

	private final Map<String, List<String>> languages;

	private final Duration timeout;

	private final long maxOutputBytes;

	/**
	 * Create a tool.
	 * @param executor the executor that runs the snippets
	 * @param languages each language's command prefix (for example {@code python} to
	 * {@code [python3]}); the snippet's file name is appended as the last argument
	 * @param timeout the time limit of one snippet
	 * @param maxOutputBytes the size of stdout and of stderr returned to the model, each
	 */
	public CodeExecutionTool(IsolatedExecutor executor, Map<String, List<String>> languages, Duration timeout,
			long maxOutputBytes) {
		this.executor = Objects.requireNonNull(executor, "executor must not be null");
		if (languages.isEmpty()) {
			throw new IllegalArgumentException("languages must name at least one language");
		}
		languages.forEach((name, command) -> {
			if (command.isEmpty()) {
				throw new IllegalArgumentException("the command of language '" + name + "' is empty");
			}
		});
		this.languages = new LinkedHashMap<>(languages);
		this.languages.replaceAll((name, command) -> List.copyOf(command));
		this.timeout = Objects.requireNonNull(timeout, "timeout must not be null");
		if (maxOutputBytes <= 0) {
			throw new IllegalArgumentException("maxOutputBytes must be positive, but was " + maxOutputBytes);
		}
		this.maxOutputBytes = maxOutputBytes;
	}

	/**
	 * Run a snippet.
	 * @param snippet the snippet and its input files
	 * @return what it printed and how it ended, or why it did not run
	 * @throws dev.cavesandbox.NetworkIsolationUnavailableException isolation is
	 * unavailable and the mode is strict
	 */
	public CodeExecutionResult run(CodeSnippet snippet) {
		List<String> command = (snippet.language() != null) ? this.languages.get(snippet.language()) : null;
		if (command == null) {
			return CodeExecutionResult.notRun("Unknown language '" + snippet.language()
					+ "'; the configured languages are " + this.languages.keySet());
		}
		if (snippet.code() == null) {
			return CodeExecutionResult.notRun("No code to run");
		}
		String fileName = "snippet." + snippet.language();
		Map<String, String> files = (snippet.files() != null) ? snippet.files() : Map.of();
		List<String> argv = new ArrayList<>(command);
		argv.add(fileName);
		ExecutionResult result;
		try {
			ExecutionRequest.Builder request = ExecutionRequest.builder(argv)
				.timeout(this.timeout)
				.maxOutputBytes(this.maxOutputBytes)
				.allowedHosts()
				.inputFile(fileName, snippet.code().getBytes(StandardCharsets.UTF_8));
			files.forEach((name, content) -> request.inputFile(name, content.getBytes(StandardCharsets.UTF_8)));
			result = this.executor.execute(request.build());
		}
		catch (InvalidExecutionRequestException ex) {
			return CodeExecutionResult.notRun("Invalid request: " + ex.getMessage());
		}
		catch (CommandNotFoundException | CommandNotExecutableException ex) {
			return CodeExecutionResult
				.notRun("The interpreter of language '" + snippet.language() + "' cannot run: " + ex.getMessage());
		}
		catch (ConcurrencyLimitExceededException ex) {
			return CodeExecutionResult.notRun("The sandbox is busy, try again later: " + ex.getMessage());
		}
		return new CodeExecutionResult(result.exitCode(), text(result.stdoutText(), result.stdoutTruncated()),
				text(result.stderrText(), result.stderrTruncated()), result.stdoutTruncated(), result.stderrTruncated(),
				result.timedOut(), result.isolation().toString(), null);
	}

	private String text(String text, boolean truncated) {
		return truncated ? text + "\n" + CodeExecutionResult.TRUNCATED_MARKER + this.maxOutputBytes + " bytes]" : text;
	}

	/**
	 * Return this tool as a Spring AI tool callback named {@value #TOOL_NAME}, whose
	 * input schema is generated from {@link CodeSnippet} and whose result is the JSON of
	 * {@link CodeExecutionResult}.
	 * @return the tool callback
	 */
	public ToolCallback toolCallback() {
		return FunctionToolCallback.builder(TOOL_NAME, this::run)
			.description(DESCRIPTION + String.join(", ", this.languages.keySet()) + ".")
			.inputType(CodeSnippet.class)
			.build();
	}

}
