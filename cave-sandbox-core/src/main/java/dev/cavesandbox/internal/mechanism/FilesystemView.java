package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * What the command sees of the host's filesystem, shared by the Linux mechanisms. A pure
 * value: every path in it was resolved on the host before (no symbolic link in any
 * component, existing), so the command-line builders never look at the host.
 * <p>
 * Two kinds of view:
 * <ul>
 * <li>{@linkplain Kind#HOST host}: the host's whole filesystem, read-only unless
 * {@code readOnlyRoot} is false, with the hidden directories replaced by private, empty
 * tmpfs mounts (so that no host unix socket under them can be reached, see unix(7):
 * {@code connect()} to a socket needs its path).</li>
 * <li>{@linkplain Kind#SYSTEM system}: nothing of the host but the system directories
 * (read-only, each secret path in them masked: a file by an empty one, a directory by an
 * empty read-only directory), the system links (such as {@code /bin -> usr/bin} on a
 * merged-{@code /usr} system), a new {@code /dev} and {@code /proc}, the hidden
 * directories as private empty tmpfs mounts, and the listed paths. Everything else of the
 * host does not exist inside (or, on the mechanisms without a mount namespace, cannot be
 * read: Landlock).</li>
 * </ul>
 * In both, the command's working directory is visible and writable, each readable path is
 * visible read-only and each writable path visible and writable (on top of what the view
 * shows otherwise, also inside a hidden directory).
 *
 * @param kind the kind of view
 * @param hiddenDirectories absolute directories without symbolic links, none inside
 * another one and none the root itself; each becomes a private empty tmpfs (mode 1777) in
 * the sandbox
 * @param readOnlyRoot whether every other mount of the host is read-only in the sandbox
 * (host view only; the system view is always read-only outside the working directory, the
 * hidden directories and the writable paths)
 * @param systemDirectories the host directories shown read-only in a system view
 * ({@code /usr}, {@code /etc}, the JVM's {@code java.home}, ...); empty in a host view
 * @param systemLinks the symbolic links recreated at the root of a system view, by their
 * path, with their target as the host has it (such as {@code /bin} to {@code usr/bin});
 * empty in a host view
 * @param maskedFiles the regular files inside the system directories that are shown empty
 * (such as {@code /etc/shadow})
 * @param maskedDirectories the directories inside the system directories that are shown
 * empty (such as {@code /etc/ssl/private})
 * @param readablePaths the host paths (directories or files) shown read-only, besides the
 * system directories
 * @param writablePaths the host paths (directories or files) shown writable
 */
public record FilesystemView(Kind kind, List<Path> hiddenDirectories, boolean readOnlyRoot,
		List<Path> systemDirectories, Map<Path, Path> systemLinks, List<Path> maskedFiles, List<Path> maskedDirectories,
		List<Path> readablePaths, List<Path> writablePaths) {

	/**
	 * The host directories a system view shows when they exist: what programs need to run
	 * (measured with sh, python3, perl, sha256sum, gzip and a child JVM: {@code /usr},
	 * {@code /etc} and the {@code /lib*} and {@code /bin} links of a merged-{@code /usr}
	 * system suffice), and {@code /var/spool/libreoffice}, where Debian's LibreOffice
	 * keeps the registry of its shared extensions (linked from
	 * {@code /usr/lib/libreoffice}): {@code soffice} aborts when it exists but cannot be
	 * read, which is what Landlock answers outside the view. The JVM's own
	 * {@code java.home} is added when it lies elsewhere (container images of the JDK keep
	 * it in {@code /opt}).
	 */
	public static final List<Path> DEFAULT_SYSTEM_PATHS = List.of(Path.of("/usr"), Path.of("/bin"), Path.of("/sbin"),
			Path.of("/lib"), Path.of("/lib32"), Path.of("/lib64"), Path.of("/libx32"), Path.of("/etc"),
			Path.of("/var/spool/libreoffice"));

	/**
	 * The secrets inside the system directories that a system view masks when they exist:
	 * password and group hashes, sudo rules, SSH host keys, TLS private keys, Kerberos
	 * keytabs, systemd credentials.
	 */
	public static final List<Path> DEFAULT_SECRET_PATHS = List.of(Path.of("/etc/shadow"), Path.of("/etc/shadow-"),
			Path.of("/etc/gshadow"), Path.of("/etc/gshadow-"), Path.of("/etc/security/opasswd"),
			Path.of("/etc/sudoers"), Path.of("/etc/sudoers.d"), Path.of("/etc/ssh"), Path.of("/etc/ssl/private"),
			Path.of("/etc/krb5.keytab"), Path.of("/etc/credstore"), Path.of("/etc/credstore.encrypted"));

	/** The kind of view. */
	public enum Kind {

		/** Only the system directories and the listed paths. */
		SYSTEM,

		/** The host's whole filesystem. */
		HOST

	}

	public FilesystemView {
		Objects.requireNonNull(kind, "kind must not be null");
		hiddenDirectories = List.copyOf(hiddenDirectories);
		for (Path directory : hiddenDirectories) {
			requireAbsolute("a hidden directory", directory);
			if (directory.getParent() == null) {
				throw new IllegalArgumentException("a hidden directory must not be /");
			}
			for (Path other : hiddenDirectories) {
				if (!other.equals(directory) && directory.startsWith(other)) {
					throw new IllegalArgumentException(
							"hidden directory " + directory + " lies inside hidden directory " + other);
				}
			}
		}
		systemDirectories = List.copyOf(systemDirectories);
		systemLinks = Map.copyOf(new LinkedHashMap<>(systemLinks));
		maskedFiles = List.copyOf(maskedFiles);
		maskedDirectories = List.copyOf(maskedDirectories);
		readablePaths = List.copyOf(readablePaths);
		writablePaths = List.copyOf(writablePaths);
		if (kind == Kind.HOST && (!systemDirectories.isEmpty() || !systemLinks.isEmpty())) {
			throw new IllegalArgumentException("a host view has no system directories or links");
		}
		for (Path path : systemDirectories) {
			requireAbsolute("a system directory", path);
		}
		for (Path path : systemLinks.keySet()) {
			requireAbsolute("a system link", path);
		}
		for (Path path : maskedFiles) {
			requireAbsolute("a masked file", path);
		}
		for (Path path : maskedDirectories) {
			requireAbsolute("a masked directory", path);
		}
		for (Path path : readablePaths) {
			requireAbsolute("a readable path", path);
		}
		for (Path path : writablePaths) {
			requireAbsolute("a writable path", path);
		}
	}

	/**
	 * Create a host view without listed paths.
	 * @param hiddenDirectories the hidden directories
	 * @param readOnlyRoot whether the rest of the host is read-only
	 */
	public FilesystemView(List<Path> hiddenDirectories, boolean readOnlyRoot) {
		this(Kind.HOST, hiddenDirectories, readOnlyRoot, List.of(), Map.of(), List.of(), List.of(), List.of(),
				List.of());
	}

	/**
	 * Return a host view that hides the given directories, dropping those that lie inside
	 * another one of them (the outer tmpfs hides them already) and duplicates.
	 * @param directories absolute, normalized directories without symbolic links
	 * @param readOnlyRoot whether the rest of the host is read-only
	 * @return the view
	 */
	public static FilesystemView of(List<Path> directories, boolean readOnlyRoot) {
		return new FilesystemView(outermost(directories), readOnlyRoot);
	}

	/**
	 * Return the given directories without those that lie inside another one of them, and
	 * without duplicates.
	 * @param directories absolute, normalized directories
	 * @return the outermost ones, in their order
	 */
	public static List<Path> outermost(List<Path> directories) {
		List<Path> kept = new ArrayList<>();
		for (Path directory : directories) {
			Objects.requireNonNull(directory, "directory must not be null");
			boolean covered = directories.stream()
				.anyMatch((other) -> !other.equals(directory) && directory.startsWith(other));
			if (!covered && !kept.contains(directory)) {
				kept.add(directory);
			}
		}
		return kept;
	}

	/**
	 * Return whether this is a system view.
	 * @return whether only the system directories and listed paths are shown
	 */
	public boolean isSystem() {
		return this.kind == Kind.SYSTEM;
	}

	/**
	 * Return this view with more listed paths (those of a request), after the view's own.
	 * @param readable more paths shown read-only
	 * @param writable more paths shown writable
	 * @return the view
	 */
	public FilesystemView withPaths(List<Path> readable, List<Path> writable) {
		if (readable.isEmpty() && writable.isEmpty()) {
			return this;
		}
		List<Path> allReadable = new ArrayList<>(this.readablePaths);
		readable.stream().filter((path) -> !allReadable.contains(path)).forEach(allReadable::add);
		List<Path> allWritable = new ArrayList<>(this.writablePaths);
		writable.stream().filter((path) -> !allWritable.contains(path)).forEach(allWritable::add);
		return new FilesystemView(this.kind, this.hiddenDirectories, this.readOnlyRoot, this.systemDirectories,
				this.systemLinks, this.maskedFiles, this.maskedDirectories, allReadable, allWritable);
	}

	/**
	 * Return the readable and writable paths in the order the mechanisms mount them:
	 * fewer path components first, so that a path listed inside another listed path is
	 * mounted on top of it and keeps its own access; at the same depth the writable paths
	 * first, so that a path listed both ways ends up read-only.
	 * @return the listed paths, each with whether it is writable
	 */
	public List<Listed> listedPaths() {
		List<Listed> listed = new ArrayList<>();
		this.writablePaths.forEach((path) -> listed.add(new Listed(path, true)));
		this.readablePaths.forEach((path) -> listed.add(new Listed(path, false)));
		listed.sort(Comparator.comparingInt((Listed path) -> path.path().getNameCount()));
		return listed;
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

	/**
	 * Return whether a host path is out of the command's sight in this view: in a host
	 * view, when a hidden directory covers it; in a system view, unless it lies in a
	 * system directory (and not in a masked path) or is a system link. A listed path and
	 * what lies in it is always in sight. The working directory is the caller's to check.
	 * @param path an absolute real path
	 * @return whether the command cannot see it at this path
	 */
	public boolean hides(Path path) {
		if (Stream.concat(this.readablePaths.stream(), this.writablePaths.stream()).anyMatch(path::startsWith)) {
			return false;
		}
		if (this.kind == Kind.HOST) {
			return covers(path);
		}
		if (covers(path) || Stream.concat(this.maskedFiles.stream(), this.maskedDirectories.stream())
			.anyMatch(path::startsWith)) {
			return true;
		}
		return this.systemDirectories.stream().noneMatch(path::startsWith) && !this.systemLinks.containsKey(path);
	}

	/**
	 * A readable or writable path of a view.
	 *
	 * @param path the host path, shown at the same path
	 * @param writable whether the command may write it
	 */
	public record Listed(Path path, boolean writable) {

	}

	private static void requireAbsolute(String what, Path path) {
		if (!path.isAbsolute() || !path.equals(path.normalize())) {
			throw new IllegalArgumentException(what + " must be an absolute, normalized path, but was " + path);
		}
	}

}
