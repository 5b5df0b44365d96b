package dev.cavesandbox.compat.langchain4j;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionEngine;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionTool;
import dev.cavesandbox.langchain4j.autoconfigure.SandboxedMcpClients;
import dev.langchain4j.code.CodeExecutionEngine;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code cave-sandbox-langchain4j} in a LangChain4j 1.11 application with LangChain4j's
 * Spring Boot starter, on each supported Spring Boot line (a subclass per line, in
 * {@code compat/langchain4j} on 4.1 and {@code compat/langchain4j-boot3} on 3.5): the
 * {@link Assistant} that the starter builds calls the sandboxed code tool and the tools of
 * an MCP stdio server ({@code mcp/server.py}, a test resource) started in the sandbox,
 * through LangChain4j's own tool loop; the {@link CodeExecutionEngine} bean runs code
 * sandboxed. The sandbox hides {@code /tmp}: the script's directory is given to the server
 * as a readable path.
 */
@TestPropertySource(properties = { "cave.sandbox.langchain4j.code-execution.enabled=true",
		"cave.sandbox.langchain4j.mcp.initialization-timeout=20s",
		"cave.sandbox.langchain4j.mcp.tool-execution-timeout=20s" })
abstract class LangChain4jApplicationChecks {

	@Autowired
	private Assistant assistant;

	@Autowired
	private CodeExecutionEngine engine;

	@Autowired
	private IsolatedExecutor executor;

	@Autowired
	private SandboxedMcpClients mcpClients;

	@DynamicPropertySource
	static void mcpServer(DynamicPropertyRegistry registry) throws IOException, URISyntaxException {
		URL resource = LangChain4jApplicationChecks.class.getResource("/mcp/server.py");
		Path script = Path.of(resource.toURI()).toRealPath();
		registry.add("cave.sandbox.langchain4j.mcp.servers.calc.command", () -> "python3," + script);
		registry.add("cave.sandbox.langchain4j.mcp.servers.calc.readable-paths", () -> script.getParent().toString());
	}

	/**
	 * Return the Spring Boot line the subclass's application runs on.
	 * @return the version prefix, for example {@code "3.5."}
	 */
	abstract String springBootLine();

	@Test
	void runsOnItsSpringBootLine() {
		assertThat(SpringBootVersion.getVersion()).startsWith(springBootLine());
	}

	@Test
	void theCodeExecutionEngineBeanRunsPythonIsolated() {
		assertThat(this.engine).isInstanceOf(SandboxedCodeExecutionEngine.class);
		assertThat(this.engine.execute("print(sum(range(1, 101)))")).isEqualTo("5050");
		assertThat(this.executor.isolation().networkIsolated()).isTrue();
	}

	/**
	 * The model asks for the code tool; the code prints a value and tries to reach a
	 * listener of this test on the host's loopback, which it cannot.
	 */
	@Test
	void theAssistantRunsCodeThroughTheSandboxedToolWithoutNetwork() throws Exception {
		try (ServerSocketChannel listener = loopbackListener()) {
			String code = "import socket\nprint(6 * 7)\ntry:\n    socket.create_connection(('127.0.0.1', "
					+ port(listener)
					+ "), timeout=5)\n    print('connected')\nexcept OSError:\n    print('no network')\n";
			String answer = this.assistant.chat(ScriptedChatModel.ask(SandboxedCodeExecutionTool.TOOL_NAME,
					Map.of("language", "python", "code", code)));
			assertThat(answer).isEqualTo("42\nno network");
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("the code reached the host's listener").isNull();
			}
		}
	}

	/**
	 * The model asks for the MCP server's tools, which the MCP tool provider offers; the
	 * server runs network-isolated.
	 */
	@Test
	void theAssistantCallsTheToolsOfTheMcpServerRunningInTheSandbox() throws Exception {
		assertThat(this.assistant.chat(ScriptedChatModel.ask("add", Map.of("a", 2, "b", 40)))).isEqualTo("42");
		SandboxedProcess process = this.mcpClients.transports().get("calc").process().orElseThrow();
		assertThat(process.isAlive()).isTrue();
		assertThat(process.isolation()).isEqualTo(this.executor.isolation());
		assertThat(process.isolation().networkIsolated()).isTrue();
		try (ServerSocketChannel listener = loopbackListener()) {
			assertThat(this.assistant.chat(ScriptedChatModel.ask("connect", Map.of("port", port(listener)))))
				.startsWith("refused: ");
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

	private static int port(ServerSocketChannel listener) throws IOException {
		return ((InetSocketAddress) listener.getLocalAddress()).getPort();
	}

}
