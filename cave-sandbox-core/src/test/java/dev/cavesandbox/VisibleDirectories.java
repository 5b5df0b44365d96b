package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A place for test files that a sandbox must see at the same path as the host: outside
 * every default hidden directory. The build's {@code target} directory when the checkout
 * lies outside them, else a directory under the user's {@code ~/.cache} (a checkout under
 * {@code /tmp}, as CI may make, is hidden inside the sandbox). Everything created there
 * is removed when the JVM exits.
 */
final class VisibleDirectories {

	private static final List<Path> DEFAULT_HIDDEN = List.of(Path.of("/tmp"), Path.of("/var/tmp"), Path.of("/run"),
			Path.of("/var/run"), Path.of("/dev/shm"));

	private static final Path ROOT = root();

	private VisibleDirectories() {
	}

	/**
	 * Create a fresh directory outside the hidden directories.
	 * @param prefix the start of its name
	 * @return the directory, an absolute real path
	 */
	static Path create(String prefix) {
		try {
			return Files.createTempDirectory(ROOT, prefix).toRealPath();
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
			Runtime.getRuntime().addShutdownHook(new Thread(() -> DirectoryTrees.delete(root)));
			return root;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
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
