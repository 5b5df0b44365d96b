package dev.cavesandbox.internal.egress;

import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress proxy of one execution: an HTTP proxy served on a unix socket, which a
 * bridge inside the sandbox connects each of the command's proxy connections to. It
 * speaks HTTP CONNECT (a raw tunnel after {@code 200 Connection established}) and
 * plain-HTTP forwarding of requests in absolute form ({@code GET http://host/path}), one
 * request per client connection.
 * <p>
 * For each connection it checks, in this order, and before anything is sent anywhere: the
 * requested host and port against the {@link EgressAllowList} (the host as the client
 * named it); the name's addresses, resolved once by the policy's {@link HostResolver} (IP
 * literals are parsed, not resolved); unless private destinations are allowed, that no
 * address is refused by {@link DestinationAddresses} (one refused address refuses them
 * all: a name that answers both a public and a private address is refused). It then
 * connects to the addresses it checked, in order, never resolving the name again. Each
 * decision is logged at DEBUG, recorded ({@link #decisions()}) and passed to the
 * {@link EgressListener}.
 * <p>
 * Requests are framed by hand only as far as the end of their head (at most
 * {@value RequestHead#MAX_SIZE} bytes, else {@code 431}); the head, and a forwarded
 * request's body, are decoded by Netty's HTTP codec. A refused request gets {@code 403}
 * with a line that names the reason, a malformed or unsupported one {@code 400}, a name
 * that does not resolve or a destination that cannot be reached {@code 502}. At most
 * {@value #MAX_CONNECTIONS} connections are served at once; more get {@code 503}.
 * <p>
 * Blocking I/O, with a daemon thread per connection (two while bytes flow both ways),
 * named {@code cave-sandbox-egress-N}. {@link #close()} ends them all.
 */
public final class EgressProxy implements AutoCloseable {

	/** The longest path of a unix socket, in bytes, without its NUL (unix(7)). */
	static final int MAX_SOCKET_PATH = 107;

	/** The most connections served at once by one proxy. */
	static final int MAX_CONNECTIONS = 64;

	/**
	 * The most decisions kept for {@link #decisions()}; later ones are still logged and
	 * told.
	 */
	static final int MAX_DECISIONS = 10_000;

	private static final long CLOSE_WAIT_MILLIS = 5_000;

	private static final Logger logger = LoggerFactory.getLogger(EgressProxy.class);

	private static final AtomicInteger threadNumbers = new AtomicInteger();

	private final Path socketPath;

	private final EgressPolicy policy;

	private final EgressListener listener;

	private final ServerSocketChannel server;

	private final Object lock = new Object();

	private final Set<EgressConnection> connections = new HashSet<>();

	private final Set<Thread> threads = new HashSet<>();

	private final List<EgressDecision> decisions = new ArrayList<>();

	private boolean closed;

	private final Connector connector;

	private EgressProxy(Path socketPath, EgressPolicy policy, EgressListener listener, ServerSocketChannel server,
			Connector connector) {
		this.socketPath = socketPath;
		this.policy = policy;
		this.listener = listener;
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
		if (Files.exists(socketPath, LinkOption.NOFOLLOW_LINKS)) {
			throw new FileAlreadyExistsException(socketPath.toString(), null, "the proxy's socket must be new");
		}
		ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
		boolean bound = false;
		try {
			bind(server, socketPath);
			bound = true;
			Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
		}
		catch (IOException | RuntimeException ex) {
			server.close();
			if (bound) {
				// Only the socket this proxy created: a path that was taken is left
				// alone.
				Files.deleteIfExists(socketPath);
			}
			throw ex;
		}
		EgressProxy proxy = new EgressProxy(socketPath, policy, listener, server, connector);
		proxy.startThread(proxy::accept);
		logger.debug("Egress proxy listening on {}, allowing {}{}", socketPath, policy.allowList(),
				policy.allowPrivateDestinations() ? " (private destinations too)" : "");
		return proxy;
	}

	/**
	 * Bind the server to the path. A unix socket's path holds at most
	 * {@value #MAX_SOCKET_PATH} bytes (unix(7)), which a work directory of some length
	 * and the private directories' names in it exceed: a longer path is bound through a
	 * descriptor of its directory that this JVM holds open for the call, as
	 * {@code /proc/self/fd/N/NAME} (proc(5): the kernel resolves the directory through
	 * the descriptor and creates the socket in it). The descriptor is found by its link
	 * in {@code /proc/self/fd}; that the socket then exists at the path is checked.
	 */
	private static void bind(ServerSocketChannel server, Path socketPath) throws IOException {
		if (socketPath.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_SOCKET_PATH) {
			server.bind(UnixDomainSocketAddress.of(socketPath));
			return;
		}
		Path directory = socketPath.getParent().toRealPath();
		try (DirectoryStream<Path> held = Files.newDirectoryStream(directory);
				DirectoryStream<Path> descriptors = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
			for (Path descriptor : descriptors) {
				Path target;
				try {
					target = Files.readSymbolicLink(descriptor);
				}
				catch (IOException ex) {
					continue;
				}
				if (target.equals(directory)) {
					server.bind(UnixDomainSocketAddress.of(descriptor.resolve(socketPath.getFileName())));
					if (!Files.exists(socketPath, LinkOption.NOFOLLOW_LINKS)) {
						throw new IOException("the egress socket was not created at " + socketPath);
					}
					return;
				}
			}
		}
		throw new IOException("cannot bind the egress socket " + socketPath + ": its path is longer than "
				+ MAX_SOCKET_PATH + " bytes (unix(7)) and no descriptor of its directory was found in /proc/self/fd");
	}

	/**
	 * The unix socket the proxy serves.
	 * @return its path
	 */
	public Path socketPath() {
		return this.socketPath;
	}

	/**
	 * The decisions made so far, in order (the first {@value #MAX_DECISIONS}).
	 * @return a snapshot
	 */
	public List<EgressDecision> decisions() {
		synchronized (this.lock) {
			return List.copyOf(this.decisions);
		}
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
			// Threads are joined by close() until they have terminated, then forgotten
			// here.
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
		logger.debug("Egress {} {}: {}",
				decision.host().isEmpty() ? "request" : decision.host() + ":" + decision.port(),
				decision.allowed() ? "allowed" : "refused (" + decision.reason() + ")", detail);
		synchronized (this.lock) {
			if (this.decisions.size() < MAX_DECISIONS) {
				this.decisions.add(decision);
			}
		}
		try {
			this.listener.decided(decision);
		}
		catch (RuntimeException ex) {
			logger.warn("Egress listener failed on {}", decision, ex);
		}
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
