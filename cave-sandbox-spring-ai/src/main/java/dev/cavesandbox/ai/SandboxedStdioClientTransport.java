package dev.cavesandbox.ai;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
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
 * with a JSON-RPC error ({@code -32000}), and fails every later message with an
 * {@link McpError}, naming the server, its exit code, its last lines of stderr and the
 * likely fix; it is logged once, at WARN. {@link #closeGracefully()} and {@link #close()}
 * close the server's stdin, wait briefly for it to exit, then
 * {@linkplain SandboxedProcess#destroy() destroy} its process tree; {@link #close()}
 * returns when it is done.
 */
public final class SandboxedStdioClientTransport implements McpClientTransport {

	private static final Log logger = LogFactory.getLog(SandboxedStdioClientTransport.class);

	/** Variables that {@link ServerParameters} copies from this JVM's environment. */
	private static final List<String> INHERITED_VARIABLES = List.of("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
			"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT",
			"TEMP", "USERNAME", "USERPROFILE");

	private static final Duration CLOSE_GRACE_PERIOD = Duration.ofSeconds(2);

	private final String name;

	private final IsolatedExecutor executor;

	private final ExecutionRequest request;

	private final McpJsonMapper jsonMapper;

	private final Object lock = new Object();

	private @Nullable SandboxedProcess process;

	private @Nullable RuntimeException startFailure;

	private @Nullable MessageWriter writer;

	private volatile boolean closing;

	private final AtomicBoolean stopping = new AtomicBoolean();

	private final CompletableFuture<Void> stopped = new CompletableFuture<>();

	private final PendingRequests pending = new PendingRequests();

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
			SandboxedProcess started = start();
			logger.info("MCP server '" + this.name + "' started in the sandbox: pid " + started.pid() + ", "
					+ started.isolation());
			StderrTail stderr = new StderrTail(this.name, started.stderr(), this::closing);
			thread(this.name, "stdout", new MessageReader(this.name, started, this.jsonMapper, handler, this.pending,
					stderr, this::closing))
				.start();
			stderr.start();
		});
	}

	private SandboxedProcess start() {
		synchronized (this.lock) {
			if (this.process != null || this.startFailure != null) {
				throw new IllegalStateException("MCP server '" + this.name + "' was already started");
			}
			SandboxedProcess started;
			try {
				started = this.executor.start(this.request);
			}
			catch (RuntimeException ex) {
				this.startFailure = ex;
				throw ex;
			}
			this.process = started;
			this.writer = new MessageWriter(this.name, started, this.jsonMapper);
			return started;
		}
	}

	/**
	 * Return a daemon thread of a connection.
	 * @param name the name of the connection
	 * @param stream the stream the thread serves: {@code stdin}, {@code stdout} or
	 * {@code stderr}
	 * @param task what it runs
	 * @return the thread, {@code cave-sandbox-mcp-NAME-STREAM}, not started
	 */
	static Thread thread(String name, String stream, Runnable task) {
		Thread thread = new Thread(task, "cave-sandbox-mcp-" + name + "-" + stream);
		thread.setDaemon(true);
		return thread;
	}

	private boolean closing() {
		return this.closing;
	}

	/**
	 * Write the message as one line of JSON to the server's stdin, on a thread of this
	 * transport (in the order of the calls). Once the server has ended its stdout on its
	 * own, the returned {@link Mono} fails at once with an {@link McpError} that says
	 * why.
	 */
	@Override
	public Mono<Void> sendMessage(JSONRPCMessage message) {
		McpError ended = this.pending.endedError();
		if (ended != null) {
			return Mono.error(ended);
		}
		MessageWriter stdinWriter;
		synchronized (this.lock) {
			if (this.startFailure != null) {
				return Mono.error(this.startFailure);
			}
			if (this.process == null || this.writer == null) {
				return Mono.error(new IllegalStateException("MCP server '" + this.name + "' is not started"));
			}
			stdinWriter = this.writer;
		}
		Object id = (message instanceof JSONRPCRequest request) ? request.id() : null;
		if (id != null) {
			ended = this.pending.track(id, ((JSONRPCRequest) message).method());
			if (ended != null) {
				return Mono.error(ended);
			}
		}
		return stdinWriter.write(message).onErrorMap((ex) -> {
			if (id != null) {
				this.pending.remove(id);
			}
			// Wait for the reader of stdout: it waits for the exit code, then the stderr.
			McpError why = this.closing ? null : this.pending.awaitEnd(MessageReader.EXIT_WAIT.multipliedBy(3));
			return (why != null) ? why : ex;
		});
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
		MessageWriter stdinWriter;
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
