package dev.cavesandbox.ai;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import dev.cavesandbox.SandboxedProcess;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * The reader of an MCP server's stdout, on a thread of its own: one JSON-RPC message per
 * line to the client's handler (blank lines skipped, a line that is no message logged at
 * WARN). When stdout ends while the transport is not closing, the server ended on its
 * own: the reader waits up to {@link #EXIT_WAIT} for its exit code and as long again for
 * the rest of its stderr, then {@linkplain PendingRequests#end ends} the pending requests
 * with the reason.
 */
final class MessageReader implements Runnable {

	private static final Log logger = LogFactory.getLog(SandboxedStdioClientTransport.class);

	/** How long the reader waits for an ended server's exit code, and for its stderr. */
	static final Duration EXIT_WAIT = Duration.ofSeconds(2);

	private final String name;

	private final SandboxedProcess server;

	private final McpJsonMapper jsonMapper;

	private final Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler;

	private final PendingRequests pending;

	private final StderrTail stderr;

	private final BooleanSupplier closing;

	MessageReader(String name, SandboxedProcess server, McpJsonMapper jsonMapper,
			Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler, PendingRequests pending, StderrTail stderr,
			BooleanSupplier closing) {
		this.name = name;
		this.server = server;
		this.jsonMapper = jsonMapper;
		this.handler = handler;
		this.pending = pending;
		this.stderr = stderr;
		this.closing = closing;
	}

	@Override
	public void run() {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.server.stdout(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				if (!line.isBlank()) {
					read(line);
				}
			}
		}
		catch (IOException ex) {
			if (!this.closing.getAsBoolean()) {
				logger.debug("MCP server '" + this.name + "': reading its stdout failed", ex);
			}
		}
		if (!this.closing.getAsBoolean()) {
			serverEnded();
		}
	}

	private void read(String line) {
		JSONRPCMessage message;
		try {
			message = McpSchema.deserializeJsonRpcMessage(this.jsonMapper, line);
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("MCP server '" + this.name + "' wrote a line that is no JSON-RPC message: " + line, ex);
			return;
		}
		if (message instanceof JSONRPCResponse response && response.id() != null) {
			this.pending.remove(response.id());
		}
		handle(message);
	}

	private void handle(JSONRPCMessage message) {
		this.handler.apply(Mono.just(message))
			.subscribe(null, (error) -> logger
				.warn("MCP server '" + this.name + "': handling a message failed: " + error.getMessage(), error));
	}

	/**
	 * The server ended its stdout on its own: say why once, answer the requests it left
	 * pending with that, and fail the messages sent from now on.
	 */
	private void serverEnded() {
		String exitCode = "still running";
		try {
			if (this.server.waitFor(EXIT_WAIT)) {
				exitCode = "exit code " + this.server.exitCode().orElse(-1);
			}
			this.stderr.awaitEnd(EXIT_WAIT);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.closing.getAsBoolean()) {
			return;
		}
		this.pending.end(PendingRequests.reason(this.name, exitCode, this.stderr.lastLines()), this::handle);
	}

}
