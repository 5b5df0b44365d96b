package dev.cavesandbox.langchain4j;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import org.jspecify.annotations.Nullable;

/**
 * A LangChain4j tool for a model: one {@link Tool @Tool} method, {@value #TOOL_NAME},
 * that runs a code snippet of one of its languages in a fresh sandbox without network,
 * through that language's {@link SandboxedCodeExecutionEngine}, and returns what the
 * engine returns: stdout, or the exit code, stdout and stderr of code that failed, or an
 * {@code Error: } line. Give an instance to {@code AiServices.builder(...).tools(tool)}.
 * <p>
 * The languages are those of the engines it is created with, for example {@code python}
 * and {@code shell}; a snippet in another language is answered with the list of them, so
 * that the model can retry.
 */
public final class SandboxedCodeExecutionTool {

	/** The name of the tool, as the model sees it. */
	public static final String TOOL_NAME = "cave_sandbox_run_code";

	private final Map<String, SandboxedCodeExecutionEngine> engines = new LinkedHashMap<>();

	/**
	 * Create a tool with the given engines.
	 * @param engines one engine per language, in the order the tool lists them
	 * @throws IllegalArgumentException no engine, or two engines of one language
	 */
	public SandboxedCodeExecutionTool(List<SandboxedCodeExecutionEngine> engines) {
		if (engines.isEmpty()) {
			throw new IllegalArgumentException("engines must hold at least one engine");
		}
		for (SandboxedCodeExecutionEngine engine : engines) {
			if (this.engines.putIfAbsent(engine.language(), engine) != null) {
				throw new IllegalArgumentException("two engines run language '" + engine.language() + "'");
			}
		}
	}

	/**
	 * Return the languages this tool runs.
	 * @return the languages' names, in order
	 */
	public List<String> languages() {
		return List.copyOf(this.engines.keySet());
	}

	/**
	 * Run a snippet in a fresh sandbox without network.
	 * @param language the snippet's language, one of {@link #languages()}
	 * @param code the snippet
	 * @return what its engine returned, or the list of languages for an unknown one
	 * @throws dev.cavesandbox.NetworkIsolationUnavailableException isolation is
	 * unavailable and the mode is strict
	 */
	@Tool(name = TOOL_NAME,
			value = { "Runs a code snippet in a fresh sandbox without any network access and returns "
					+ "what it printed to stdout; for code that fails, its exit code, stdout and stderr. "
					+ "The snippet runs as a file in an empty working directory where it can write files; "
					+ "nothing persists between calls. Print the results you need." })
	public String runCode(@P("The language of the snippet, for example python or shell") @Nullable String language,
			@P("The code to run") @Nullable String code) {
		SandboxedCodeExecutionEngine engine = (language != null) ? this.engines.get(language) : null;
		if (engine == null) {
			return "Error: unknown language '" + language + "'; the languages are "
					+ String.join(", ", this.engines.keySet());
		}
		return engine.execute(code);
	}

}
