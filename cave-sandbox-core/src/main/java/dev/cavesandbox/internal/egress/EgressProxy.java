package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress proxy of one execution: an HTTP proxy served on a unix socket
 * ({@link ProxySocket}), which a bridge inside the sandbox connects each of the command's
 * proxy connections to. It speaks HTTP CONNECT (a raw tunnel after
 * {@code 200 Connection established}) and plain-HTTP forwarding of requests in absolute
 * form ({@code GET http://host/path}), one request per client connection
 * ({@link EgressConnection}).
 * <p>
 * Each target is checked before anything is sent anywhere ({@link DestinationCheck}: the
 * allow-list, the name resolved once, no private destination) and the proxy connects to
 * the addresses it checked. Each decision is logged at DEBUG, recorded
 * ({@link #decisions()}) and passed to the {@link EgressListener}.
 * <p>
 * Responses: {@code 403} for a refused target, with a line that names the reason;
 * {@code 400} for a malformed or unsupported request; {@code 431} for a head over
 * {@value RequestHead#MAX_SIZE} bytes; {@code 502} for a name that does not resolve or a
 * destination that cannot be reached; {@code 503} beyond {@value #MAX_CONNECTIONS}
 * connections at once.
 * <p>
 * Blocking I/O, with a daemon thread per connection (two while bytes flow both ways),
 * named {@code cave-sandbox-egress-N}. {@link #close()} ends them all.
 */
public final class EgressProxy implements AutoCloseable {

	/** The most connections served at once by one proxy. */
	static final int MAX_CONNECTIONS = 64;

	private static final long CLOSE_WAIT_MILLIS = 5_000;

	private static final Logger logger = LoggerFactory.getLogger(EgressProxy.class);

	private static final AtomicInteger threadNumbers = new AtomicInteger();

	private final Path socketPath;

	private final EgressPolicy policy;

	private final DecisionLog decisions;

	private final ServerSocketChannel server;

	private final Object lock = new Object();

	private final Set<EgressConnection> connections = new HashSet<>();

	private final Set<Thread> threads = new HashSet<>();

	private boolean closed;

	private final Connector connector;

	private EgressProxy(Path socketPath, EgressPolicy policy, EgressListener listener, ServerSocketChannel server,
			Connector connector) {
		this.socketPath = socketPath;
		this.policy = policy;
		this.decisions = new DecisionLog(listener);
		this.server = server;
		this.connector = connector;
	}

	/**
	 * How the proxy opens an upstream connection to an address it checked. Tests replace
	 * it with one that refuses every address but loopback, so that a check that a change
	 * broke cannot send anything to another address.
	 */
	interface Connector {

		/** A plain connect(2). */
		Connector DIRECT = (channel, address, timeoutMillis) -> channel.socket().connect(address, timeoutMillis);

		void connect(SocketChannel channel, InetSocketAddress address, int timeoutMillis) throws IOException;

	}

	/**
	 * Bind a proxy to a new unix socket and start accepting.
	 * @param socketPath where to bind; it must not exist. The socket is made readable and
	 * writable by all (mode 0666), since the sandbox's user may be another one: protect
	 * it by its directory
	 * @param policy what the proxy lets through
	 * @param listener told of every decision
	 * @return the running proxy
	 * @throws IOException when the socket cannot be bound
	 */
	public static EgressProxy start(Path socketPath, EgressPolicy policy, EgressListener listener) throws IOException {
		return start(socketPath, policy, listener, Connector.DIRECT);
	}

	static EgressProxy start(Path socketPath, EgressPolicy policy, EgressListener listener, Connector connector)
			throws IOException {
		Objects.requireNonNull(socketPath, "socketPath");
		Objects.requireNonNull(policy, "policy");
		Objects.requireNonNull(listener, "listener");
		ServerSocketChannel server = ProxySocket.bind(socketPath);
		EgressProxy proxy = new EgressProxy(socketPath, policy, listener, server, connector);
		proxy.startThread(proxy::accept);
		logger.debug("Egress proxy listening on {}, allowing {}{}", socketPath, policy.allowList(),
				policy.allowPrivateDestinations() ? " (private destinations too)" : "");
		return proxy;
	}

	/**
	 * The unix socket the proxy serves.
	 * @return its path
	 */
	public Path socketPath() {
		return this.socketPath;
	}

	/**
	 * The decisions made so far, in order (the first {@value DecisionLog#MAX_DECISIONS}).
	 * @return a snapshot
	 */
	public List<EgressDecision> decisions() {
		return this.decisions.decisions();
	}

	/**
	 * Stop accepting, close every client and upstream connection, wait for the proxy's
	 * threads (at most a few seconds) and delete the socket. Idempotent.
	 */
	@Override
	public void close() {
		List<EgressConnection> open;
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			open = new ArrayList<>(this.connections);
		}
		closeQuietly(this.server);
		open.forEach(EgressConnection::abort);
		awaitThreads();
		try {
			Files.deleteIfExists(this.socketPath);
		}
		catch (IOException ex) {
			logger.warn("Could not delete the egress proxy's socket {}: {}", this.socketPath, ex.toString());
		}
	}

	private void awaitThreads() {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
		while (true) {
			List<Thread> running;
			synchronized (this.lock) {
				running = new ArrayList<>(this.threads);
			}
			running.remove(Thread.currentThread());
			running.removeIf((thread) -> !thread.isAlive());
			if (running.isEmpty()) {
				return;
			}
			long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
			if (left <= 0) {
				logger.warn("Egress proxy threads still running after close: {}", running);
				return;
			}
			try {
				Thread thread = running.get(0);
				thread.join(left);
				synchronized (this.lock) {
					if (!thread.isAlive()) {
						this.threads.remove(thread);
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private void accept() {
		while (true) {
			SocketChannel client;
			try {
				client = this.server.accept();
			}
			catch (ClosedChannelException ex) {
				return;
			}
			catch (IOException ex) {
				if (isClosed()) {
					return;
				}
				logger.warn("Egress proxy on {} could not accept a connection: {}", this.socketPath, ex.toString());
				pause();
				continue;
			}
			serve(client);
		}
	}

	private void serve(SocketChannel client) {
		EgressConnection connection = new EgressConnection(this, client);
		boolean full;
		synchronized (this.lock) {
			if (this.closed) {
				closeQuietly(client);
				return;
			}
			full = this.connections.size() >= MAX_CONNECTIONS;
			if (!full) {
				this.connections.add(connection);
			}
		}
		if (full) {
			logger.debug("Egress proxy on {} refused a connection: {} are open", this.socketPath, MAX_CONNECTIONS);
			connection.refuseBusy();
			return;
		}
		if (startThread(connection::run) == null) {
			connection.abort();
			ended(connection);
		}
	}

	/**
	 * Start a daemon thread of this proxy, unless the proxy is closed.
	 * @param task what it runs
	 * @return the thread, or {@code null} when the proxy is closed
	 */
	@Nullable Thread startThread(Runnable task) {
		Thread thread = new Thread(task, "cave-sandbox-egress-" + threadNumbers.incrementAndGet());
		thread.setDaemon(true);
		synchronized (this.lock) {
			if (this.closed) {
				return null;
			}
			// Threads are joined by close() until they have terminated, then
			// forgotten here.
			this.threads.removeIf((started) -> !started.isAlive());
			this.threads.add(thread);
			thread.start();
		}
		return thread;
	}

	/**
	 * A connection has ended.
	 * @param connection the connection
	 */
	void ended(EgressConnection connection) {
		synchronized (this.lock) {
			this.connections.remove(connection);
		}
	}

	boolean isClosed() {
		synchronized (this.lock) {
			return this.closed;
		}
	}

	EgressPolicy policy() {
		return this.policy;
	}

	Connector connector() {
		return this.connector;
	}

	/**
	 * Log, record and tell a decision.
	 * @param decision the decision
	 * @param detail what the log line adds (the refusal's reason, the address)
	 */
	void decided(EgressDecision decision, String detail) {
		this.decisions.decided(decision, detail);
	}

	private static void pause() {
		try {
			Thread.sleep(100);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	static void closeQuietly(@Nullable AutoCloseable closeable) {
		if (closeable != null) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// Closing on the way out: nothing left to do about it.
			}
		}
	}

}
