package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.util.regex.Pattern;

/**
 * Removes the private directories that JVMs which no longer run left in this user's
 * {@link PrivateHome} (a JVM killed by SIGKILL or the OOM killer never reached its
 * {@code finally}), when an executor is created. A directory is removed only if this JVM
 * can take the {@link OwnerLock} of its JVM, and only if the lock file belongs to this
 * JVM's user; anything else (another user's lock, a live JVM's, a directory without a
 * lock file) is left alone, silently. The directories of such a tag are removed whoever
 * owns them: only this user creates entries in its home, and the executor hands some of
 * them to a command user (the shared-memory directory of a mechanism without a mount
 * namespace), whose uid then owns them. The lock file goes too once none of its
 * directories is left (only then may another JVM take its tag). No live JVM can be
 * creating a directory of the tag meanwhile: it creates them only while it holds the
 * lock.
 * <p>
 * Names of an earlier version ({@code cave-sandbox-lock-<pid>-<token>},
 * {@code cave-sandbox-<pid>-<token>-<random>}) are not swept: remove such directories by
 * hand once no JVM of that version runs.
 * <p>
 * Not mutated by PIT (cave-sandbox-core's pom, TESTING.md): a mutant of its lock or owner
 * check deletes the directories of live JVMs in the shared {@code java.io.tmpdir}.
 */
final class OrphanSweep {

	private static final Pattern LOCK_NAME = Pattern
		.compile(Pattern.quote(OwnerLock.LOCK_PREFIX) + "[0-9a-z]{" + OwnerLock.TAG_LENGTH + "}");

	/** The name of a new lock file that has no tag's name yet. */
	private static final Pattern NEW_NAME = Pattern
		.compile(Pattern.quote(OwnerLock.NEW_PREFIX) + "[0-9a-z]{" + OwnerLock.NEW_RANDOM_LENGTH + "}");

	private OrphanSweep() {
	}

	/**
	 * Remove the private directories in a home whose JVM has ended. Never throws; what
	 * cannot be proven orphaned and this user's is left.
	 * @param own this JVM's lock on the work directory
	 */
	static void removeOrphans(OwnerLock own) {
		try (DirectoryStream<Path> lockFiles = Files.newDirectoryStream(own.home(), OwnerLock.LOCK_PREFIX + "*")) {
			for (Path lockFile : lockFiles) {
				String name = lockFile.getFileName().toString();
				// Never open a lock file of this JVM: closing any descriptor of a file
				// releases the process's fcntl(2) locks on it.
				boolean tag = LOCK_NAME.matcher(name).matches();
				if ((tag || NEW_NAME.matcher(name).matches()) && !ownLockName(name) && !ownLockFile(lockFile)) {
					removeIfOrphaned(own.home(), lockFile, own.owner(), tag);
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// unreadable: nothing of ours can be in it
		}
	}

	private static boolean ownLockName(String name) {
		return OwnerLock.held().stream().anyMatch((lock) -> lock.file().getFileName().toString().equals(name));
	}

	/**
	 * Whether a file is one of this JVM's lock files under another name (a hard link):
	 * opening it and closing it again would release this JVM's lock, as any descriptor's
	 * close does.
	 */
	private static boolean ownLockFile(Path file) {
		try {
			Object key = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
			return key == null || OwnerLock.held().stream().anyMatch((lock) -> key.equals(lock.fileKey()));
		}
		catch (IOException | RuntimeException ex) {
			return true;
		}
	}

	/**
	 * Remove a lock file's name if no JVM holds its lock, with the directories of its tag
	 * first; a new lock file's name (a JVM killed before it had a tag's name) has none.
	 */
	private static void removeIfOrphaned(Path home, Path lockFile, UserPrincipal owner, boolean tagged) {
		try {
			if (!Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS) || !ownedBy(lockFile, owner)) {
				return;
			}
			try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
					FileLock lock = channel.tryLock()) {
				if (lock == null) {
					return; // its JVM runs
				}
				if (!tagged) {
					Files.deleteIfExists(lockFile);
					return;
				}
				String tag = lockFile.getFileName().toString().substring(OwnerLock.LOCK_PREFIX.length());
				boolean left = false;
				try (DirectoryStream<Path> directories = Files.newDirectoryStream(home, OwnerLock.directoryGlob(tag))) {
					for (Path directory : directories) {
						if (Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
							DirectoryTrees.delete(directory);
						}
						// Look-alike names that are not directories do not keep the lock
						// file.
						left |= Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS);
					}
				}
				if (!left) {
					Files.deleteIfExists(lockFile);
				}
			}
		}
		catch (IOException | OverlappingFileLockException ex) {
			// not ours to open or lock: leave it
		}
	}

	private static boolean ownedBy(Path file, UserPrincipal owner) throws IOException {
		return Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).equals(owner);
	}

}
