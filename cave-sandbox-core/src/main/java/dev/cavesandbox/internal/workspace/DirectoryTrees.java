package dev.cavesandbox.internal.workspace;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.jspecify.annotations.Nullable;

/**
 * Removes a directory tree that an untrusted command wrote, without following the links
 * it may have left. An internal building block of {@link ProcessIsolatedExecutor}, public
 * only so that the project's benchmarks can measure the executor's own code; it is not
 * part of the supported API and may change without notice.
 */
public final class DirectoryTrees {

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(DirectoryTrees.class);

	/** How many directories of a tree the walk keeps open at most. */
	static final int MAX_OPEN = 64;

	/** How the name begins of a directory moved up out of a deep chain to be removed. */
	static final String MOVED_PREFIX = ".cave-sandbox-moved-";

	private DirectoryTrees() {
	}

	/**
	 * Remove a directory tree without following symbolic links (a child may leave a link
	 * to anywhere) and after restoring permissions the child may have taken away. The
	 * walk is iterative and keeps at most {@value #MAX_OPEN} directories open, so no
	 * depth (a chain of nested directories deeper than {@code PATH_MAX}, or than the
	 * stack) costs more stack or descriptors. A tree the JDK cannot remove (an entry it
	 * may not remove, a mount point beneath) is handed to coreutils {@code chmod -R} and
	 * {@code rm -rf --one-file-system}, which walk it relative to each directory. Never
	 * throws: a directory that cannot be removed is logged and left, and the execution's
	 * result is not lost.
	 * @param root the directory to remove
	 */
	public static void delete(Path root) {
		try {
			deleteRelative(root);
		}
		catch (IOException | UncheckedIOException | StackOverflowError ex) {
			removeWithCoreutils(root);
		}
		if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
			logger.warn("Could not remove the private working directory {}; remove it by hand", root);
		}
	}

	/**
	 * Remove a tree relative to its open directories ({@link SecureDirectoryStream}:
	 * {@code openat(2)}, {@code unlinkat(2)} with {@code O_NOFOLLOW}), never by path: a
	 * user who may write the tree could otherwise rename a directory away after its
	 * listing and put a link to another directory under its name, whose files the
	 * following unlinks by path would remove (Issue28FinalBreakInTests).
	 * @throws IOException if the platform has no {@link SecureDirectoryStream} or an
	 * entry cannot be removed (the caller falls back to coreutils, which also work
	 * relative to open directories)
	 */
	private static void deleteRelative(Path root) throws IOException {
		Path absolute = root.toAbsolutePath();
		Path parent = absolute.getParent();
		if (parent == null) {
			throw new IOException("no parent: " + root);
		}
		try (DirectoryStream<Path> stream = Files.newDirectoryStream(parent, (entry) -> false)) {
			if (!(stream instanceof SecureDirectoryStream<Path> secure)) {
				throw new IOException("no SecureDirectoryStream on this platform");
			}
			Path name = absolute.getFileName();
			if (!isDirectory(secure, name)) {
				deleteQuietly(() -> secure.deleteFile(name));
				return;
			}
			try (SecureDirectoryStream<Path> directory = open(secure, name)) {
				deleteContent(directory);
			}
			catch (NoSuchFileException ex) {
				return;
			}
			deleteQuietly(() -> secure.deleteDirectory(name));
		}
	}

	/**
	 * Remove everything in an open directory, relative to it and without following links,
	 * as {@link #delete} does; the directory itself stays. For a directory that must not
	 * be reached by its name again (the probe's, in a work directory where others may
	 * rename entries). The walk is iterative: at most {@value #MAX_OPEN} directories are
	 * open at once; a directory deeper than that is first moved up into the given one
	 * under a new name ({@value #MOVED_PREFIX}N, {@code renameat(2)}) and removed from
	 * there, so that a chain of any depth costs neither stack nor more descriptors.
	 * @param directory the directory, open
	 * @throws IOException if it cannot be listed or an entry cannot be removed
	 */
	public static void deleteContent(SecureDirectoryStream<Path> directory) throws IOException {
		Deque<Path> pending;
		try (SecureDirectoryStream<Path> listing = directory.newDirectoryStream(Path.of("."),
				LinkOption.NOFOLLOW_LINKS)) {
			pending = new ArrayDeque<>(names(listing));
		}
		int moved = 0;
		while (!pending.isEmpty()) {
			Path name = pending.pop();
			if (!isDirectory(directory, name)) {
				deleteQuietly(() -> directory.deleteFile(name));
				continue;
			}
			Deque<Level> levels = new ArrayDeque<>();
			try {
				push(levels, directory, name);
				while (!levels.isEmpty()) {
					Level level = levels.peek();
					Path entry = level.next();
					if (entry == null) {
						levels.pop().close();
						SecureDirectoryStream<Path> parent = levels.isEmpty() ? directory : levels.peek().opened;
						deleteQuietly(() -> parent.deleteDirectory(level.name));
					}
					else if (!isDirectory(level.opened, entry)) {
						deleteQuietly(() -> level.opened.deleteFile(entry));
					}
					else if (levels.size() < MAX_OPEN) {
						push(levels, level.opened, entry);
					}
					else {
						Path up = Path.of(MOVED_PREFIX + (moved++) + "-" + Long.toHexString(System.nanoTime()));
						level.opened.move(entry, directory, up);
						pending.push(up);
					}
				}
			}
			finally {
				for (Level level : levels) {
					level.close();
				}
			}
		}
	}

	private static void push(Deque<Level> levels, SecureDirectoryStream<Path> parent, Path name) throws IOException {
		Level level = Level.open(parent, name);
		if (level != null) {
			levels.push(level);
		}
	}

	/**
	 * One open directory of the walk, with the names in it not yet removed.
	 */
	private static final class Level implements Closeable {

		private final Path name;

		private final SecureDirectoryStream<Path> opened;

		private final Iterator<Path> entries;

		private Level(Path name, SecureDirectoryStream<Path> opened, List<Path> entries) {
			this.name = name;
			this.opened = opened;
			this.entries = entries.iterator();
		}

		/**
		 * Open an entry of a directory and list it.
		 * @return the level, or {@code null} where the entry is gone meanwhile
		 */
		static @Nullable Level open(SecureDirectoryStream<Path> parent, Path name) throws IOException {
			SecureDirectoryStream<Path> opened;
			try {
				opened = DirectoryTrees.open(parent, name);
			}
			catch (NoSuchFileException ex) {
				return null;
			}
			try {
				return new Level(name, opened, names(opened));
			}
			catch (RuntimeException ex) {
				opened.close();
				throw ex;
			}
		}

		@Nullable Path next() {
			return this.entries.hasNext() ? this.entries.next() : null;
		}

		@Override
		public void close() throws IOException {
			this.opened.close();
		}

	}

	/** The names in an open directory; the stream it lists stays open. */
	private static List<Path> names(DirectoryStream<Path> directory) {
		List<Path> names = new ArrayList<>();
		for (Path entry : directory) {
			names.add(entry.getFileName());
		}
		return names;
	}

	private static boolean isDirectory(SecureDirectoryStream<Path> parent, Path name) throws IOException {
		try {
			return parent.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.readAttributes()
				.isDirectory();
		}
		catch (NoSuchFileException ex) {
			return false;
		}
	}

	/**
	 * Open a directory without following a link, opening up one the child made
	 * unreadable.
	 */
	private static SecureDirectoryStream<Path> open(SecureDirectoryStream<Path> parent, Path name) throws IOException {
		try {
			return parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
		}
		catch (AccessDeniedException ex) {
			parent.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.setPermissions(PrivateHome.OWNER_ONLY);
			return parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
		}
	}

	private static void deleteQuietly(Removal removal) throws IOException {
		try {
			removal.remove();
		}
		catch (NoSuchFileException ex) {
			// already gone
		}
	}

	@FunctionalInterface
	private interface Removal {

		void remove() throws IOException;

	}

	private static void removeWithCoreutils(Path root) {
		for (List<String> command : List.of(List.of("chmod", "-R", "u+rwX", "--", root.toString()),
				List.of("rm", "-rf", "--one-file-system", "--", root.toString()))) {
			try {
				ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
				builder.environment().clear();
				builder.environment().put("PATH", SandboxSettings.BASELINE_PATH);
				Process process = builder.start();
				process.getInputStream().transferTo(OutputStream.nullOutputStream());
				if (!process.waitFor(60, TimeUnit.SECONDS)) {
					process.destroyForcibly();
				}
			}
			catch (IOException ex) {
				// logged by delete() if the directory remains
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
