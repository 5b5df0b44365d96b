package dev.cavesandbox.ai;

import java.time.Duration;
import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;

/**
 * Run in a child JVM by {@link SandboxedStdioClientTransportTests} with a marker: starts
 * the tests' MCP server in the sandbox with the marker as its last argument, initializes
 * a client, prints {@code READY} and then waits to be killed.
 */
public final class McpServerHolderMain {

	private McpServerHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		IsolatedExecutor executor = HostSandbox.isolatedExecutor();
		ServerParameters parameters = ServerParameters.builder("python3")
			.args(McpTestServer.script().toString(), args[0])
			.build();
		SandboxedStdioClientTransport transport = new SandboxedStdioClientTransport("holder", executor,
				SandboxedStdioClientTransport.request(parameters, List.of(), List.of(McpTestServer.directory())),
				SandboxedStdioClientTransport.defaultJsonMapper());
		McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(20)).build();
		client.initialize();
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

}
