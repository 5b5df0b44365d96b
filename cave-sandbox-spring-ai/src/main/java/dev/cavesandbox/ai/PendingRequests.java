package dev.cavesandbox.ai;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse.JSONRPCError;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The requests sent to an MCP server and not answered yet, and why the server takes no
 * more messages once its stdout has ended on its own: each request it left pending is
 * answered, and each later message fails, with the JSON-RPC error {@value #SERVER_ENDED}
 * and that reason (an {@link McpError} for the messages).
 */
final class PendingRequests {

	private static final Log logger = LogFactory.getLog(SandboxedStdioClientTransport.class);

	/**
	 * The JSON-RPC error code of the answers to requests the ended server left pending.
	 */
	static final int SERVER_ENDED = -32000;

	/** The requests sent and not answered yet: their id and method. */
	private final Map<Object, String> pending = new ConcurrentHashMap<>();

	/** Why the server can take no more messages, once its stdout has ended on its own. */
	private final CompletableFuture<String> ended = new CompletableFuture<>();

	/**
	 * Return the error that fails a message sent now.
	 * @return the error once the server has ended, else {@code null}
	 */
	@Nullable McpError endedError() {
		String reason = this.ended.getNow(null);
		return (reason != null) ? error(reason) : null;
	}

	/**
	 * Track a request until it is answered.
	 * @param id the request's id
	 * @param method the request's method
	 * @return the error that fails it, when the server ended before it was tracked
	 * (nothing answers it), else {@code null}
	 */
	@Nullable McpError track(Object id, String method) {
		this.pending.put(id, method);
		String reason = this.ended.getNow(null);
		if (reason != null && this.pending.remove(id) != null) {
			// The server ended between the first check and now: nothing answers it.
			return error(reason);
		}
		return null;
	}

	/**
	 * Stop tracking a request: it was answered, or writing it failed.
	 * @param id the request's id
	 */
	void remove(Object id) {
		this.pending.remove(id);
	}

	/**
	 * The server ended: fail the messages sent from now on with the reason, log it once
	 * at WARN, and answer each pending request with it.
	 * @param reason why the server takes no more messages
	 * @param answer where the answers go (the client's handler)
	 */
	void end(String reason, Consumer<JSONRPCMessage> answer) {
		this.ended.complete(reason);
		logger.warn(reason);
		for (Object id : List.copyOf(this.pending.keySet())) {
			if (this.pending.remove(id) != null) {
				answer.accept(new JSONRPCResponse(McpSchema.JSONRPC_VERSION, id, null,
						new JSONRPCError(SERVER_ENDED, reason, null)));
			}
		}
	}

	/**
	 * Wait briefly for the reader of stdout to see the end of a server that a write
	 * failed on.
	 * @param limit how long at most
	 * @return the error that says why it ended, or {@code null} if it did not end
	 */
	@Nullable McpError awaitEnd(Duration limit) {
		try {
			return error(this.ended.get(limit.toMillis(), TimeUnit.MILLISECONDS));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		catch (ExecutionException | TimeoutException ex) {
			return null;
		}
	}

	/**
	 * Say why a server that ended its stdout takes no more requests, and the likely fix.
	 * @param name the name of the connection
	 * @param exitCode its exit code ({@code exit code N}) or {@code still running}
	 * @param stderrLines the last lines of its stderr
	 * @return the reason
	 */
	static String reason(String name, String exitCode, List<String> stderrLines) {
		return "MCP server '" + name + "' ended its stdout (" + exitCode + ") and takes no more requests"
				+ (stderrLines.isEmpty() ? "; it wrote nothing to stderr"
						: "; the last lines of its stderr: " + String.join(" | ", stderrLines))
				+ ". If it could not start: a program or script outside the sandbox's view needs cave.sandbox.ai.mcp."
				+ name + ".readable-paths (a file or a directory not under /tmp or /run); the command must be "
				+ "on the sandbox's PATH";
	}

	private static McpError error(String reason) {
		return new McpError(new JSONRPCError(SERVER_ENDED, reason, null));
	}

}
