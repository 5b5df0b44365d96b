package dev.cavesandbox.ai;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

import dev.cavesandbox.SandboxedProcess;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The writer of an MCP server's stdin: each message as one line of JSON (its line breaks
 * escaped), on a single thread of its own, in the order of the calls.
 */
final class MessageWriter {

	private final String name;

	private final SandboxedProcess server;

	private final McpJsonMapper jsonMapper;

	private final Scheduler thread;

	MessageWriter(String name, SandboxedProcess server, McpJsonMapper jsonMapper) {
		this.name = name;
		this.server = server;
		this.jsonMapper = jsonMapper;
		this.thread = Schedulers.fromExecutorService(
				Executors.newSingleThreadExecutor((task) -> SandboxedStdioClientTransport.thread(name, "stdin", task)),
				"cave-sandbox-mcp-stdin");
	}

	/**
	 * Return a {@link Mono} that writes the message on this writer's thread.
	 * @param message the message
	 * @return the write; it fails with an {@link UncheckedIOException} when the write
	 * does
	 */
	Mono<Void> write(JSONRPCMessage message) {
		return Mono.<Void>fromRunnable(() -> write(this.server.stdin(), message)).subscribeOn(this.thread);
	}

	/** Stop the writer's thread. */
	void dispose() {
		this.thread.dispose();
	}

	private void write(OutputStream stdin, JSONRPCMessage message) {
		try {
			// One message per line: the JSON must hold no raw line break.
			String json = this.jsonMapper.writeValueAsString(message).replace("\r", "\\r").replace("\n", "\\n");
			stdin.write(json.getBytes(StandardCharsets.UTF_8));
			stdin.write('\n');
			stdin.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Writing to MCP server '" + this.name + "' failed", ex);
		}
	}

}
