package dev.cavesandbox.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the command sees of the host's filesystem, shared by the Linux mechanisms: the
 * directories that are replaced by private, empty tmpfs mounts (so that no host unix
 * socket under them can be reached, see unix(7): {@code connect()} to a socket needs its
 * path), and whether the rest of the host's filesystem is mounted read-only. The
 * command's working directory is always visible and writable.
 *
 * @param hiddenDirectories absolute directories without symbolic links, none inside
 * another one and none the root itself; each becomes a private empty tmpfs (mode 1777) in
 * the sandbox
 * @param readOnlyRoot whether every other mount of the host is read-only in the sandbox
 */
public record FilesystemView(List<Path> hiddenDirectories, boolean readOnlyRoot) {

	public FilesystemView {
		hiddenDirectories = List.copyOf(hiddenDirectories);
		for (Path directory : hiddenDirectories) {
			if (!directory.isAbsolute() || !directory.equals(directory.normalize()) || directory.getParent() == null) {
				throw new IllegalArgumentException(
						"a hidden directory must be an absolute, normalized path other than /, but was " + directory);
			}
			for (Path other : hiddenDirectories) {
				if (!other.equals(directory) && directory.startsWith(other)) {
					throw new IllegalArgumentException(
							"hidden directory " + directory + " lies inside hidden directory " + other);
				}
			}
		}
	}

	/**
	 * Return a view that hides the given directories, dropping those that lie inside
	 * another one of them (the outer tmpfs hides them already) and duplicates.
	 * @param directories absolute, normalized directories without symbolic links
	 * @param readOnlyRoot whether the rest of the host is read-only
	 * @return the view
	 */
	public static FilesystemView of(List<Path> directories, boolean readOnlyRoot) {
		List<Path> kept = new ArrayList<>();
		for (Path directory : directories) {
			Objects.requireNonNull(directory, "directory must not be null");
			boolean covered = directories.stream()
				.anyMatch((other) -> !other.equals(directory) && directory.startsWith(other));
			if (!covered && !kept.contains(directory)) {
				kept.add(directory);
			}
		}
		return new FilesystemView(kept, readOnlyRoot);
	}

	/**
	 * Return whether the given directory is hidden, or lies inside a hidden directory, so
	 * that it must be mounted again to stay visible.
	 * @param directory an absolute directory
	 * @return whether a hidden directory covers it
	 */
	public boolean covers(Path directory) {
		return this.hiddenDirectories.stream().anyMatch(directory::startsWith);
	}

}
