package dev.cavesandbox.langchain4j.autoconfigure;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties of cave-sandbox's LangChain4j integration
 * ({@code cave.sandbox.langchain4j.*}).
 *
 * @param codeExecution The code-execution engine and tool for a model.
 * @param mcp Stdio MCP servers that LangChain4j's MCP client starts in the sandbox.
 */
@ConfigurationProperties("cave.sandbox.langchain4j")
public record CaveSandboxLangChain4jProperties(@DefaultValue CodeExecution codeExecution, @DefaultValue Mcp mcp) {

	/**
	 * The code-execution engine (a LangChain4j CodeExecutionEngine) and tool
	 * (cave_sandbox_run_code): a model's code runs in a fresh sandbox, without any
	 * network, and its stdout is returned.
	 *
	 * @param enabled Whether the engine and the tool are beans.
	 * @param language Language of the CodeExecutionEngine bean, one of the languages.
	 * @param languages Command of each language, by name; the code's file name
	 * (snippet.NAME) is appended as the last argument (for example 'python3,-I'). The
	 * tool offers all of them. Setting it replaces the default languages python
	 * (python3), javascript (node) and shell (sh).
	 * @param timeout Time limit of one execution; its processes are killed when it is
	 * reached.
	 * @param maxOutput Size of stdout and of stderr returned to the model, each; the rest
	 * is discarded and the result says so.
	 */
	public record CodeExecution(@DefaultValue("false") boolean enabled, @DefaultValue("python") String language,
			@DefaultValue Map<String, List<String>> languages, @DefaultValue("10s") Duration timeout,
			@DefaultValue("8KB") DataSize maxOutput) {

		/** The languages when none is configured. */
		static final Map<String, List<String>> DEFAULT_LANGUAGES = defaultLanguages();

		public CodeExecution {
			if (languages.isEmpty()) {
				languages = DEFAULT_LANGUAGES;
			}
		}

		private static Map<String, List<String>> defaultLanguages() {
			Map<String, List<String>> languages = new LinkedHashMap<>();
			languages.put("python", List.of("python3"));
			languages.put("javascript", List.of("node"));
			languages.put("shell", List.of("sh"));
			return Collections.unmodifiableMap(languages);
		}

	}

	/**
	 * LangChain4j MCP clients of stdio servers started in the sandbox, and the
	 * McpToolProvider over them.
	 *
	 * @param servers Stdio MCP servers, by name; each is started in the sandbox at
	 * startup, and a server that cannot start fails startup.
	 * @param initializationTimeout Time limit of a server's initialize handshake.
	 * @param toolExecutionTimeout Time limit of one tool call; the model is told of a
	 * timeout.
	 */
	public record Mcp(@DefaultValue Map<String, Server> servers, @DefaultValue("30s") Duration initializationTimeout,
			@DefaultValue("60s") Duration toolExecutionTimeout) {

	}

	/**
	 * One stdio MCP server in the sandbox.
	 *
	 * @param command The server's command and arguments (for example
	 * 'python3,/opt/mcp/server.py'); the command must be on the sandbox's PATH.
	 * @param environment Variables set for the server, besides the sandbox's own HOME and
	 * PATH.
	 * @param allowedHosts Hosts the server may reach through the egress proxy: entries
	 * 'host' (ports 80 and 443), '*.domain' or 'host:port'. Empty (the default): no
	 * network at all, whatever cave.sandbox.egress.allowed-hosts says.
	 * @param readablePaths Host paths (absolute, without symbolic links) the server sees
	 * read-only besides the filesystem view, for a server installed outside it.
	 */
	public record Server(@DefaultValue List<String> command, @DefaultValue Map<String, String> environment,
			@DefaultValue List<String> allowedHosts, @DefaultValue List<String> readablePaths) {

	}

}
