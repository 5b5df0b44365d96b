package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ai.CodeExecutionResult;
import dev.cavesandbox.ai.CodeExecutionTool;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.tool.ToolCallback;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * {@code java -jar sample-app.jar ai}: cave-sandbox with Spring AI, without a model, a
 * key or the network.
 * <ol>
 * <li>The code-execution tool, called through Spring AI's own {@link ToolCallback} API
 * with the JSON a model would send: a Python snippet that reads an input file.</li>
 * <li>The sample's MCP stdio server ({@code ai/demo_mcp_server.py}), configured as
 * {@code spring.ai.mcp.client.stdio.connections.demo} and started by Spring AI's MCP
 * client in the sandbox: its isolation (from the {@code caveSandboxMcp} health
 * indicator), its tools listed, and two of them called.</li>
 * </ol>
 * Only with the {@code ai} profile, which {@link SampleApplication} adds for this
 * command.
 */
@Component
@Profile("ai")
class AiDemo {

	/** The name of the demo's MCP connection. */
	static final String CONNECTION = "demo";

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final ToolCallback runCode;

	private final List<McpSyncClient> clients;

	private final HealthIndicator mcpHealth;

	AiDemo(@Qualifier("caveSandboxRunCodeToolCallback") ToolCallback runCode,
			@Qualifier("mcpSyncClients") List<McpSyncClient> clients,
			@Qualifier("caveSandboxMcpHealthIndicator") HealthIndicator mcpHealth) {
		this.runCode = runCode;
		this.clients = clients;
		this.mcpHealth = mcpHealth;
	}

	/**
	 * Return the sample's MCP server script, which the demo's connection passes inline to
	 * {@code python3 -c}: the sandbox shows the command the system's directories, not
	 * this jar.
	 * @return the script
	 */
	static String serverScript() {
		try (InputStream in = AiDemo.class.getResourceAsStream("/ai/demo_mcp_server.py")) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Run the demo and print each step.
	 * @param out where to print
	 * @return 0 when every step ran network-isolated and gave what it should, else 1
	 */
	int run(PrintStream out) {
		boolean ok = true;
		out.println("1. " + CodeExecutionTool.TOOL_NAME + ", called through Spring AI's ToolCallback API");
		Map<String, Object> input = new LinkedHashMap<>();
		input.put("language", "python");
		input.put("code", "import csv\nrows = list(csv.DictReader(open('data.csv')))\n"
				+ "print(sum(int(row['amount']) for row in rows))");
		input.put("files", Map.of("data.csv", "item,amount\ntea,12\ncake,30\n"));
		String request = JSON.writeValueAsString(input);
		out.println("   model -> tool: " + request);
		String response = this.runCode.call(request);
		out.println("   tool -> model: " + response);
		CodeExecutionResult result = JSON.readValue(response, CodeExecutionResult.class);
		ok &= "42\n".equals(result.stdout()) && result.isolation() != null
				&& result.isolation().endsWith("(network isolated)");

		out.println("2. MCP stdio server '" + CONNECTION + "', started by Spring AI's MCP client");
		Object server = this.mcpHealth.health().getDetails().get(CONNECTION);
		out.println("   in the sandbox: " + server);
		ok &= (server instanceof Map<?, ?> details) && "running".equals(details.get("state"))
				&& String.valueOf(details.get("isolation")).endsWith("(network isolated)");
		McpSyncClient client = this.clients.get(0);
		List<String> tools = client.listTools().tools().stream().map(McpSchema.Tool::name).toList();
		out.println("   tools: " + tools);
		String words = call(client, "word_count", Map.of("text", "the sandbox holds the network boundary"));
		out.println("   word_count(\"the sandbox holds the network boundary\") = " + words);
		String interfaces = call(client, "network_interfaces", Map.of());
		out.println("   network_interfaces() = " + interfaces);
		ok &= "6".equals(words) && "lo".equals(interfaces);
		out.println(ok ? "Every step ran network-isolated." : "A step did not run network-isolated as it should.");
		return ok ? 0 : 1;
	}

	private static String call(McpSyncClient client, String tool, Map<String, Object> arguments) {
		McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, arguments));
		return ((McpSchema.TextContent) result.content().get(0)).text();
	}

}
