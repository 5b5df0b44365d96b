package dev.cavesandbox.internal.workspace;

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
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;

/**
 * Removes a directory tree that an untrusted command wrote, without following the links
 * it may have left. An internal building block of {@link ProcessIsolatedExecutor}, public
 * only so that the project's benchmarks can measure the executor's own code; it is not
 * part of the supported API and may change without notice.
 */
public final class DirectoryTrees {

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(DirectoryTrees.class);

	private DirectoryTrees() {
	}

	/**
	 * Remove a directory tree without following symbolic links (a child may leave a link
	 * to anywhere) and after restoring permissions the child may have taken away. A tree
	 * the JDK cannot remove (deeper than {@code PATH_MAX}, or deep enough to exhaust the
	 * stack) is handed to coreutils {@code chmod -R} and
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
			deleteEntry(secure, absolute.getFileName());
		}
	}

	/**
	 * Remove everything in an open directory, relative to it and without following links,
	 * as {@link #delete} does; the directory itself stays. For a directory that must not
	 * be reached by its name again (the probe's, in a work directory where others may
	 * rename entries).
	 * @param directory the directory, open
	 * @throws IOException if it cannot be listed or an entry cannot be removed
	 */
	public static void deleteContent(SecureDirectoryStream<Path> directory) throws IOException {
		List<Path> entries = new ArrayList<>();
		try (SecureDirectoryStream<Path> listing = directory.newDirectoryStream(Path.of("."),
				LinkOption.NOFOLLOW_LINKS)) {
			for (Path entry : listing) {
				entries.add(entry.getFileName());
			}
		}
		for (Path entry : entries) {
			deleteEntry(directory, entry);
		}
	}

	private static void deleteEntry(SecureDirectoryStream<Path> parent, Path name) throws IOException {
		BasicFileAttributes attributes;
		try {
			attributes = parent.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.readAttributes();
		}
		catch (NoSuchFileException ex) {
			return;
		}
		if (!attributes.isDirectory()) {
			deleteQuietly(() -> parent.deleteFile(name));
			return;
		}
		try (SecureDirectoryStream<Path> directory = open(parent, name)) {
			List<Path> entries = new ArrayList<>();
			for (Path entry : directory) {
				entries.add(entry.getFileName());
			}
			for (Path entry : entries) {
				deleteEntry(directory, entry);
			}
		}
		catch (NoSuchFileException ex) {
			return;
		}
		deleteQuietly(() -> parent.deleteDirectory(name));
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
