package dev.cavesandbox.compat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.ai.CodeExecutionTool;
import dev.cavesandbox.ai.SandboxedStdioClientTransport;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

import org.springframework.ai.mcp.client.common.autoconfigure.NamedClientMcpTransport;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an application on any supported Spring Boot line gets from
 * {@code cave-sandbox-spring-ai} with the line's Spring AI (1.1 on Boot 3.5, 2.0 on Boot
 * 4), in types both lines share: the code-execution tool called through Spring AI's
 * {@link ToolCallback} API, and an MCP stdio server of Spring AI's MCP client
 * ({@code spring.ai.mcp.client.stdio.connections.test}, the small server
 * {@code mcp/test_server.py} of the Spring AI integration's tests, a test resource of
 * each compat app) started in the sandbox. The
 * sandbox hides {@code /tmp}: the script's directory is given to the server as a readable
 * path. A subclass per line adds the line's health types.
 */
@TestPropertySource(properties = { "cave.sandbox.ai.code-execution.enabled=true",
		"spring.ai.mcp.client.request-timeout=20s", "spring.ai.mcp.client.stdio.connections.test.command=python3" })
abstract class SpringAiApplicationChecks {

	@Autowired
	private IsolatedExecutor executor;

	@Autowired
	@Qualifier("caveSandboxRunCodeToolCallback")
	private ToolCallback runCode;

	@Autowired
	@Qualifier("mcpSyncClients")
	private List<McpSyncClient> mcpSyncClients;

	@Autowired
	@Qualifier("stdioTransports")
	private List<NamedClientMcpTransport> stdioTransports;

	/**
	 * Return the Spring AI line the subclass's application runs on.
	 * @return the version prefix, for example {@code "1.1."}
	 */
	abstract String springAiLine();

	/**
	 * Return the MCP Java SDK line that the subclass's Spring AI brings.
	 * @return the version prefix, for example {@code "0.17."}
	 */
	abstract String mcpSdkLine();

	@DynamicPropertySource
	static void mcpServer(DynamicPropertyRegistry registry) {
		Path script = script();
		registry.add("spring.ai.mcp.client.stdio.connections.test.args[0]", script::toString);
		registry.add("cave.sandbox.ai.mcp.test.readable-paths", () -> script.getParent().toString());
	}

	private static Path script() {
		try {
			URL resource = SpringAiApplicationChecks.class.getResource("/mcp/test_server.py");
			return Path.of(resource.toURI()).toRealPath();
		}
		catch (IOException | URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void runsOnItsSpringAiLine() {
		assertThat(ToolCallback.class.getPackage().getImplementationVersion()).startsWith(springAiLine());
		assertThat(McpSchema.class.getPackage().getImplementationVersion()).startsWith(mcpSdkLine());
	}

	/**
	 * The tool as a model calls it: JSON in, JSON out. The snippet prints a value and
	 * tries to reach a listener of this test on the host's loopback, which it cannot.
	 */
	@Test
	void codeToolCalledThroughToolCallbackReturnsWhatPythonPrintedIsolated() throws Exception {
		assertThat(this.runCode.getToolDefinition().name()).isEqualTo(CodeExecutionTool.TOOL_NAME);
		try (ServerSocketChannel listener = loopbackListener()) {
			int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
			String code = "import socket\\nprint(6 * 7)\\ntry:\\n    socket.create_connection(('127.0.0.1', " + port
					+ "), timeout=5)\\n    print('connected')\\nexcept OSError:\\n    print('no network')\\n";
			String json = this.runCode.call("{\"language\":\"python\",\"code\":\"" + code + "\"}");
			assertThat(json).contains("\"exitCode\":0")
				.contains("\"stdout\":\"42\\nno network\\n\"")
				.contains("\"isolation\":\"" + this.executor.isolation() + "\"")
				.contains("\"error\":null");
			assertThat(this.executor.isolation().networkIsolated()).isTrue();
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("the snippet reached the host's listener").isNull();
			}
		}
	}

	/**
	 * Spring AI's MCP client speaks with the server through the sandboxed transport that
	 * replaced its own: handshake, tools listed and called, and the server's process is
	 * network-isolated (its loopback is not the host's).
	 */
	@Test
	void mcpStdioServerRunsInTheSandboxAndItsToolsAreListedAndCalled() throws Exception {
		assertThat(this.mcpSyncClients).hasSize(1);
		McpSyncClient client = this.mcpSyncClients.get(0);
		assertThat(client.isInitialized()).isTrue();
		assertThat(client.getServerInfo().name()).isEqualTo("cave-sandbox-test-server");
		assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
			.containsExactly("echo", "getenv", "fetch_loopback");
		assertThat(call(client, "echo", Map.of("text", "through Spring AI"))).isEqualTo("through Spring AI");

		assertThat(this.stdioTransports).singleElement().satisfies((named) -> {
			assertThat(named.name()).isEqualTo("test");
			assertThat(named.transport()).isInstanceOf(SandboxedStdioClientTransport.class);
		});
		SandboxedProcess process = ((SandboxedStdioClientTransport) this.stdioTransports.get(0).transport()).process()
			.orElseThrow();
		assertThat(process.isAlive()).isTrue();
		assertThat(process.isolation()).isEqualTo(this.executor.isolation());
		assertThat(process.isolation().networkIsolated()).isTrue();

		try (ServerSocketChannel listener = loopbackListener()) {
			int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
			assertThat(call(client, "fetch_loopback", Map.of("port", port))).startsWith("failed: ");
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("the MCP server reached the host's listener").isNull();
			}
		}
	}

	private static ServerSocketChannel loopbackListener() throws IOException {
		ServerSocketChannel listener = ServerSocketChannel.open();
		listener.bind(new InetSocketAddress("127.0.0.1", 0));
		listener.configureBlocking(false);
		return listener;
	}

	private static String call(McpSyncClient client, String tool, Map<String, Object> arguments) {
		McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, arguments));
		return ((McpSchema.TextContent) result.content().get(0)).text();
	}

}
