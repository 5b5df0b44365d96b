package dev.cavesandbox.ai.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.cavesandbox.ai.SandboxedStdioClientTransport;

/**
 * The transports of the stdio MCP servers that run in the sandbox, as
 * {@link SandboxedStdioTransportsPostProcessor} created them: what the health indicator
 * reports.
 */
final class SandboxedMcpServers {

	private final List<SandboxedStdioClientTransport> transports = new CopyOnWriteArrayList<>();

	void add(SandboxedStdioClientTransport transport) {
		this.transports.add(transport);
	}

	List<SandboxedStdioClientTransport> transports() {
		return List.copyOf(this.transports);
	}

}
