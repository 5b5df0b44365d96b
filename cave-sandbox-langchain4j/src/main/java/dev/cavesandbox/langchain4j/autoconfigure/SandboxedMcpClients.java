package dev.cavesandbox.langchain4j.autoconfigure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.langchain4j.McpServerRequests;
import dev.cavesandbox.langchain4j.SandboxedStdioMcpTransport;
import dev.langchain4j.mcp.client.DefaultMcpClient;
import dev.langchain4j.mcp.client.McpClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The LangChain4j MCP clients of the stdio servers of
 * {@code cave.sandbox.langchain4j.mcp.servers}, each speaking to its server through a
 * {@link SandboxedStdioMcpTransport}: every server is started in the sandbox and
 * initialized when this is created. {@link #close()} closes the clients, which stop their
 * servers.
 */
public final class SandboxedMcpClients implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SandboxedMcpClients.class);

	private final Map<String, DefaultMcpClient> clients = new LinkedHashMap<>();

	private final Map<String, SandboxedStdioMcpTransport> transports = new LinkedHashMap<>();

	/**
	 * Start and initialize every configured server.
	 * @param executor the executor that starts them
	 * @param mcp the servers and the clients' time limits
	 * @throws IllegalStateException a server has no command, or could not start or
	 * initialize (the servers started before it are stopped)
	 */
	SandboxedMcpClients(IsolatedExecutor executor, CaveSandboxLangChain4jProperties.Mcp mcp) {
		try {
			mcp.servers().forEach((name, server) -> start(executor, mcp, name, server));
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	private void start(IsolatedExecutor executor, CaveSandboxLangChain4jProperties.Mcp mcp, String name,
			CaveSandboxLangChain4jProperties.Server server) {
		String property = "cave.sandbox.langchain4j.mcp.servers." + name;
		if (server.command().isEmpty()) {
			throw new IllegalStateException(property + ".command is empty: set the server's command and arguments");
		}
		SandboxedStdioMcpTransport transport = new SandboxedStdioMcpTransport(name, executor,
				McpServerRequests.request(server.command(), server.environment(), server.allowedHosts(),
						server.readablePaths().stream().map(Path::of).toList()));
		this.transports.put(name, transport);
		try {
			this.clients.put(name,
					DefaultMcpClient.builder()
						.key(name)
						.transport(transport)
						.initializationTimeout(mcp.initializationTimeout())
						.toolExecutionTimeout(mcp.toolExecutionTimeout())
						.build());
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException(
					"The MCP server of " + property + " could not start in the sandbox: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Return the clients, in the order of the servers.
	 * @return the clients
	 */
	public List<McpClient> clients() {
		return List.copyOf(this.clients.values());
	}

	/**
	 * Return the transports, by server name.
	 * @return the transports
	 */
	public Map<String, SandboxedStdioMcpTransport> transports() {
		return Collections.unmodifiableMap(this.transports);
	}

	/** Close every client, which stops its server, and every transport. */
	@Override
	public void close() {
		for (McpClient client : new ArrayList<>(this.clients.values())) {
			try {
				client.close();
			}
			catch (Exception ex) {
				logger.warn("Closing the MCP client '" + client.key() + "' failed", ex);
			}
		}
		this.transports.values().forEach(SandboxedStdioMcpTransport::close);
	}

}
