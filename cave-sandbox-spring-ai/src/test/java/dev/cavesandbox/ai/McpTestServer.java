package dev.cavesandbox.ai;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.Map;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * The small MCP stdio server of the tests ({@code mcp/test_server.py} in the test
 * resources; tools {@code echo}, {@code getenv} and {@code fetch_loopback}), and a call
 * of its tools. The sandbox hides {@code /tmp} and shows only the system's directories,
 * so the server's directory is given to it as a readable path.
 */
public final class McpTestServer {

	private McpTestServer() {
	}

	/**
	 * Return the server script.
	 * @return its real path
	 */
	public static Path script() {
		try {
			URL resource = McpTestServer.class.getResource("/mcp/test_server.py");
			return Path.of(resource.toURI()).toRealPath();
		}
		catch (IOException | URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Return the directory of the server script, for the sandbox's readable paths.
	 * @return the directory
	 */
	public static Path directory() {
		return script().getParent();
	}

	/**
	 * Return the properties of a Spring AI stdio connection named {@code test} to this
	 * server, in the sandbox with the server's directory as a readable path.
	 * @return the properties
	 */
	public static String[] connectionProperties() {
		return new String[] { "spring.ai.mcp.client.request-timeout=20s",
				"spring.ai.mcp.client.stdio.connections.test.command=python3",
				"spring.ai.mcp.client.stdio.connections.test.args[0]=" + script(),
				"cave.sandbox.ai.mcp.test.readable-paths=" + directory() };
	}

	/**
	 * Call a tool and return the text of its result.
	 * @param client the connected client
	 * @param tool the tool's name
	 * @param arguments its arguments
	 * @return the text of the first content of its result
	 */
	public static String call(McpSyncClient client, String tool, Map<String, Object> arguments) {
		McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, arguments));
		return ((McpSchema.TextContent) result.content().get(0)).text();
	}

	/**
	 * Return the exception and its causes, one a line, for assertions on what a failure
	 * says.
	 * @param failure the exception
	 * @return each exception of the chain as its {@code toString()}
	 */
	public static String messages(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			messages.append(cause).append('\n');
		}
		return messages.toString();
	}

}
