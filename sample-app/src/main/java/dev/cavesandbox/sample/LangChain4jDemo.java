package dev.cavesandbox.sample;

import java.io.PrintStream;
import java.util.List;

import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionTool;
import dev.cavesandbox.langchain4j.SandboxedStdioMcpTransport;
import dev.cavesandbox.langchain4j.autoconfigure.SandboxedMcpClients;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.code.CodeExecutionEngine;
import dev.langchain4j.mcp.client.McpClient;

import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * {@code java -jar sample-app.jar langchain4j}: cave-sandbox with LangChain4j, without a
 * model, a key or the network.
 * <ol>
 * <li>The {@link CodeExecutionEngine} bean runs Python code, and the code tool
 * ({@value SandboxedCodeExecutionTool#TOOL_NAME}) a shell snippet that lists the network
 * interfaces it sees.</li>
 * <li>The sample's MCP stdio server ({@code ai/demo_mcp_server.py}), configured as
 * {@code cave.sandbox.langchain4j.mcp.servers.demo} and started in the sandbox behind a
 * LangChain4j MCP client: its isolation, its tools listed, and two of them called.</li>
 * </ol>
 * Only with the {@code langchain4j} profile, which {@link SampleApplication} adds for
 * this command.
 */
@Component
@Profile("langchain4j")
class LangChain4jDemo {

	/** The name of the demo's MCP server. */
	static final String SERVER = "demo";

	private final CodeExecutionEngine engine;

	private final SandboxedCodeExecutionTool tool;

	private final SandboxedMcpClients mcpClients;

	LangChain4jDemo(CodeExecutionEngine engine, SandboxedCodeExecutionTool tool, SandboxedMcpClients mcpClients) {
		this.engine = engine;
		this.tool = tool;
		this.mcpClients = mcpClients;
	}

	/**
	 * Run the demo and print each step.
	 * @param out where to print
	 * @return 0 when every step ran network-isolated and gave what it should, else 1
	 */
	int run(PrintStream out) {
		out.println("1. " + this.engine + " and the tool " + SandboxedCodeExecutionTool.TOOL_NAME);
		String code = "import csv, io\nrows = csv.DictReader(io.StringIO('item,amount\\ntea,12\\ncake,30\\n'))\n"
				+ "print(sum(int(row['amount']) for row in rows))";
		String python = this.engine.execute(code);
		out.println("   execute(\"" + code.replace("\n", "\\n") + "\") = " + python);
		String interfaces = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";
		String shell = this.tool.runCode("shell", interfaces);
		out.println("   " + SandboxedCodeExecutionTool.TOOL_NAME + "(shell, \"" + interfaces + "\") = " + shell);
		boolean ok = "42".equals(python) && "lo".equals(shell);

		out.println("2. MCP stdio server '" + SERVER + "', behind LangChain4j's DefaultMcpClient");
		SandboxedStdioMcpTransport transport = this.mcpClients.transports().get(SERVER);
		SandboxedProcess server = transport.process().orElseThrow();
		out.println("   in the sandbox: pid " + server.pid() + ", " + server.isolation());
		McpClient client = this.mcpClients.clients().get(0);
		List<String> tools = client.listTools().stream().map(ToolSpecification::name).toList();
		out.println("   tools: " + tools);
		String words = call(client, "word_count", "{\"text\": \"the sandbox holds the network boundary\"}");
		out.println("   word_count(\"the sandbox holds the network boundary\") = " + words);
		String serverInterfaces = call(client, "network_interfaces", "{}");
		out.println("   network_interfaces() = " + serverInterfaces);
		ok &= server.isolation().networkIsolated() && "6".equals(words) && "lo".equals(serverInterfaces);
		out.println(ok ? "Every step ran network-isolated." : "A step did not run network-isolated as it should.");
		return ok ? 0 : 1;
	}

	private static String call(McpClient client, String tool, String arguments) {
		return client.executeTool(ToolExecutionRequest.builder().id(tool).name(tool).arguments(arguments).build())
			.resultText();
	}

}
