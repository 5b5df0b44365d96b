package dev.cavesandbox.langchain4j;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ExecutionRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The requests that start stdio MCP servers, and the reason an ended one gives; without a
 * sandbox.
 */
class McpServerRequestsTests {

	@Test
	void theRequestCarriesTheCommandEnvironmentAllowListAndReadablePaths() {
		ExecutionRequest request = McpServerRequests.request(List.of("npx", "server"), Map.of("TOKEN", "t"),
				List.of("api.example.org"), List.of(Path.of("/opt/servers")));
		assertThat(request.argv()).containsExactly("npx", "server");
		assertThat(request.environment()).containsExactly(Map.entry("TOKEN", "t"));
		assertThat(request.allowedHosts()).containsExactly("api.example.org");
		assertThat(request.readablePaths()).containsExactly(Path.of("/opt/servers"));
		assertThat(request.timeout()).isNull();
		assertThat(McpServerRequests.request(List.of("server"), Map.of(), List.of(), List.of()).allowedHosts())
			.as("no network, whatever the executor's allow-list")
			.isEmpty();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> McpServerRequests.request(List.of(), Map.of(), List.of(), List.of()))
			.withMessage("command must not be empty");
	}

	@Test
	void anEndedServersReasonGivesItsExitCodeStderrAndTheProperty() {
		assertThat(McpServerRequests.endedReason("files", "exit code 2", List.of("line 1", "line 2")))
			.startsWith("MCP server 'files' ended its stdout (exit code 2) and takes no more requests; "
					+ "the last lines of its stderr: line 1 | line 2. ")
			.contains("cave.sandbox.langchain4j.mcp.servers.files.readable-paths");
		assertThat(McpServerRequests.endedReason("files", "still running", List.of())).contains("(still running)",
				"; it wrote nothing to stderr.");
	}

	@Test
	void anOverflowingServersReasonGivesTheCapAndTheFix() {
		assertThat(McpServerRequests.overflowReason("files", 8 * 1024 * 1024))
			.startsWith("MCP server 'files' wrote a line of more than 8388608 bytes (8 MiB) to its stdout, "
					+ "the most one JSON-RPC message may take, and was stopped")
			.endsWith("its log to stderr");
	}

}
