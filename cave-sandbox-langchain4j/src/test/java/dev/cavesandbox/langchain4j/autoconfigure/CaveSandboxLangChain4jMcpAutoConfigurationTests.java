package dev.cavesandbox.langchain4j.autoconfigure;

import java.nio.file.Path;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.langchain4j.SandboxedStdioMcpTransport;
import dev.cavesandbox.langchain4j.TestSandbox;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.mcp.McpToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration of LangChain4j MCP clients whose stdio servers run in this
 * host's real sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class CaveSandboxLangChain4jMcpAutoConfigurationTests {

	private static final Path SCRIPT = TestSandbox.mcpServerScript();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class,
				CaveSandboxLangChain4jMcpAutoConfiguration.class))
		.withPropertyValues("cave.sandbox.langchain4j.mcp.initialization-timeout=20s",
				"cave.sandbox.langchain4j.mcp.tool-execution-timeout=20s");

	@Test
	void startsTheServerInTheSandboxAndProvidesItsToolsUntilTheContextCloses() {
		SandboxedProcess[] process = new SandboxedProcess[1];
		this.runner
			.withPropertyValues("cave.sandbox.langchain4j.mcp.servers.calc.command=python3," + SCRIPT,
					"cave.sandbox.langchain4j.mcp.servers.calc.readable-paths=" + SCRIPT.getParent(),
					"cave.sandbox.langchain4j.mcp.servers.calc.environment.MCP_GREETING=from-properties")
			.run((context) -> {
				ToolProviderResult tools = context.getBean(McpToolProvider.class)
					.provideTools(new ToolProviderRequest("memory", UserMessage.from("add 2 and 40")));
				assertThat(tools.tools().keySet()).extracting(ToolSpecification::name)
					.containsExactlyInAnyOrder("add", "whoami", "connect");
				assertThat(tools.toolExecutorByName("add")
					.execute(ToolExecutionRequest.builder().id("1").name("add").arguments("{\"a\":2,\"b\":40}").build(),
							"memory"))
					.isEqualTo("42");
				assertThat(tools.toolExecutorByName("whoami")
					.execute(ToolExecutionRequest.builder().id("2").name("whoami").arguments("{}").build(), "memory"))
					.endsWith("greeting=from-properties");
				SandboxedStdioMcpTransport transport = context.getBean(SandboxedMcpClients.class)
					.transports()
					.get("calc");
				process[0] = transport.process().orElseThrow();
				assertThat(process[0].isolation()).isEqualTo(context.getBean(IsolatedExecutor.class).isolation());
				assertThat(process[0].isolation().networkIsolated()).isTrue();
			});
		assertThat(process[0].isAlive()).as("the server is stopped with the context").isFalse();
	}

	@Test
	void isOffWithoutServers() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(IsolatedExecutor.class)
			.doesNotHaveBean(SandboxedMcpClients.class)
			.doesNotHaveBean(McpToolProvider.class));
	}

	@Test
	void backsOffWithoutLangChain4jMcp() {
		this.runner.withPropertyValues("cave.sandbox.langchain4j.mcp.servers.calc.command=python3," + SCRIPT)
			.withClassLoader(new FilteredClassLoader("dev.langchain4j.mcp."))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean("caveSandboxMcpClients")
				.doesNotHaveBean("caveSandboxMcpToolProvider"));
	}

	@Test
	void aServerOutsideTheSandboxsViewFailsStartupNamingWhatToConfigure() {
		this.runner.withPropertyValues("cave.sandbox.langchain4j.mcp.servers.unseen.command=python3," + SCRIPT)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.satisfies((failure) -> assertThat(TestSandbox.messages(failure)).contains(
						"The MCP server of cave.sandbox.langchain4j.mcp.servers.unseen could not start in the sandbox",
						"exit code 2", "cave.sandbox.langchain4j.mcp.servers.unseen.readable-paths")));
	}

	@Test
	void aServerWithoutCommandFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("cave.sandbox.langchain4j.mcp.servers.empty.environment.A=b")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("cave.sandbox.langchain4j.mcp.servers.empty.command is empty: "
						+ "set the server's command and arguments"));
	}

}
