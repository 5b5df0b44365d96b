package dev.cavesandbox.internal.probe;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import dev.cavesandbox.internal.workspace.DescriptorPath;
import dev.cavesandbox.internal.workspace.DirectoryTrees;

/**
 * The probe session's directory of its own: created new with a random name in the work
 * directory ({@code cave-sandbox-probe-*}, mode 0700), opened at once without following a
 * link and checked (a directory, this user's, mode 0700, empty), then kept open for the
 * session. A work directory that others may write without the sticky bit (mode 0777, a
 * Kubernetes {@code emptyDir}) lets any user rename the entries in it, so after its
 * creation the directory is never reached by its name again:
 * <ul>
 * <li>the JVM reaches its content only through the open descriptor, relative to it
 * ({@link SecureDirectoryStream}) or by a path that the kernel resolves through it
 * ({@code /proc/self/fd/N/...}, {@link #through()}, a descriptor of its own found by a
 * tag, {@link DescriptorPath});</li>
 * <li>the path {@code <work>/<name>} ({@link #path()}) is only handed to commands; before
 * and after each command {@link #checkName()} makes sure that the name still is this
 * directory (the same file key, not following a link), else the probe's verdict names the
 * replacement;</li>
 * <li>{@link #close()} deletes the content through the descriptor and removes the name
 * from the work directory only while it still is this directory (or, renamed in the work
 * directory, under the name it has now, found by its file key). {@code rmdir} removes
 * only an empty directory, so a name swapped in between costs at most an empty
 * directory.</li>
 * </ul>
 */
final class ProbeDirectory implements Closeable {

	/** How the name of the session's directory begins. */
	static final String PREFIX = "cave-sandbox-probe-";

	private static final int DIRECTORY_0700 = 040700;

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(ProbeDirectory.class);

	/** The work directories already warned about, by real path. */
	private static final Set<Path> WARNED = ConcurrentHashMap.newKeySet();

	private final Path work;

	private final Path name;

	private final SecureDirectoryStream<Path> opened;

	private final Object key;

	private final DescriptorPath through;

	private ProbeDirectory(Path work, Path name, SecureDirectoryStream<Path> opened, Object key,
			DescriptorPath through) {
		this.work = work;
		this.name = name;
		this.opened = opened;
		this.key = key;
		this.through = through;
	}

