package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFilePermissions;

import dev.cavesandbox.internal.workspace.DescriptorPath;

/**
 * The unix socket an {@link EgressProxy} serves: bound at a new path and made readable
 * and writable by all (mode 0666), since the sandbox's user may be another one (its
 * directory protects it). A path longer than {@value #MAX_SOCKET_PATH} bytes (unix(7)) is
 * bound through a descriptor of its directory.
 */
final class ProxySocket {

	/** The longest path of a unix socket, in bytes, without its NUL (unix(7)). */
	static final int MAX_SOCKET_PATH = 107;

	private ProxySocket() {
	}

	/**
	 * Bind a server to a new unix socket.
	 * @param socketPath where to bind; it must not exist
	 * @return the bound server
	 * @throws FileAlreadyExistsException when the path exists (it is left alone)
	 * @throws IOException when the socket cannot be bound
	 */
	static ServerSocketChannel bind(Path socketPath) throws IOException {
		if (Files.exists(socketPath, LinkOption.NOFOLLOW_LINKS)) {
			throw new FileAlreadyExistsException(socketPath.toString(), null, "the proxy's socket must be new");
		}
		ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
		boolean bound = false;
		try {
			bind(server, socketPath);
			bound = true;
			Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
			return server;
		}
		catch (IOException | RuntimeException ex) {
			server.close();
			if (bound) {
				// Only the socket this proxy created: a path that was taken is
				// left alone.
				Files.deleteIfExists(socketPath);
			}
			throw ex;
		}
	}

	/**
	 * Bind the server to the path. A work directory of some length and the private
	 * directories' names in it exceed {@value #MAX_SOCKET_PATH} bytes: a longer path is
	 * bound through a descriptor of its directory that this JVM holds open for the call,
	 * as {@code /proc/self/fd/N/NAME} (proc(5): the kernel resolves the directory through
	 * the descriptor and creates the socket in it), N found by {@link DescriptorPath} (a
	 * descriptor of this call's own, not another of the same directory that its holder
	 * may close meanwhile); that the socket then exists at the path is checked.
	 */
	private static void bind(ServerSocketChannel server, Path socketPath) throws IOException {
		if (socketPath.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_SOCKET_PATH) {
			server.bind(UnixDomainSocketAddress.of(socketPath));
			return;
		}
		Path directory = socketPath.getParent().toRealPath();
		try (DirectoryStream<Path> held = Files.newDirectoryStream(directory)) {
			if (!(held instanceof SecureDirectoryStream<Path> secure)) {
				throw new IOException("cannot bind the egress socket " + socketPath + ": its path is longer than "
						+ MAX_SOCKET_PATH + " bytes (unix(7)) and its directory cannot be held open on this platform");
			}
			try (DescriptorPath through = DescriptorPath.open(secure)) {
				server.bind(UnixDomainSocketAddress.of(through.path().resolve(socketPath.getFileName())));
			}
		}
		if (!Files.exists(socketPath, LinkOption.NOFOLLOW_LINKS)) {
			throw new IOException("the egress socket was not created at " + socketPath);
		}
	}

}
