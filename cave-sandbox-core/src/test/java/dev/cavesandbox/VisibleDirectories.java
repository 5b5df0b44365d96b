package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import dev.cavesandbox.internal.workspace.DirectoryTrees;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;

/**
 * A place for test files that a sandbox must see at the same path as the host: outside
 * every default hidden directory. The build's {@code target} directory when the checkout
 * lies outside them, else a directory under the user's {@code ~/.cache} (a checkout under
 * {@code /tmp}, as CI may make, is hidden inside the sandbox). Where the JVM runs as root
 * and that place cannot be passed by other uids (a checkout or a home of mode 0700), a
 * directory under {@code /var/cache} instead: the seccomp mechanism runs a root JVM's
 * commands as a uid of the host, which must reach its working directory by its path.
 * Every directory made here has mode 0711 (passable, not listable). Everything created
 * there is removed when the JVM exits.
 */
public final class VisibleDirectories {

	private static final List<Path> DEFAULT_HIDDEN = List.of(Path.of("/tmp"), Path.of("/var/tmp"), Path.of("/run"),
			Path.of("/var/run"), Path.of("/dev/shm"));

	private static final long NOBODY = 65534;

	private static final Path ROOT = root();

	private VisibleDirectories() {
	}

	/**
	 * Create a fresh directory outside the hidden directories.
	 * @param prefix the start of its name
	 * @return the directory, an absolute real path
	 */
	public static Path create(String prefix) {
		try {
			return passable(Files.createTempDirectory(ROOT, prefix)).toRealPath();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Path root() {
		try {
			Path target = Files.createDirectories(Path.of("target").toAbsolutePath()).toRealPath();
			boolean hidden = DEFAULT_HIDDEN.stream().anyMatch((directory) -> target.startsWith(realPath(directory)));
			Path root = hidden ? Files.createTempDirectory(
					Files.createDirectories(Path.of(System.getProperty("user.home"), ".cache")), "cave-sandbox-tests-")
					: Files.createDirectories(target.resolve("visible"));
			if ("root".equals(System.getProperty("user.name"))
					&& WorkingDirectoryGrant.unpassableAncestor(passable(root).toRealPath(), NOBODY) != null) {
				DirectoryTrees.delete(root);
				root = passable(Files.createTempDirectory(Path.of("/var/cache"), "cave-sandbox-tests-"));
			}
			Path created = root;
			Runtime.getRuntime().addShutdownHook(new Thread(() -> DirectoryTrees.delete(created)));
			return created;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Path passable(Path directory) throws IOException {
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x--x"));
		return directory;
	}

	private static Path realPath(Path path) {
		try {
			return path.toRealPath();
		}
		catch (IOException ex) {
			return path;
		}
	}

}
