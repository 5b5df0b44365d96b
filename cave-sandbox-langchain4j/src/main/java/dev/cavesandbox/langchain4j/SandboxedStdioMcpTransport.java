package dev.cavesandbox.langchain4j;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxedProcess;
import dev.langchain4j.mcp.client.McpCallContext;
import dev.langchain4j.mcp.client.transport.McpOperationHandler;
import dev.langchain4j.mcp.client.transport.McpTransport;
import dev.langchain4j.mcp.protocol.McpClientMessage;
import dev.langchain4j.mcp.protocol.McpInitializationNotification;
import dev.langchain4j.mcp.protocol.McpInitializeRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A langchain4j-mcp {@link McpTransport} that starts a stdio MCP server in the sandbox,
 * through {@link IsolatedExecutor#start(ExecutionRequest)}, and speaks newline-delimited
 * JSON-RPC with it over its stdin and stdout, as LangChain4j's own
 * {@code StdioMcpTransport} does with a process it starts unsandboxed. Give it to
 * {@code DefaultMcpClient.builder().transport(...)}; build the request with
 * {@link McpServerRequests#request}.
 * <p>
 * The server starts when the client starts the transport, in the sandbox of the request:
 * no network but what the request's allow-list gives, the executor's filesystem view and
 * limits, a private working directory; it dies with the JVM. A server that cannot start
 * (isolation unavailable in strict mode, a command that does not exist) makes
 * {@link #start} throw that exception, which fails the client's construction. Its stderr
 * is logged at INFO, line by line, under this class's logger. A server that ends its
 * stdout on its own (it exited: a script outside the sandbox's view, a crash) fails each
 * operation still pending, and every later one, with an {@link IllegalStateException}
 * naming the server, its exit code, its last lines of stderr and the likely fix; it is
 * logged once, at WARN, and {@link #checkHealth()} throws it. {@link #close()} fails the
 * operations still pending at once ({@code MCP server 'NAME' was closed}), closes the
 * server's stdin, waits up to two seconds for it to exit, then
 * {@linkplain SandboxedProcess#destroy() destroys} its process tree, and returns when the
 * tree has ended. {@code DefaultMcpClient}'s automatic health check starts a server that
 * ended again, in the sandbox, through {@link #start}, which fails the operations still
 * pending on the server it replaces likewise; {@link #onFailure} is not used, as with
 * {@code StdioMcpTransport}.
 */
public final class SandboxedStdioMcpTransport implements McpTransport {

	private static final Log logger = LogFactory.getLog(SandboxedStdioMcpTransport.class);

	private static final Duration CLOSE_GRACE_PERIOD = Duration.ofSeconds(2);

	private final String name;

	private final IsolatedExecutor executor;

	private final ExecutionRequest request;

	private final Object lock = new Object();

	private @Nullable RunningServer server;

	private @Nullable RuntimeException startFailure;

	private boolean closed;

	/**
	 * Create a transport that starts the given request.
	 * @param name the name of the server, for the log, the threads and the messages
	 * @param executor the executor that starts the server
	 * @param request the server's command, environment and sandbox, without stdin, output
	 * cap or sink (see {@link IsolatedExecutor#start(ExecutionRequest)})
	 */
	public SandboxedStdioMcpTransport(String name, IsolatedExecutor executor, ExecutionRequest request) {
		this.name = Objects.requireNonNull(name, "name must not be null");
		this.executor = Objects.requireNonNull(executor, "executor must not be null");
		this.request = Objects.requireNonNull(request, "request must not be null");
	}

	/**
	 * Return the name of the server.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Return the server's process once the transport has started it.
	 * @return the process of the last start, running or ended, or empty before
	 * {@link #start} or when the last start failed
	 */
	public Optional<SandboxedProcess> process() {
		synchronized (this.lock) {
			return Optional.ofNullable(this.server).map(RunningServer::process);
		}
	}

	/**
	 * Return why the server could not start.
	 * @return the exception that {@link IsolatedExecutor#start(ExecutionRequest)} threw
	 * at the last start, or empty
	 */
	public Optional<RuntimeException> startFailure() {
		synchronized (this.lock) {
			return Optional.ofNullable(this.startFailure);
		}
	}

	/**
	 * Start the server in the sandbox and the daemon threads that read its stdout and
	 * stderr. Called again (the client's reconnection after a failed health check), it
	 * fails the operations still pending on the server of the last start
	 * ({@code MCP server 'NAME' was closed to be started again}), destroys that server if
	 * it still runs and starts a new one.
	 * @throws dev.cavesandbox.NetworkIsolationUnavailableException isolation is
	 * unavailable and the mode is strict; the other exceptions of
	 * {@link IsolatedExecutor#start(ExecutionRequest)} likewise
	 * @throws IllegalStateException the transport is closed
	 */
	@Override
	public void start(McpOperationHandler messageHandler) {
		RunningServer started;
		synchronized (this.lock) {
			if (this.closed) {
				throw new IllegalStateException("The transport of MCP server '" + this.name + "' is closed");
			}
			RunningServer previous = this.server;
			if (previous != null) {
				previous.retire("MCP server '" + this.name + "' was closed to be started again");
				this.server = null;
				if (previous.process().isAlive()) {
					logger.info("MCP server '" + this.name + "' is restarted: its process is destroyed");
					previous.process().destroy();
				}
			}
			try {
				started = new RunningServer(this.name, this.executor.start(this.request), messageHandler);
			}
			catch (RuntimeException ex) {
				this.startFailure = ex;
				throw ex;
			}
			this.startFailure = null;
			this.server = started;
		}
		if (started.process().isolation().networkIsolated()) {
			logger.info("MCP server '" + this.name + "' started in the sandbox: pid " + started.process().pid() + ", "
					+ started.process().isolation());
		}
		else {
			logger.warn("MCP server '" + this.name + "' started WITHOUT network isolation: pid "
					+ started.process().pid() + ", " + started.process().isolation()
					+ " (cave.sandbox.mode is fallback and isolation is unavailable on this host)");
		}
	}

	/**
	 * Return a daemon thread of a server.
	 * @param name the name of the server
	 * @param stream the stream the thread reads
	 * @param task what it runs
	 * @return the thread, {@code cave-sandbox-mcp-NAME-STREAM}, not started
	 */
	static Thread daemon(String name, String stream, Runnable task) {
		Thread thread = new Thread(task, "cave-sandbox-mcp-" + name + "-" + stream);
		thread.setDaemon(true);
		return thread;
	}

	/**
	 * Send the {@code initialize} request, then, once it is answered, the
	 * {@code notifications/initialized} notification.
	 */
	@Override
	public CompletableFuture<JsonNode> initialize(McpInitializeRequest request) {
		return send(request)
			.thenCompose((answer) -> send(new McpInitializationNotification()).thenApply((nothing) -> answer));
	}

	@Override
	public CompletableFuture<JsonNode> executeOperationWithResponse(McpClientMessage request) {
		return send(request);
	}

	@Override
	public CompletableFuture<JsonNode> executeOperationWithResponse(McpCallContext context) {
		return send(context.message());
	}

	@Override
	public void executeOperationWithoutResponse(McpClientMessage request) {
		send(request);
	}

	@Override
	public void executeOperationWithoutResponse(McpCallContext context) {
		send(context.message());
	}

	/**
	 * Write the message as one line of JSON to the server's stdin. A message with an id
	 * completes with the server's response, as the client's handler routes it; one
	 * without completes with {@code null} once written.
	 */
	private CompletableFuture<JsonNode> send(McpClientMessage message) {
		RunningServer current;
		synchronized (this.lock) {
			if (this.startFailure != null) {
				return CompletableFuture.failedFuture(this.startFailure);
			}
			current = this.server;
		}
		if (current == null) {
			return CompletableFuture
				.failedFuture(new IllegalStateException("MCP server '" + this.name + "' is not started"));
		}
		String reason = current.endedReason();
		if (reason != null) {
			return CompletableFuture.failedFuture(new IllegalStateException(reason));
		}
		CompletableFuture<JsonNode> answer = new CompletableFuture<>();
		Long id = message.getId();
		if (id != null) {
			current.handler().startOperation(id, answer);
		}
		try {
			current.write(message);
		}
		catch (IOException ex) {
			// A server that died: wait briefly for the reader of its stdout to say why
			// (at once when it was closed).
			String why = current.awaitEnded();
			answer.completeExceptionally((why != null) ? new IllegalStateException(why, ex) : ex);
			return answer;
		}
		reason = current.endedReason();
		if (reason != null) {
			// It ended, or was closed, between the first check and the registration:
			// nothing answers, and its pending operations may have been failed before
			// this one was registered.
			answer.completeExceptionally(new IllegalStateException(reason));
		}
		else if (id == null) {
			answer.complete(null);
		}
		return answer;
	}

	/**
	 * Throw when the server is not running.
	 * @throws IllegalStateException the server is not started, could not start, or has
	 * ended (the message says why)
	 */
	@Override
	public void checkHealth() {
		RunningServer current;
		synchronized (this.lock) {
			if (this.startFailure != null) {
				throw new IllegalStateException(
						"MCP server '" + this.name + "' could not start: " + this.startFailure.getMessage(),
						this.startFailure);
			}
			current = this.server;
		}
		if (current == null) {
			throw new IllegalStateException("MCP server '" + this.name + "' is not started");
		}
		String reason = current.endedReason();
		if (reason != null) {
			throw new IllegalStateException(reason);
		}
		if (!current.process().isAlive()) {
			throw new IllegalStateException("MCP server '" + this.name + "' is not running (exit code "
					+ current.process().exitCode().orElse(-1) + ")");
		}
	}

	/**
	 * Does nothing: a server that ended is started again only by the client's health
	 * check, as with {@code StdioMcpTransport}.
	 */
	@Override
	public void onFailure(Runnable actionOnFailure) {
	}

	/**
	 * Fail the client's pending operations at once with an {@link IllegalStateException}
	 * saying {@code MCP server 'NAME' was closed}, close the server's stdin, wait up to
	 * two seconds for it to exit, then destroy its process tree; return when the tree has
	 * ended. Later operations fail with the same message. Does nothing before
	 * {@link #start} or a second time.
	 */
	@Override
	public void close() {
		RunningServer current;
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			current = this.server;
		}
		if (current == null) {
			return;
		}
		current.retire("MCP server '" + this.name + "' was closed");
		SandboxedProcess process = current.process();
		try {
			process.stdin().close();
		}
		catch (IOException ex) {
			logger.debug("MCP server '" + this.name + "': closing its stdin failed", ex);
		}
		try {
			if (!process.waitFor(CLOSE_GRACE_PERIOD)) {
				process.destroy();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			process.destroy();
		}
		logger.info("MCP server '" + this.name + "' ended with exit code " + process.exitCode().orElse(-1));
	}

}
