package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.internal.egress.EgressProxy;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * The egress of one execution with an allow-list: a private directory of its own, in the
 * home of the private directories (owner-only, and hidden in every sandbox, so that
 * neither another execution nor another local user can reach the socket), opened to
 * {@code 0711} (a command user of another uid passes it: the bridge reaches it through
 * {@code outer}'s descriptor, not through the home), that holds the {@link EgressProxy}'s
 * unix socket ({@value LauncherContract#EGRESS_SOCKET}); and the {@link Launcher.Egress
 * bridge} that the launcher starts inside the sandbox. The variables that point the
 * command's HTTP clients at it are {@code ChildEnvironment}'s.
 */
public final class EgressSession implements AutoCloseable {

	private final Path directory;

	private final EgressProxy proxy;

	private final Consumer<Path> release;

	private final AtomicBoolean closed = new AtomicBoolean();

	private EgressSession(Path directory, EgressProxy proxy, Consumer<Path> release) {
		this.directory = directory;
		this.proxy = proxy;
		this.release = release;
	}

	/**
	 * Start the proxy in a private directory.
	 * @param directory a new private directory
	 * @param release gives the directory back (its tree is removed) when the session ends
	 * or fails to start
	 * @param policy what the proxy allows
	 * @param listener told of each decision
	 * @return the session
	 * @throws IOException if the socket cannot be created
	 */
	public static EgressSession start(Path directory, Consumer<Path> release, EgressPolicy policy,
			EgressListener listener) throws IOException {
		try {
			Path socket = directory.resolve(LauncherContract.EGRESS_SOCKET);
			Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x--x"));
			return new EgressSession(directory, EgressProxy.start(socket, policy, listener), release);
		}
		catch (IOException | RuntimeException ex) {
			release.accept(directory);
			throw ex;
		}
	}

	/**
	 * Return the launcher's bridge to this session's proxy.
	 * @return the bridge on {@code 127.0.0.1:}{@value SandboxSettings.Egress#PROXY_PORT}
	 */
	public Launcher.Egress bridge() {
		return new Launcher.Egress(this.directory, SandboxSettings.Egress.PROXY_PORT);
	}

	/**
	 * Return what the proxy decided so far.
	 * @return the decisions, in order
	 */
	public List<EgressDecision> decisions() {
		return this.proxy.decisions();
	}

	/**
	 * Stop the proxy (every connection it still relays ends) and give the directory back,
	 * once: a second call does nothing (a directory given back twice would be handed to
	 * two executions).
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		try {
			this.proxy.close();
		}
		finally {
			this.release.accept(this.directory);
		}
	}

}
