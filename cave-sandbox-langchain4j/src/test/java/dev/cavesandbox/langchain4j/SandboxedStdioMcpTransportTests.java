package dev.cavesandbox.langchain4j;

import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.mcp.client.DefaultMcpClient;
import dev.langchain4j.mcp.client.McpClient;
import dev.langchain4j.mcp.client.transport.McpOperationHandler;
import dev.langchain4j.mcp.protocol.McpPingRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * LangChain4j's {@link DefaultMcpClient} speaking to a real MCP server
 * ({@code mcp/server.py}) that runs in this host's sandbox through
 * {@link SandboxedStdioMcpTransport}.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class SandboxedStdioMcpTransportTests {

	private final IsolatedExecutor executor = TestSandbox.executor();

	private static ExecutionRequest serverRequest(Map<String, String> environment) {
		Path script = TestSandbox.mcpServerScript();
		return McpServerRequests.request(List.of("python3", script.toString()), environment, List.of(),
				List.of(script.getParent()));
	}

	private SandboxedStdioMcpTransport shellServer(String name, String script) {
		return new SandboxedStdioMcpTransport(name, this.executor,
				McpServerRequests.request(List.of("sh", "-c", script), Map.of(), List.of(), List.of()));
	}

	private static DefaultMcpClient client(SandboxedStdioMcpTransport transport) {
		return DefaultMcpClient.builder()
			.key("test")
			.transport(transport)
			.initializationTimeout(Duration.ofSeconds(20))
			.toolExecutionTimeout(Duration.ofSeconds(20))
			.autoHealthCheck(false)
			.build();
	}

	private static String call(McpClient client, String tool, String arguments) {
		return client.executeTool(ToolExecutionRequest.builder().id("1").name(tool).arguments(arguments).build())
			.resultText();
	}

	private static McpOperationHandler handler(SandboxedStdioMcpTransport transport) {
		return new McpOperationHandler(new ConcurrentHashMap<>(), List::of, transport, null, () -> {
		});
	}

	@Test
	void theClientListsAndCallsTheToolsOfAServerInTheSandbox() throws Exception {
		SandboxedStdioMcpTransport transport = new SandboxedStdioMcpTransport("test", this.executor,
				serverRequest(Map.of("MCP_GREETING", "hello")));
		DefaultMcpClient client = client(transport);
		SandboxedProcess process = transport.process().orElseThrow();
		try {
			assertThat(client.listTools()).extracting(ToolSpecification::name)
				.containsExactly("add", "whoami", "connect");
			assertThat(call(client, "add", "{\"a\": 2, \"b\": 40}")).isEqualTo("42");
			assertThat(call(client, "whoami", "{}")).endsWith("greeting=hello");
			client.checkHealth();
			assertThat(process.isAlive()).isTrue();
			assertThat(process.isolation()).isEqualTo(this.executor.isolation());
			assertThat(process.isolation().networkIsolated()).isTrue();
		}
		finally {
			client.close();
		}
		assertThat(process.isAlive()).as("close returns once the process tree has ended").isFalse();
		assertThat(process.exitCode()).as("the server exits on its own at the end of its stdin").hasValue(0);
	}

	@Test
	void theServerCannotReachAListenerOnTheHostsLoopback() throws Exception {
		try (ServerSocketChannel listener = TestSandbox.loopbackListener();
				DefaultMcpClient client = client(
						new SandboxedStdioMcpTransport("test", this.executor, serverRequest(Map.of())))) {
			assertThat(call(client, "connect", "{\"port\": " + TestSandbox.port(listener) + "}"))
				.startsWith("refused: ");
			try (SocketChannel accepted = listener.accept()) {
				assertThat(accepted).as("the MCP server reached the host's listener").isNull();
			}
		}
	}

	@Test
	void inStrictModeWithoutIsolationTheServerNeverRuns() {
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.UNSHARE)
			.unsharePath(Path.of("/nonexistent/cave-lc4j/unshare"))
			.build();
		try (IsolatedExecutor unavailable = IsolatedExecutors.create(settings)) {
			SandboxedStdioMcpTransport transport = new SandboxedStdioMcpTransport("test", unavailable,
					serverRequest(Map.of()));
			assertThatException().isThrownBy(() -> client(transport))
				.isInstanceOf(NetworkIsolationUnavailableException.class);
			assertThat(transport.process()).isEmpty();
			assertThat(transport.startFailure()).containsInstanceOf(NetworkIsolationUnavailableException.class);
			assertThatIllegalStateException().isThrownBy(transport::checkHealth)
				.withMessageStartingWith("MCP server 'test' could not start: ");
		}
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void inFallbackModeTheUnisolatedServerIsWarned(CapturedOutput output) throws Exception {
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.NONE)
			.mode(SandboxMode.FALLBACK)
			.build();
		try (IsolatedExecutor unisolated = IsolatedExecutors.create(settings);
				DefaultMcpClient client = client(
						new SandboxedStdioMcpTransport("open", unisolated, serverRequest(Map.of())))) {
			assertThat(call(client, "add", "{\"a\": 2, \"b\": 40}")).isEqualTo("42");
			assertThat(output.getAll()).containsPattern(
					"WARN .*MCP server 'open' started WITHOUT network isolation: pid [0-9]+, none \\(NOT network isolated\\)");
		}
	}

	@Test
	void aServerWhoseScriptIsOutsideTheSandboxsViewFailsInitializeSayingWhatToConfigure() {
		Path script = TestSandbox.mcpServerScript();
		SandboxedStdioMcpTransport transport = new SandboxedStdioMcpTransport("unseen", this.executor,
				McpServerRequests.request(List.of("python3", script.toString()), Map.of(), List.of(), List.of()));
		try {
			assertThatException().isThrownBy(() -> client(transport))
				.satisfies((ex) -> assertThat(TestSandbox.messages(ex)).contains("MCP server 'unseen'", "exit code 2",
						"server.py", "cave.sandbox.langchain4j.mcp.servers.unseen.readable-paths"));
			assertThatIllegalStateException().isThrownBy(transport::checkHealth)
				.withMessageContaining("cave.sandbox.langchain4j.mcp.servers.unseen.readable-paths");
		}
		finally {
			transport.close();
		}
	}

	@Test
	void closeDestroysAServerThatIgnoresTheEndOfItsStdin() {
		SandboxedStdioMcpTransport transport = shellServer("sleeper", "exec sleep 600");
		transport.start(handler(transport));
		SandboxedProcess process = transport.process().orElseThrow();
		assertThat(process.isAlive()).isTrue();
		transport.close();
		assertThat(process.isAlive()).isFalse();
		assertThat(process.exitCode()).hasValue(128 + 15);
		assertThatIllegalStateException().isThrownBy(() -> transport.start(handler(transport)))
			.withMessage("The transport of MCP server 'sleeper' is closed");
	}

	@Test
	void startingAgainReplacesTheServerAsTheClientsReconnectionDoes() {
		SandboxedStdioMcpTransport transport = new SandboxedStdioMcpTransport("test", this.executor,
				serverRequest(Map.of()));
		try {
			transport.start(handler(transport));
			SandboxedProcess first = transport.process().orElseThrow();
			transport.start(handler(transport));
			SandboxedProcess second = transport.process().orElseThrow();
			assertThat(first.isAlive()).isFalse();
			assertThat(second.pid()).isNotEqualTo(first.pid());
			assertThat(second.isAlive()).isTrue();
		}
		finally {
			transport.close();
		}
	}

	@Test
	void startingAgainFailsTheCallsPendingOnTheServerItReplaces() {
		SandboxedStdioMcpTransport transport = shellServer("silent", "exec cat > /dev/null");
		try {
			McpOperationHandler handler = handler(transport);
			transport.start(handler);
			CompletableFuture<JsonNode> answer = transport.executeOperationWithResponse(new McpPingRequest(1L));
			transport.start(handler);
			assertThat(answer).failsWithin(Duration.ofSeconds(5))
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.withMessageContaining("MCP server 'silent' was closed to be started again");
		}
		finally {
			transport.close();
		}
	}

	@Test
	void aCallAfterCloseFailsSayingTheServerWasClosed() {
		SandboxedStdioMcpTransport transport = shellServer("silent", "exec cat > /dev/null");
		transport.start(handler(transport));
		transport.close();
		assertThat(transport.executeOperationWithResponse(new McpPingRequest(1L))).failsWithin(Duration.ZERO)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.withMessage("MCP server 'silent' was closed");
		assertThatIllegalStateException().isThrownBy(transport::checkHealth)
			.withMessage("MCP server 'silent' was closed");
	}

	@Test
	void aLinePastTheCapOnStdoutFailsTheCallsAndStopsTheServer() {
		SandboxedStdioMcpTransport transport = shellServer("flood",
				"read line; head -c 9000000 /dev/zero | tr '\\0' a; echo; exec sleep 300");
		try {
			transport.start(handler(transport));
			CompletableFuture<JsonNode> answer = transport.executeOperationWithResponse(new McpPingRequest(1L));
			assertThat(answer).failsWithin(Duration.ofSeconds(60))
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.withMessageContaining("MCP server 'flood' wrote a line of more than 8388608 bytes (8 MiB)");
			await().atMost(Duration.ofSeconds(30)).until(() -> !transport.process().orElseThrow().isAlive());
			assertThatIllegalStateException().isThrownBy(transport::checkHealth)
				.withMessageContaining("more than 8388608 bytes");
		}
		finally {
			transport.close();
		}
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aLongLineOnStderrIsLoggedCut(CapturedOutput output) {
		SandboxedStdioMcpTransport transport = shellServer("chatty",
				"head -c 100000 /dev/zero | tr '\\0' b >&2; echo >&2; echo done >&2; exec sleep 300");
		try {
			transport.start(handler(transport));
			await().atMost(Duration.ofSeconds(30)).until(() -> output.toString().contains("'chatty' stderr: done"));
			assertThat(output).contains("MCP server 'chatty' stderr: " + "b".repeat(300) + "...")
				.doesNotContain("b".repeat(301));
		}
		finally {
			transport.close();
		}
	}

	@Test
	void theClientsHealthCheckStartsAServerThatDiedAgainInTheSandbox() {
		SandboxedStdioMcpTransport transport = new SandboxedStdioMcpTransport("test", this.executor,
				serverRequest(Map.of()));
		try (DefaultMcpClient client = DefaultMcpClient.builder()
			.transport(transport)
			.initializationTimeout(Duration.ofSeconds(20))
			.toolExecutionTimeout(Duration.ofSeconds(20))
			.autoHealthCheckInterval(Duration.ofMillis(200))
			.reconnectInterval(Duration.ofMillis(200))
			.build()) {
			SandboxedProcess first = transport.process().orElseThrow();
			first.destroy();
			assertThatIllegalStateException().isThrownBy(transport::checkHealth)
				.withMessageContaining("MCP server 'test'");
			await().atMost(Duration.ofSeconds(60))
				.until(() -> transport.process().filter(SandboxedProcess::isAlive).isPresent());
			SandboxedProcess second = transport.process().orElseThrow();
			assertThat(second.pid()).isNotEqualTo(first.pid());
			assertThat(second.isolation().networkIsolated()).isTrue();
			assertThat(call(client, "add", "{\"a\": 1, \"b\": 2}")).isEqualTo("3");
		}
	}

}