	/**
	 * Create the directory in the work directory, resolved to its real path first.
	 * @param workDirectory the work directory of the settings
	 * @return the directory, open
	 * @throws ReplacedException if the name no longer was the new directory when it was
	 * opened
	 * @throws IOException if it could not be created or opened
	 */
	static ProbeDirectory create(Path workDirectory) throws IOException {
		Path work = workDirectory.toRealPath();
		warnIfOthersMayRename(work);
		Path name = Files.createTempDirectory(work, PREFIX).getFileName();
		SecureDirectoryStream<Path> opened;
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(work, (entry) -> false)) {
			if (!(parent instanceof SecureDirectoryStream<Path> secure)) {
				throw new IOException(
						"cannot open " + work.resolve(name) + " without following links on this platform");
			}
			try {
				opened = secure.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
			}
			catch (IOException ex) {
				throw new ReplacedException(work, name, "it could not be opened without following links: " + ex);
			}
		}
		DescriptorPath through = null;
		try {
			Object key = Objects.requireNonNull(
					opened.getFileAttributeView(BasicFileAttributeView.class).readAttributes().fileKey(), "file key");
			through = DescriptorPath.open(opened);
			Map<String, Object> attributes = Files.readAttributes(through.path(), "unix:mode,uid");
			int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
			if ((Integer) attributes.get("mode") != DIRECTORY_0700 || (Integer) attributes.get("uid") != uid
					|| !empty(through.path())) {
				throw new ReplacedException(work, name,
						"the directory opened under its name is not the new one (mode "
								+ Integer.toOctalString((Integer) attributes.get("mode")) + ", uid "
								+ attributes.get("uid") + ", expected an empty 40700 of uid " + uid + ")");
			}
			return new ProbeDirectory(work, name, opened, key, through);
		}
		catch (IOException | RuntimeException ex) {
			if (through != null) {
				through.close();
			}
			opened.close();
			throw ex;
		}
	}

	/**
	 * Return the directory's path in the work directory, for commands only.
	 * @return {@code <work>/<name>}, the work directory's real path
	 */
	Path path() {
		return this.work.resolve(this.name);
	}

	/**
	 * Return a path that the kernel resolves through a descriptor of the directory held
	 * for the session ({@code /proc/self/fd/N}, {@link DescriptorPath}), for what cannot
	 * be done relative to it (mkdir, a mode with the sticky bit). Only the JVM's user
	 * writes the directory, so an entry of its own reached beneath it is its own.
	 * @return the path
	 */
	Path through() {
		return this.through.path();
	}

	/**
	 * Return the directory's permissions, set through its descriptor.
	 * @return the view
	 */
	PosixFileAttributeView attributes() {
		return this.opened.getFileAttributeView(PosixFileAttributeView.class);
	}

	/**
	 * Check that the directory's name in the work directory still is this directory.
	 * @throws ReplacedException if it is not
	 */
	void checkName() throws ReplacedException {
		Object now;
		try {
			now = Files.readAttributes(path(), "fileKey", LinkOption.NOFOLLOW_LINKS).get("fileKey");
		}
		catch (IOException ex) {
			throw new ReplacedException(this.work, this.name, "its name is gone (" + ex + ")");
		}
		if (!this.key.equals(now)) {
			throw new ReplacedException(this.work, this.name, "another entry took its name");
		}
	}

	/**
	 * Return the exception that names this directory as replaced.
	 * @param what what showed it
	 * @return the exception, to throw
	 */
	ReplacedException replaced(String what) {
		return new ReplacedException(this.work, this.name, what);
	}

	/**
	 * Delete the content through the descriptor, then the directory where its name (or
	 * the name it has now in the work directory) still is this directory, and close it.
	 * The content is deleted iteratively with a bounded number of open descriptors
	 * ({@link DirectoryTrees#deleteContent}), whatever depth a user moved in. Never
	 * throws, not even an {@link Error}; what is left is logged as a WARN that names the
	 * path.
	 */
	@Override
	public void close() {
		try (SecureDirectoryStream<Path> directory = this.opened; DescriptorPath through = this.through) {
			DirectoryTrees.deleteContent(directory);
			try (DirectoryStream<Path> parent = Files.newDirectoryStream(this.work)) {
				SecureDirectoryStream<Path> secure = (SecureDirectoryStream<Path>) parent;
				Path current = isThis(secure, this.name) ? this.name : null;
				if (current == null) {
					// renamed away in the work directory by another user: found by its
					// key
					try (Stream<Path> entries = Files.list(this.work)) {
						current = entries.map(Path::getFileName)
							.filter((entry) -> isThis(secure, entry))
							.findFirst()
							.orElse(null);
					}
				}
				if (current == null) {
					logger.warn(
							"The probe's directory, created as {}, was renamed out of {} by another user; its "
									+ "content is deleted, the empty directory is left where it is now",
							path(), this.work);
					return;
				}
				secure.deleteDirectory(current);
			}
		}
		catch (IOException | RuntimeException | StackOverflowError ex) {
			// A tree that another user made too deep for this thread's stack must not end
			// the probe either (DirectoryTrees no longer recurses; this stays the guard):
			// its verdict stands, the leftover is named. Other errors of the VM
			// (OutOfMemoryError) are not the probe's to hide.
			logger.warn("Could not remove the probe's directory {}; remove it by hand: {}", path(), ex.toString());
		}
	}

	private boolean isThis(SecureDirectoryStream<Path> parent, Path entry) {
		try {
			return this.key
				.equals(parent.getFileAttributeView(entry, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
					.readAttributes()
					.fileKey());
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static boolean empty(Path directory) throws IOException {
		try (Stream<Path> entries = Files.list(directory)) {
			return entries.findAny().isEmpty();
		}
	}

	/**
	 * Warn, once per work directory, where others may write it but it lacks the sticky
	 * bit.
	 */
	private static void warnIfOthersMayRename(Path work) {
		if (othersMayRename(work) && WARNED.add(work)) {
			logger.warn(
					"The work directory {} is writable by every user and lacks the sticky bit: another local user "
							+ "can rename the sandbox's entries there (the probe notices; see the threat model). {}",
					work, fix(work));
		}
	}

	/** Whether others may write a directory that lacks the sticky bit. */
	static boolean othersMayRename(Path work) {
		try {
			int mode = (Integer) Files.getAttribute(work, "unix:mode");
			return (mode & 0002) != 0 && (mode & 01000) == 0;
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

	private static String fix(Path work) {
		return "Run chmod +t " + work + ", or set cave.sandbox.work-directory to a directory only this user can write";
	}

	/**
	 * The session's directory was not, or is no longer, under its name in the work
	 * directory.
	 */
	static final class ReplacedException extends IOException {

		private static final long serialVersionUID = 1L;

		ReplacedException(Path work, Path name, String what) {
			super("the probe's directory " + work.resolve(name) + " was replaced: " + what + "; "
					+ (othersMayRename(work)
							? "another user renamed entries in " + work
									+ ", writable by others without the sticky bit. " + fix(work)
							: "another process renamed entries in " + work));
		}

	}

}
