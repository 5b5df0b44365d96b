package dev.cavesandbox.ai.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.LoopbackTcpListener;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.ai.McpTestServer;
import dev.cavesandbox.ai.SandboxedStdioClientTransport;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.ai.mcp.client.common.autoconfigure.McpClientAutoConfiguration;
import org.springframework.ai.mcp.client.common.autoconfigure.McpToolCallbackAutoConfiguration;
import org.springframework.ai.mcp.client.common.autoconfigure.NamedClientMcpTransport;
import org.springframework.ai.mcp.client.common.autoconfigure.StdioTransportAutoConfiguration;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring AI's MCP client auto-configuration with a stdio connection
 * ({@code spring.ai.mcp.client.stdio.connections.test}) to the tests' MCP server, which
 * runs in this host's real sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class CaveSandboxMcpAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class,
				CaveSandboxMcpAutoConfiguration.class, StdioTransportAutoConfiguration.class,
				McpClientAutoConfiguration.class, McpToolCallbackAutoConfiguration.class))
		.withPropertyValues(McpTestServer.connectionProperties());

	@SuppressWarnings("unchecked")
	private static McpSyncClient client(AssertableApplicationContext context) {
		List<McpSyncClient> clients = context.getBean("mcpSyncClients", List.class);
		assertThat(clients).hasSize(1);
		return clients.get(0);
	}

	@Test
	void startsTheStdioServerInTheSandboxAndItsToolsAreListedAndCalled() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			McpSyncClient client = client(context);
			assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
				.containsExactly("echo", "getenv", "fetch_loopback");
			assertThat(McpTestServer.call(client, "echo", Map.of("text", "through Spring AI")))
				.isEqualTo("through Spring AI");
			List<?> transports = context.getBean("stdioTransports", List.class);
			assertThat(transports).singleElement()
				.extracting((transport) -> ((NamedClientMcpTransport) transport).transport())
				.isInstanceOf(SandboxedStdioClientTransport.class);
			SandboxedProcess process = context.getBean(SandboxedMcpServers.class)
				.transports()
				.get(0)
				.process()
				.orElseThrow();
			assertThat(process.isAlive()).isTrue();
			assertThat(process.isolation()).isEqualTo(context.getBean(IsolatedExecutor.class).isolation());
			assertThat(process.isolation().networkIsolated()).isTrue();
		});
	}

	@Test
	void theServersToolsAreSpringAiToolCallbacks() {
		this.runner.run((context) -> {
			ToolCallback[] callbacks = context.getBean(ToolCallbackProvider.class).getToolCallbacks();
			ToolCallback echo = List.of(callbacks)
				.stream()
				.filter((callback) -> callback.getToolDefinition().name().endsWith("echo"))
				.findFirst()
				.orElseThrow();
			assertThat(echo.call("{\"text\":\"called as a tool callback\"}")).contains("called as a tool callback");
		});
	}

	@Test
	void theServersAttemptToReachTheTestsLoopbackListenerGetsNothingThrough() throws Exception {
		try (LoopbackTcpListener listener = new LoopbackTcpListener()) {
			this.runner.run((context) -> assertThat(
					McpTestServer.call(client(context), "fetch_loopback", Map.of("port", listener.port())))
				.startsWith("failed:"));
			assertThat(listener.messagesUpToControl()).containsExactly(LoopbackTcpListener.control());
		}
	}

	@Test
	void theServerEndsWithTheContext() throws InterruptedException {
		SandboxedProcess[] process = new SandboxedProcess[1];
		this.runner.run((context) -> process[0] = context.getBean(SandboxedMcpServers.class)
			.transports()
			.get(0)
			.process()
			.orElseThrow());
		assertThat(process[0].waitFor(Duration.ofSeconds(20))).isTrue();
	}

	@Test
	void theServerIsClosedGracefullyBeforeTheExecutorWhenTheContextCloses() throws InterruptedException {
		SandboxedProcess[] process = new SandboxedProcess[1];
		List<String> executorsDependents = new ArrayList<>();
		List<String> transportsDependents = new ArrayList<>();
		this.runner.run((context) -> {
			client(context).ping();
			process[0] = context.getBean(SandboxedMcpServers.class).transports().get(0).process().orElseThrow();
			ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
			String[] executors = beanFactory.getBeanNamesForType(IsolatedExecutor.class);
			assertThat(executors).isNotEmpty();
			for (String executor : executors) {
				executorsDependents.addAll(List.of(beanFactory.getDependentBeans(executor)));
			}
			transportsDependents.addAll(List.of(beanFactory.getDependentBeans("stdioTransports")));
		});
		assertThat(process[0].waitFor(Duration.ofSeconds(20))).isTrue();
		assertThat(process[0].exitCode()).as("the server ends on its own at the end of its stdin, not killed")
			.hasValue(0);
		assertThat(executorsDependents).contains("stdioTransports");
		assertThat(transportsDependents).contains("mcpSyncClients");
	}

	@Test
	void aServerThatCannotReadItsScriptFailsStartupAtOnceSayingWhatToConfigure() {
		long start = System.nanoTime();
		this.runner.withPropertyValues("spring.ai.mcp.client.stdio.connections.test.args[0]=/does/not/exist.py")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(McpTestServer.messages(context.getStartupFailure())).contains("MCP server 'test'",
						"cave.sandbox.ai.mcp.test.readable-paths", "exit code 2", "/does/not/exist.py");
			});
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
	}

	@Test
	void aSandboxOfNoStdioConnectionFailsStartup() {
		this.runner.withPropertyValues("cave.sandbox.ai.mcp.tset.allowed-hosts=example.org")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("cave.sandbox.ai.mcp names [tset], which is no stdio MCP connection "
						+ "(spring.ai.mcp.client.stdio.connections: [test])"));
	}

	@Test
	void inStrictModeWithoutIsolationTheServerNeverRuns() {
		this.runner
			.withPropertyValues("cave.sandbox.mechanism=unshare",
					"cave.sandbox.linux.unshare-path=/nonexistent/cave15/unshare", "cave.sandbox.fail-fast=false")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(NetworkIsolationUnavailableException.class));
	}

	@Test
	void withoutAnExecutorTheServerNeverRuns() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(CaveSandboxMcpAutoConfiguration.class,
					StdioTransportAutoConfiguration.class, McpClientAutoConfiguration.class))
			.withPropertyValues("spring.ai.mcp.client.stdio.connections.test.command=python3")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("The stdio MCP connection 'test' cannot run in the sandbox: "
						+ "there is no IsolatedExecutor bean"));
	}

	@Test
	void backsOffWithoutSpringAisMcpClient() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class,
					CaveSandboxMcpAutoConfiguration.class, CaveSandboxMcpHealthAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.ai.", "io.modelcontextprotocol."))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean(SandboxedMcpServers.class)
				.doesNotHaveBean("caveSandboxStdioTransportsPostProcessor")
				.doesNotHaveBean("caveSandboxMcpHealthIndicator"));
	}

}
