package dev.cavesandbox.langchain4j;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ExecutionRequest;

/**
 * The request that starts a stdio MCP server through {@link SandboxedStdioMcpTransport},
 * and the messages that say why such a server takes no more requests.
 */
public final class McpServerRequests {

	private McpServerRequests() {
	}

	/**
	 * Return the request that starts a stdio MCP server in the sandbox, as
	 * {@code StdioMcpTransport.builder().command(...).environment(...)} would start it
	 * unsandboxed, but with the sandbox's own environment baseline (its {@code HOME},
	 * {@code PATH}) instead of the JVM's.
	 * @param command the server's command and arguments (for example
	 * {@code [python3, /opt/mcp/server.py]})
	 * @param environment variables set for the server
	 * @param allowedHosts the hosts the server may reach through the egress proxy:
	 * {@code host}, {@code *.domain} or {@code host:port}; empty for no network at all,
	 * whatever the executor's allow-list is
	 * @param readablePaths host paths the server sees read-only besides the executor's
	 * filesystem view (a server installed outside it)
	 * @return the request, without a timeout: the server runs until it exits or the
	 * transport is closed
	 */
	public static ExecutionRequest request(List<String> command, Map<String, String> environment,
			List<String> allowedHosts, List<Path> readablePaths) {
		if (command.isEmpty()) {
			throw new IllegalArgumentException("command must not be empty");
		}
		ExecutionRequest.Builder builder = ExecutionRequest.builder(command)
			.allowedHosts(allowedHosts.toArray(String[]::new))
			.readablePaths(readablePaths.toArray(Path[]::new));
		environment.forEach(builder::environment);
		return builder.build();
	}

	/**
	 * Say why a server that ended its stdout takes no more requests, and the likely fix.
	 * @param name the name of the server
	 * @param exitCode its exit code ({@code exit code N}) or {@code still running}
	 * @param stderrTail the last lines of its stderr
	 * @return the reason
	 */
	static String endedReason(String name, String exitCode, List<String> stderrTail) {
		return "MCP server '" + name + "' ended its stdout (" + exitCode + ") and takes no more requests"
				+ (stderrTail.isEmpty() ? "; it wrote nothing to stderr"
						: "; the last lines of its stderr: " + String.join(" | ", stderrTail))
				+ ". If it could not start: a program or script outside the sandbox's view needs "
				+ "cave.sandbox.langchain4j.mcp.servers." + name + ".readable-paths (a file or a directory "
				+ "not under /tmp or /run); the command must be on the sandbox's PATH";
	}

	/**
	 * Say why a server that wrote a line past the cap on its stdout takes no more
	 * requests, and the likely fix.
	 * @param name the name of the server
	 * @param cap the most bytes of one line
	 * @return the reason
	 */
	static String overflowReason(String name, int cap) {
		return "MCP server '" + name + "' wrote a line of more than " + cap + " bytes (" + (cap >> 20)
				+ " MiB) to its stdout, the most one JSON-RPC message may take, and was stopped; it takes no more "
				+ "requests. A server writes only JSON-RPC messages to stdout, one a line, and its log to stderr";
	}

}
