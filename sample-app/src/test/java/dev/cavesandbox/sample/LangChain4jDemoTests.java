package dev.cavesandbox.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code java -jar sample-app.jar langchain4j}, run in a real child JVM: the code engine,
 * the code tool and the sample's MCP stdio server behind a LangChain4j MCP client, in the
 * sandbox.
 */
@EnabledOnOs(OS.LINUX)
class LangChain4jDemoTests {

	@Test
	void runsTheEngineTheToolAndTheMcpServersToolsAllNetworkIsolated() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--logging.level.dev.cavesandbox.langchain4j=INFO", "langchain4j");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout()).contains("1. SandboxedCodeExecutionEngine[python: python3]")
			.contains("print(sum(int(row['amount']) for row in rows))\") = 42")
			.contains("cave_sandbox_run_code(shell, \"tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '\") = lo")
			.containsPattern("in the sandbox: pid \\d+, \\w+ \\(network isolated\\)")
			.contains("tools: [word_count, network_interfaces]")
			.contains("word_count(\"the sandbox holds the network boundary\") = 6")
			.contains("network_interfaces() = lo")
			.contains("Every step ran network-isolated.");
		assertThat(result.stderr()).contains("MCP server 'demo' started in the sandbox");
	}

	@Test
	void theOtherCommandsStartNoLangChain4jMcpServer() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--logging.level.dev.cavesandbox.langchain4j=INFO", "exec", "--",
				"true");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stderr()).doesNotContain("MCP server");
	}

}
