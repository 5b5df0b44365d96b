package dev.cavesandbox.ai;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ChildJvms;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.LoopbackTcpListener;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The MCP SDK's client speaking to a real MCP server that runs in this host's sandbox
 * through {@link SandboxedStdioClientTransport}.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class SandboxedStdioClientTransportTests {

	private final IsolatedExecutor executor = HostSandbox.isolatedExecutor();

	private static SandboxedStdioClientTransport transport(IsolatedExecutor executor, ServerParameters parameters) {
		ExecutionRequest request = SandboxedStdioClientTransport.request(parameters, List.of(),
				List.of(McpTestServer.directory()));
		return new SandboxedStdioClientTransport("test", executor, request,
				SandboxedStdioClientTransport.defaultJsonMapper());
	}

	private static ServerParameters testServer() {
		return ServerParameters.builder("python3").args(McpTestServer.script().toString()).build();
	}

	private static McpSyncClient client(SandboxedStdioClientTransport transport) {
		return McpClient.sync(transport).requestTimeout(Duration.ofSeconds(20)).build();
	}

	@Test
	void theClientListsAndCallsTheToolsOfAServerInTheSandbox() throws Exception {
		SandboxedStdioClientTransport transport = transport(this.executor, testServer());
		McpSyncClient client = client(transport);
		try {
			McpSchema.InitializeResult initialized = client.initialize();
			assertThat(initialized.serverInfo().name()).isEqualTo("cave-sandbox-test-server");
			assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
				.containsExactly("echo", "getenv", "fetch_loopback");
			assertThat(McpTestServer.call(client, "echo", Map.of("text", "hello, sandbox")))
				.isEqualTo("hello, sandbox");
			SandboxedProcess process = transport.process().orElseThrow();
			assertThat(process.isAlive()).isTrue();
			assertThat(process.isolation()).isEqualTo(this.executor.isolation());
			assertThat(process.isolation().networkIsolated()).isTrue();
		}
		finally {
			assertThat(client.closeGracefully()).isTrue();
		}
		SandboxedProcess process = transport.process().orElseThrow();
		assertThat(process.waitFor(Duration.ofSeconds(10))).isTrue();
		assertThat(process.exitCode()).as("the server exits on its own at the end of its stdin").hasValue(0);
	}

	@Test
	void theServersAttemptToReachTheTestsLoopbackListenerGetsNothingThrough() throws Exception {
		try (LoopbackTcpListener listener = new LoopbackTcpListener()) {
			McpSyncClient client = client(transport(this.executor, testServer()));
			try {
				client.initialize();
				assertThat(McpTestServer.call(client, "fetch_loopback", Map.of("port", listener.port())))
					.startsWith("failed:");
			}
			finally {
				client.closeGracefully();
			}
			assertThat(listener.messagesUpToControl()).containsExactly(LoopbackTcpListener.control());
		}
	}

	@Test
	void theServerGetsTheConnectionsVariablesButNotThoseServerParametersCopiesFromTheJvm() {
		ServerParameters parameters = ServerParameters.builder("python3")
			.args(McpTestServer.script().toString())
			.addEnvVar("GREETING", "hello from the connection")
			.build();
		assertThat(parameters.getEnv()).containsKey("PATH");
		ExecutionRequest request = SandboxedStdioClientTransport.request(parameters, List.of(), List.of());
		assertThat(request.environment()).containsExactly(Map.entry("GREETING", "hello from the connection"));
		McpSyncClient client = client(transport(this.executor, parameters));
		try {
			client.initialize();
			assertThat(McpTestServer.call(client, "getenv", Map.of("name", "GREETING")))
				.isEqualTo("hello from the connection");
			assertThat(McpTestServer.call(client, "getenv", Map.of("name", "HOME")))
				.isNotEqualTo(System.getenv("HOME"));
		}
		finally {
			client.closeGracefully();
		}
	}

	@Test
	void theRequestCarriesTheAllowListAndReadablePaths() {
		ExecutionRequest request = SandboxedStdioClientTransport.request(testServer(), List.of("example.org"),
				List.of(Path.of("/opt/servers")));
		assertThat(request.argv()).containsExactly("python3", McpTestServer.script().toString());
		assertThat(request.allowedHosts()).containsExactly("example.org");
		assertThat(request.readablePaths()).containsExactly(Path.of("/opt/servers"));
		assertThat(request.timeout()).isNull();
		ExecutionRequest withoutEgress = SandboxedStdioClientTransport.request(testServer(), List.of(), List.of());
		assertThat(withoutEgress.allowedHosts()).as("no network, whatever the executor's allow-list").isEmpty();
	}

	@Test
	void inStrictModeWithoutIsolationTheServerNeverRuns() {
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.UNSHARE)
			.unsharePath(Path.of("/nonexistent/cave15/unshare"))
			.build();
		try (IsolatedExecutor unavailable = IsolatedExecutors.create(settings)) {
			SandboxedStdioClientTransport transport = transport(unavailable, testServer());
			McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(20)).build();
			assertThatException().isThrownBy(client::initialize)
				.withRootCauseInstanceOf(NetworkIsolationUnavailableException.class);
			assertThat(transport.process()).isEmpty();
			assertThat(transport.startFailure()).containsInstanceOf(NetworkIsolationUnavailableException.class);
			client.close();
		}
	}

	@Test
	void aServerWhoseScriptIsOutsideTheSandboxsViewFailsInitializeAtOnceSayingWhatToConfigure() {
		SandboxedStdioClientTransport transport = new SandboxedStdioClientTransport("unseen", this.executor,
				SandboxedStdioClientTransport.request(testServer(), List.of(), List.of()),
				SandboxedStdioClientTransport.defaultJsonMapper());
		McpSyncClient client = client(transport);
		try {
			long start = System.nanoTime();
			assertThatException().isThrownBy(client::initialize)
				.satisfies((ex) -> assertThat(McpTestServer.messages(ex)).contains("MCP server 'unseen'",
						"cave.sandbox.ai.mcp.unseen.readable-paths", "exit code 2", "test_server.py"));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
			assertThatException()
				.isThrownBy(() -> transport
					.sendMessage(new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, "ping", "later", null))
					.block(Duration.ofSeconds(5)))
				.satisfies((ex) -> assertThat(McpTestServer.messages(ex))
					.contains("cave.sandbox.ai.mcp.unseen.readable-paths"));
		}
		finally {
			client.close();
		}
	}

	@Test
	void closeStopsTheServerBeforeReturning() throws Exception {
		SandboxedStdioClientTransport transport = transport(this.executor, testServer());
		transport.connect((message) -> message).block(Duration.ofSeconds(20));
		SandboxedProcess process = transport.process().orElseThrow();
		transport.close();
		assertThat(process.isAlive()).isFalse();
		assertThat(process.exitCode()).as("the server exits on its own at the end of its stdin").hasValue(0);
	}

	@Test
	void closingDestroysAServerThatIgnoresTheEndOfItsStdin() throws Exception {
		SandboxedStdioClientTransport transport = transport(this.executor,
				ServerParameters.builder("sh").args("-c", "exec sleep 600").build());
		transport.connect((message) -> message).block(Duration.ofSeconds(20));
		SandboxedProcess process = transport.process().orElseThrow();
		assertThat(process.isAlive()).isTrue();
		transport.closeGracefully().block(Duration.ofSeconds(30));
		assertThat(process.isAlive()).isFalse();
		assertThat(process.exitCode()).hasValue(128 + 15);
	}

	@Test
	void theServerDiesWithTheJvm() throws Exception {
		String marker = "cave15-mcp-holder-" + UUID.randomUUID();
		Process jvm = ChildJvms.childJvm(McpServerHolderMain.class, marker)
			.redirectError(ProcessBuilder.Redirect.DISCARD)
			.start();
		try (BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream()))) {
			// The child logs to stdout too (Logback's default), before READY.
			assertThat(out.lines().filter("READY"::equals).findFirst()).as("child JVM output").isPresent();
			assertThat(ChildJvms.processesWith(marker)).as("the server runs").isNotEmpty();
			jvm.destroyForcibly();
			assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
			await().atMost(Duration.ofSeconds(10)).until(() -> ChildJvms.processesWith(marker).isEmpty());
		}
		finally {
			jvm.destroyForcibly();
			ChildJvms.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

}
