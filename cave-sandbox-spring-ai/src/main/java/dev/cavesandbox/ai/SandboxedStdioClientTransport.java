package dev.cavesandbox.ai;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxedProcess;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.McpJsonMapperSupplier;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCResponse.JSONRPCError;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An MCP client transport that starts a stdio MCP server in the sandbox, through
 * {@link IsolatedExecutor#start(ExecutionRequest)}, and speaks newline-delimited JSON-RPC
 * with it over its stdin and stdout, as the MCP SDK's {@code StdioClientTransport} does
 * with a process of its own. The server's stderr is logged, line by line, under this
 * class's logger with the connection's name.
 * <p>
 * The server starts when the client connects, in the sandbox of the request: no network
 * but what the request's allow-list gives, the executor's filesystem view and limits, a
 * private working directory; it dies with the JVM. A server that cannot start (isolation
 * unavailable in strict mode, a command that does not exist) fails the client's first
 * request with that exception. A server that ends its stdout on its own (it exited: a
 * script outside the sandbox's view, a crash) answers each request still pending at once
 * with a JSON-RPC error, and fails every later message, naming the server, its exit code,
 * its last lines of stderr and the likely fix; it is logged once, at WARN.
 * {@link #closeGracefully()} and {@link #close()} close the server's stdin, wait briefly
 * for it to exit, then {@linkplain SandboxedProcess#destroy() destroy} its process tree;
 * {@link #close()} returns when it is done.
 */
public final class SandboxedStdioClientTransport implements McpClientTransport {

	private static final Log logger = LogFactory.getLog(SandboxedStdioClientTransport.class);

	/** Variables that {@link ServerParameters} copies from this JVM's environment. */
	private static final List<String> INHERITED_VARIABLES = List.of("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
			"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT",
			"TEMP", "USERNAME", "USERPROFILE");

	private static final Duration CLOSE_GRACE_PERIOD = Duration.ofSeconds(2);

	/**
	 * How long the reader of stdout waits for an exited server's exit code and stderr.
	 */
	private static final Duration EXIT_WAIT = Duration.ofSeconds(2);

	/**
	 * The JSON-RPC error code of the answers to requests the ended server left pending.
	 */
	static final int SERVER_ENDED = -32000;

	private static final int STDERR_LINES = 5;

	private static final int STDERR_LINE_LENGTH = 300;

	private final String name;

	private final IsolatedExecutor executor;

	private final ExecutionRequest request;

	private final McpJsonMapper jsonMapper;

	private final Object lock = new Object();

	private @Nullable SandboxedProcess process;

	private @Nullable RuntimeException startFailure;

	private @Nullable Scheduler writer;

	private @Nullable Thread stderrReader;

	private volatile boolean closing;

	private final AtomicBoolean stopping = new AtomicBoolean();

	private final CompletableFuture<Void> stopped = new CompletableFuture<>();

	/** The requests sent and not answered yet: their id and method. */
	private final Map<Object, String> pending = new ConcurrentHashMap<>();

	/** The last lines of the server's stderr, each truncated. */
	private final Deque<String> lastStderrLines = new ArrayDeque<>();

	/** Why the server can take no more messages, once its stdout has ended on its own. */
	private final CompletableFuture<String> ended = new CompletableFuture<>();

	/**
	 * Create a transport that starts the given request.
	 * @param name the name of the connection, for the log and the threads
	 * @param executor the executor that starts the server
	 * @param request the server's command, environment and sandbox
	 * @param jsonMapper the mapper of JSON-RPC messages
	 */
	public SandboxedStdioClientTransport(String name, IsolatedExecutor executor, ExecutionRequest request,
			McpJsonMapper jsonMapper) {
		this.name = Objects.requireNonNull(name, "name must not be null");
		this.executor = Objects.requireNonNull(executor, "executor must not be null");
		this.request = Objects.requireNonNull(request, "request must not be null");
		this.jsonMapper = Objects.requireNonNull(jsonMapper, "jsonMapper must not be null");
	}

	/**
	 * Return the MCP SDK's default JSON mapper: the first {@link McpJsonMapperSupplier}
	 * service on the class path ({@code mcp-json-jackson2} with Spring AI 1.1,
	 * {@code mcp-json-jackson3} with Spring AI 2.0). The SDK's own accessor differs
	 * between its lines ({@code McpJsonMapper.getDefault()} in 0.x,
	 * {@code McpJsonDefaults.getMapper()} in 2.x); this service interface is the same in
	 * both.
	 * @return a new mapper
	 * @throws IllegalStateException no supplier is on the class path
	 */
	public static McpJsonMapper defaultJsonMapper() {
		return ServiceLoader.load(McpJsonMapperSupplier.class)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No " + McpJsonMapperSupplier.class.getName()
					+ " on the class path: add the MCP SDK's mcp-json-jackson2 or mcp-json-jackson3"))
			.get();
	}

	/**
	 * Return the request that starts the server described by the parameters of an MCP
	 * stdio connection: its command and arguments, and the variables of its environment
	 * that the connection sets. The variables that {@link ServerParameters} copies from
	 * this JVM's environment by default ({@code HOME}, {@code PATH} and the like) are
	 * left out, unless the connection sets another value: the sandbox's own baseline sets
	 * them.
	 * @param parameters the connection's parameters
	 * @param allowedHosts the hosts the server may reach through the egress proxy, empty
	 * for none
	 * @param readablePaths host paths the server sees read-only besides the executor's
	 * view
	 * @return the request, without a timeout
	 */
	public static ExecutionRequest request(ServerParameters parameters, List<String> allowedHosts,
			List<Path> readablePaths) {
		List<String> argv = new ArrayList<>();
		argv.add(parameters.getCommand());
		argv.addAll(parameters.getArgs());
		ExecutionRequest.Builder builder = ExecutionRequest.builder(argv)
			.allowedHosts(allowedHosts.toArray(String[]::new))
			.readablePaths(readablePaths.toArray(Path[]::new));
		Map<String, String> jvm = System.getenv();
		parameters.getEnv().forEach((variable, value) -> {
			boolean inherited = INHERITED_VARIABLES.contains(variable) && value.equals(jvm.get(variable));
			if (!inherited) {
				builder.environment(variable, value);
			}
		});
		return builder.build();
	}

	/**
	 * Return the name of the connection.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Return the server's process once the client has connected.
	 * @return the process, running or ended, or empty before the client connected or when
	 * the server could not start
	 */
	public Optional<SandboxedProcess> process() {
		synchronized (this.lock) {
			return Optional.ofNullable(this.process);
		}
	}

	/**
	 * Return why the server could not start.
	 * @return the exception that {@link IsolatedExecutor#start(ExecutionRequest)} threw,
	 * or empty
	 */
	public Optional<RuntimeException> startFailure() {
		synchronized (this.lock) {
			return Optional.ofNullable(this.startFailure);
		}
	}

	/**
	 * Start the server in the sandbox and the threads that read its stdout and stderr.
	 * The returned {@link Mono} starts it on the subscribing thread; when it cannot
	 * start, the {@link Mono} fails and so does every message sent afterwards.
	 */
	@Override
	public Mono<Void> connect(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
		return Mono.fromRunnable(() -> {
			SandboxedProcess started;
			synchronized (this.lock) {
				if (this.process != null || this.startFailure != null) {
					throw new IllegalStateException("MCP server '" + this.name + "' was already started");
				}
				try {
					started = this.executor.start(this.request);
				}
				catch (RuntimeException ex) {
					this.startFailure = ex;
					throw ex;
				}
				this.process = started;
				this.writer = Schedulers.fromExecutorService(
						Executors.newSingleThreadExecutor((task) -> thread(task, "stdin")), "cave-sandbox-mcp-stdin");
			}
			logger.info("MCP server '" + this.name + "' started in the sandbox: pid " + started.pid() + ", "
					+ started.isolation());
			Thread stderr = thread(() -> logLines(started.stderr()), "stderr");
			synchronized (this.lock) {
				this.stderrReader = stderr;
			}
			thread(() -> readMessages(started, handler), "stdout").start();
			stderr.start();
		});
	}

	private Thread thread(Runnable task, String stream) {
		Thread thread = new Thread(task, "cave-sandbox-mcp-" + this.name + "-" + stream);
		thread.setDaemon(true);
		return thread;
	}

	private void readMessages(SandboxedProcess server, Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(server.stdout(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				if (line.isBlank()) {
					continue;
				}
				JSONRPCMessage message;
				try {
					message = McpSchema.deserializeJsonRpcMessage(this.jsonMapper, line);
				}
				catch (IOException | RuntimeException ex) {
					logger.warn("MCP server '" + this.name + "' wrote a line that is no JSON-RPC message: " + line, ex);
					continue;
				}
				if (message instanceof JSONRPCResponse response && response.id() != null) {
					this.pending.remove(response.id());
				}
				handle(handler, message);
			}
		}
		catch (IOException ex) {
			if (!this.closing) {
				logger.debug("MCP server '" + this.name + "': reading its stdout failed", ex);
			}
		}
		if (!this.closing) {
			serverEnded(server, handler);
		}
	}

	private void handle(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler, JSONRPCMessage message) {
		handler.apply(Mono.just(message))
			.subscribe(null, (error) -> logger
				.warn("MCP server '" + this.name + "': handling a message failed: " + error.getMessage(), error));
	}

	/**
	 * The server ended its stdout on its own: say why once, answer the requests it left
	 * pending with that, and fail the messages sent from now on.
	 */
	private void serverEnded(SandboxedProcess server, Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
		String exitCode = "still running";
		try {
			if (server.waitFor(EXIT_WAIT)) {
				exitCode = "exit code " + server.exitCode().orElse(-1);
			}
			Thread stderr;
			synchronized (this.lock) {
				stderr = this.stderrReader;
			}
			if (stderr != null) {
				stderr.join(EXIT_WAIT.toMillis());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.closing) {
			return;
		}
		List<String> stderrLines;
		synchronized (this.lastStderrLines) {
			stderrLines = List.copyOf(this.lastStderrLines);
		}
		String reason = "MCP server '" + this.name + "' ended its stdout (" + exitCode + ") and takes no more requests"
				+ (stderrLines.isEmpty() ? "; it wrote nothing to stderr"
						: "; the last lines of its stderr: " + String.join(" | ", stderrLines))
				+ ". If it could not start: a program or script outside the sandbox's view needs cave.sandbox.ai.mcp."
				+ this.name + ".readable-paths (a file or a directory not under /tmp or /run); the command must be "
				+ "on the sandbox's PATH";
		this.ended.complete(reason);
		logger.warn(reason);
		for (Object id : List.copyOf(this.pending.keySet())) {
			answerWithError(handler, id, reason);
		}
	}

	private void answerWithError(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler, Object id,
			String reason) {
		if (this.pending.remove(id) != null) {
			handle(handler, new JSONRPCResponse(McpSchema.JSONRPC_VERSION, id, null,
					new JSONRPCError(SERVER_ENDED, reason, null)));
		}
	}

	private static McpError error(String reason) {
		return new McpError(new JSONRPCError(SERVER_ENDED, reason, null));
	}

	private void logLines(InputStream stderr) {
		try (BufferedReader reader = new BufferedReader(new InputStreamReader(stderr, StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				logger.info("MCP server '" + this.name + "' stderr: " + line);
				synchronized (this.lastStderrLines) {
					if (this.lastStderrLines.size() == STDERR_LINES) {
						this.lastStderrLines.removeFirst();
					}
					this.lastStderrLines.addLast((line.length() > STDERR_LINE_LENGTH)
							? line.substring(0, STDERR_LINE_LENGTH) + "..." : line);
				}
			}
		}
		catch (IOException ex) {
			if (!this.closing) {
				logger.debug("MCP server '" + this.name + "': reading its stderr failed", ex);
			}
		}
	}

	/**
	 * Write the message as one line of JSON to the server's stdin, on a thread of this
	 * transport (in the order of the calls). Once the server has ended its stdout on its
	 * own, the returned {@link Mono} fails at once with an {@link McpError} that says
	 * why.
	 */
	@Override
	public Mono<Void> sendMessage(JSONRPCMessage message) {
		String reason = this.ended.getNow(null);
		if (reason != null) {
			return Mono.error(error(reason));
		}
		SandboxedProcess target;
		Scheduler stdinWriter;
		synchronized (this.lock) {
			if (this.startFailure != null) {
				return Mono.error(this.startFailure);
			}
			if (this.process == null || this.writer == null) {
				return Mono.error(new IllegalStateException("MCP server '" + this.name + "' is not started"));
			}
			target = this.process;
			stdinWriter = this.writer;
		}
		Object id = (message instanceof JSONRPCRequest request) ? request.id() : null;
		if (id != null) {
			this.pending.put(id, ((JSONRPCRequest) message).method());
			reason = this.ended.getNow(null);
			if (reason != null && this.pending.remove(id) != null) {
				// The server ended between the first check and now: nothing answers it.
				return Mono.error(error(reason));
			}
		}
		return Mono.<Void>fromRunnable(() -> write(target.stdin(), message))
			.subscribeOn(stdinWriter)
			.onErrorMap((ex) -> {
				if (id != null) {
					this.pending.remove(id);
				}
				String why = this.closing ? null : awaitEnd();
				return (why != null) ? error(why) : ex;
			});
	}

	/**
	 * Wait briefly for the reader of stdout to see the end of a server that a write
	 * failed on, and return why it ended.
	 */
	private @Nullable String awaitEnd() {
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

	/**
	 * Close the server's stdin, wait briefly for it to exit, then destroy its process
	 * tree; on a thread of Reactor's bounded elastic scheduler.
	 */
	@Override
	public Mono<Void> closeGracefully() {
		return Mono.<Void>fromRunnable(this::stop).subscribeOn(Schedulers.boundedElastic());
	}

	/**
	 * Close the server's stdin, wait briefly for it to exit, then destroy its process
	 * tree, and return when it is done: unlike the MCP SDK's default, which only
	 * subscribes to {@link #closeGracefully()}, the server is stopped before whatever
	 * closes next (its executor) can kill it.
	 */
	@Override
	public void close() {
		stop();
	}

	private void stop() {
		this.closing = true;
		if (!this.stopping.compareAndSet(false, true)) {
			awaitStopped();
			return;
		}
		try {
			stopServer();
		}
		finally {
			this.stopped.complete(null);
		}
	}

	/** Wait for the stop that another thread began. */
	private void awaitStopped() {
		try {
			this.stopped.get(CLOSE_GRACE_PERIOD.toMillis() * 5, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("MCP server '" + this.name + "': waiting for its stop failed", ex);
		}
	}

	private void stopServer() {
		SandboxedProcess target;
		Scheduler stdinWriter;
		synchronized (this.lock) {
			target = this.process;
			stdinWriter = this.writer;
		}
		if (target == null) {
			return;
		}
		if (stdinWriter != null) {
			stdinWriter.dispose();
		}
		try {
			target.stdin().close();
		}
		catch (IOException ex) {
			logger.debug("MCP server '" + this.name + "': closing its stdin failed", ex);
		}
		try {
			if (!target.waitFor(CLOSE_GRACE_PERIOD)) {
				target.destroy();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			target.destroy();
		}
		logger.info("MCP server '" + this.name + "' ended with exit code " + target.exitCode().orElse(-1));
	}

	@Override
	public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
		return this.jsonMapper.convertValue(data, typeRef);
	}

}
