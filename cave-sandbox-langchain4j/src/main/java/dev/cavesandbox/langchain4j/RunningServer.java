package dev.cavesandbox.langchain4j;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.langchain4j.CappedLineReader.Line;
import dev.langchain4j.mcp.client.transport.McpOperationHandler;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One start of a server of {@link SandboxedStdioMcpTransport}: its process, the daemon
 * threads that read its stdout (one JSON-RPC message per line, of at most
 * {@link #MESSAGE_CAP} bytes, to the client's handler) and its stderr, and why it takes
 * no more messages once its stdout has ended on its own. Then it waits up to
 * {@link #EXIT_WAIT} for the exit code and as long again for the rest of stderr, logs the
 * reason once at WARN and fails the client's pending operations with it, unless it was
 * {@linkplain #retire(String) retired} (closed or replaced) first, which fails them at
 * once.
 */
final class RunningServer {

	private static final Log logger = LogFactory.getLog(SandboxedStdioMcpTransport.class);

	private static final ObjectMapper JSON = new ObjectMapper();

	/**
	 * The most bytes of UTF-8 one line of the server's stdout, one JSON-RPC message, may
	 * take: 8 MiB. LangChain4j holds each message whole (as a tree, then a tool's result
	 * as text for the model), so nothing is gained by streaming it; 8 MiB leaves room for
	 * a result that carries a base64-encoded image of 6 MB, or two million tokens of
	 * text, more than a model's context takes. A longer line, a hostile server's endless
	 * one included, costs the reader this much and no more, half the 16 MiB that
	 * {@code McpTransportBreakInTests} allows one reader; it fails the server (see
	 * {@link McpServerRequests#overflowReason}).
	 */
	static final int MESSAGE_CAP = 8 * 1024 * 1024;

	/** How long to wait for an ended server's exit code, and for its stderr. */
	static final Duration EXIT_WAIT = Duration.ofSeconds(2);

	private final String name;

	private final SandboxedProcess process;

	private final McpOperationHandler handler;

	private final ServerStderr stderr;

	private final CompletableFuture<String> ended = new CompletableFuture<>();

	private volatile boolean retired;

	RunningServer(String name, SandboxedProcess process, McpOperationHandler handler) {
		this.name = name;
		this.process = process;
		this.handler = handler;
		this.stderr = new ServerStderr(name, process.stderr());
		SandboxedStdioMcpTransport.daemon(name, "stdout", this::readStdout).start();
	}

	SandboxedProcess process() {
		return this.process;
	}

	McpOperationHandler handler() {
		return this.handler;
	}

	/**
	 * End this start (closed or replaced): its end is no failure to report, it takes no
	 * more messages, and the client's operations still pending fail at once with the
	 * given reason, unless the server had ended before.
	 * @param reason why, naming the server
	 */
	void retire(String reason) {
		this.retired = true;
		end(reason);
	}

	/**
	 * Say why the server takes no more messages and fail the client's pending operations
	 * with it, unless that was said before.
	 * @param reason why
	 * @return whether this was the first reason
	 */
	private boolean end(String reason) {
		if (!this.ended.complete(reason)) {
			return false;
		}
		this.handler.cancelAllPendingOperations(reason);
		return true;
	}

	/**
	 * Return why the server takes no more messages.
	 * @return the reason once its stdout has ended on its own or it was retired, else
	 * {@code null}
	 */
	@Nullable String endedReason() {
		return this.ended.getNow(null);
	}

	/**
	 * Write a message as one line of JSON to the server's stdin.
	 * @param message the message
	 * @throws IOException the write failed
	 */
	void write(Object message) throws IOException {
		// The mapper writes no raw line break: one message per line.
		byte[] line = (JSON.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8);
		OutputStream stdin = this.process.stdin();
		synchronized (stdin) {
			stdin.write(line);
			stdin.flush();
		}
	}

	/**
	 * Wait briefly for the reader of stdout to see the end of a server that a write
	 * failed on.
	 * @return why it ended, or {@code null} if it did not end
	 */
	@Nullable String awaitEnded() {
		try {
			return this.ended.get(EXIT_WAIT.toMillis() * 3, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		catch (ExecutionException | TimeoutException ex) {
			return null;
		}
	}

	private void readStdout() {
		Line overflow = null;
		try (CappedLineReader lines = new CappedLineReader(this.process.stdout(), MESSAGE_CAP,
				ServerStderr.LINE_LENGTH)) {
			for (Line line = lines.next(); line != null; line = lines.next()) {
				if (line.cut()) {
					overflow = line;
					break;
				}
				if (!line.text().isBlank()) {
					handle(line.text());
				}
			}
		}
		catch (IOException ex) {
			logger.debug("MCP server '" + this.name + "': reading its stdout ended", ex);
		}
		if (overflow != null) {
			overflowed(overflow.text());
		}
		else if (!this.retired) {
			stdoutEnded();
		}
	}

	/**
	 * The server wrote a line past {@link #MESSAGE_CAP}: the message it was is lost, and
	 * perhaps the answer to a pending operation with it. Fail them all and destroy the
	 * server; the client's health check starts it again.
	 */
	private void overflowed(String prefix) {
		String reason = McpServerRequests.overflowReason(this.name, MESSAGE_CAP);
		if (end(reason)) {
			logger.warn(reason + "; the line began: " + prefix + "...");
		}
		this.process.destroy();
	}

	private void handle(String line) {
		JsonNode message;
		try {
			message = JSON.readTree(line);
		}
		catch (JsonProcessingException ex) {
			logger.warn("MCP server '" + this.name + "' wrote a line that is no JSON-RPC message: "
					+ CappedLineReader.prefix(line, ServerStderr.LINE_LENGTH));
			return;
		}
		try {
			this.handler.handle(message);
		}
		catch (RuntimeException ex) {
			logger.warn("MCP server '" + this.name + "': handling a message failed: " + ex.getMessage(), ex);
		}
	}

	private void stdoutEnded() {
		String exitCode = "still running";
		try {
			if (this.process.waitFor(EXIT_WAIT)) {
				exitCode = "exit code " + this.process.exitCode().orElse(-1);
			}
			this.stderr.awaitEnd(EXIT_WAIT);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.retired) {
			return;
		}
		String reason = McpServerRequests.endedReason(this.name, exitCode, this.stderr.tail());
		if (end(reason)) {
			logger.warn(reason);
		}
	}

}
