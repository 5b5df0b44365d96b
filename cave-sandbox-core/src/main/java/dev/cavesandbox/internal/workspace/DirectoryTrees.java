package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
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
			Files.walkFileTree(root, new SimpleFileVisitor<>() {

				@Override
				public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
					Files.deleteIfExists(file);
					return FileVisitResult.CONTINUE;
				}

				@Override
				public FileVisitResult visitFileFailed(Path file, IOException ex) throws IOException {
					if (ex instanceof NoSuchFileException) {
						return FileVisitResult.CONTINUE;
					}
					if (ex instanceof AccessDeniedException && ownerOnly(file)) {
						// Made unreadable by the child: open it up once, then walk it.
						Files.walkFileTree(file, this);
						return FileVisitResult.CONTINUE;
					}
					throw ex;
				}

				@Override
				public FileVisitResult postVisitDirectory(Path dir, @Nullable IOException ex) throws IOException {
					if (ex != null && !(ex instanceof NoSuchFileException)) {
						throw ex;
					}
					Files.deleteIfExists(dir);
					return FileVisitResult.CONTINUE;
				}

			});
		}
		catch (IOException | UncheckedIOException | StackOverflowError ex) {
			removeWithCoreutils(root);
		}
		if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
			logger.warn("Could not remove the private working directory {}; remove it by hand", root);
		}
	}

	/**
	 * Give a directory back its owner-only permissions.
	 * @return whether it has them now
	 */
	static boolean ownerOnly(Path directory) {
		try {
			Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
			return true;
		}
		catch (IOException | UnsupportedOperationException ex) {
			return false;
		}
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
