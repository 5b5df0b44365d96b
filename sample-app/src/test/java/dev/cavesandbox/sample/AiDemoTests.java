package dev.cavesandbox.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code java -jar sample-app.jar ai}, run in a real child JVM: the code-execution tool
 * and the sample's MCP stdio server, in the sandbox.
 */
@EnabledOnOs(OS.LINUX)
class AiDemoTests {

	private static final String MCP_LOG = "--logging.level.dev.cavesandbox.ai=INFO";

	@Test
	void callsTheToolAndTheMcpServersToolsAllNetworkIsolated() throws Exception {
		SampleJvm.Result result = SampleJvm.run(MCP_LOG, "ai");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout()).contains("1. cave_sandbox_run_code, called through Spring AI's ToolCallback API")
			.containsPattern(
					"tool -> model: \\{\"exitCode\":0,\"stdout\":\"42\\\\n\".*\"isolation\":\"\\w+ \\(network isolated\\)\"")
			.containsPattern("in the sandbox: \\{state=running, pid=\\d+, isolation=\\w+ \\(network isolated\\)\\}")
			.contains("tools: [word_count, network_interfaces]")
			.contains("word_count(\"the sandbox holds the network boundary\") = 6")
			.contains("network_interfaces() = lo")
			.contains("Every step ran network-isolated.");
		assertThat(result.stderr()).contains("MCP server 'demo' started in the sandbox");
	}

	@Test
	void theOtherCommandsStartNoMcpServer() throws Exception {
		SampleJvm.Result result = SampleJvm.run(MCP_LOG, "exec", "--", "true");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stderr()).doesNotContain("MCP server");
	}

}
