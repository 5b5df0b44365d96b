package dev.cavesandbox.langchain4j;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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
import dev.langchain4j.mcp.client.transport.McpOperationHandler;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One start of a server of {@link SandboxedStdioMcpTransport}: its process, the daemon
 * threads that read its stdout (one JSON-RPC message per line to the client's handler)
 * and its stderr, and why it takes no more messages once its stdout has ended on its own.
 * Then it waits up to {@link #EXIT_WAIT} for the exit code and as long again for the rest
 * of stderr, logs the reason once at WARN and fails the client's pending operations with
 * it, unless it was {@linkplain #retire(String) retired} (closed or replaced) first,
 * which fails them at once.
 */
final class RunningServer {

	private static final Log logger = LogFactory.getLog(SandboxedStdioMcpTransport.class);

	private static final ObjectMapper JSON = new ObjectMapper();

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
		try (BufferedReader lines = new BufferedReader(
				new InputStreamReader(this.process.stdout(), StandardCharsets.UTF_8))) {
			for (String line = lines.readLine(); line != null; line = lines.readLine()) {
				if (!line.isBlank()) {
					handle(line);
				}
			}
		}
		catch (IOException ex) {
			logger.debug("MCP server '" + this.name + "': reading its stdout ended", ex);
		}
		if (!this.retired) {
			stdoutEnded();
		}
	}

	private void handle(String line) {
		JsonNode message;
		try {
			message = JSON.readTree(line);
		}
		catch (JsonProcessingException ex) {
			logger.warn("MCP server '" + this.name + "' wrote a line that is no JSON-RPC message: " + line);
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
