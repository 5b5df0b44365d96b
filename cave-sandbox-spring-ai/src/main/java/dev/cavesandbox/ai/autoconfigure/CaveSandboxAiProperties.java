package dev.cavesandbox.ai.autoconfigure;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties of cave-sandbox's Spring AI integration
 * ({@code cave.sandbox.ai.*}).
 *
 * @param codeExecution The code-execution tool for a model (cave_sandbox_run_code).
 * @param mcp Sandbox settings of Spring AI's stdio MCP connections
 * (spring.ai.mcp.client.stdio.connections), by connection name; every stdio connection
 * runs in the sandbox, with these settings or without any network when it has none here.
 * A name that is no stdio connection fails startup.
 */
@ConfigurationProperties("cave.sandbox.ai")
public record CaveSandboxAiProperties(@DefaultValue CodeExecution codeExecution, @DefaultValue Map<String, Mcp> mcp) {

	/**
	 * The code-execution tool: a Spring AI tool that runs a model's snippet in a fresh
	 * sandbox, without any network, and returns its exit code and output.
	 *
	 * @param enabled Whether the tool is exposed as a ToolCallback bean.
	 * @param languages Command of each language the tool runs, by name; the snippet's
	 * file name is appended as the last argument (for example 'python3,-I'). Setting it
	 * replaces the default languages python (python3) and shell (sh).
	 * @param timeout Time limit of one snippet; its processes are killed when it is
	 * reached.
	 * @param maxOutput Size of stdout and of stderr returned to the model, each; the rest
	 * is discarded and the result says so.
	 */
	public record CodeExecution(@DefaultValue("false") boolean enabled,
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
			languages.put("shell", List.of("sh"));
			return Collections.unmodifiableMap(languages);
		}

	}

	/**
	 * The sandbox of one stdio MCP server.
	 *
	 * @param allowedHosts Hosts the server may reach through the egress proxy: entries
	 * 'host' (ports 80 and 443), '*.domain' or 'host:port'. Empty (the default): no
	 * network at all, whatever cave.sandbox.egress.allowed-hosts says.
	 * @param readablePaths Host paths (absolute, without symbolic links) the server sees
	 * read-only besides the filesystem view, for a server installed outside it.
	 */
	public record Mcp(@DefaultValue List<String> allowedHosts, @DefaultValue List<String> readablePaths) {

	}

}
