package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * This JVM's lock on a work directory, which proves to other JVMs that its private
 * directories are in use: a lock file {@code cave-sandbox-lock-<pid>-<token>} (mode 0600)
 * in this user's {@link PrivateHome}, exclusively locked for the JVM's whole life, and
 * the directories it covers named {@code cave-sandbox-<pid>-<token>-<random>}. The pid
 * alone proves nothing (another PID namespace, reuse); the kernel releases a record lock
 * when its process ends, however it ends, and every process that opens the file sees it,
 * whatever its PID namespace (fcntl(2), which {@link FileChannel#tryLock()} uses on
 * Linux).
 * <p>
 * One lock per work directory (by real path), shared by the executors of this JVM on it.
 * It is held while one of them uses the work directory or a directory of this JVM is left
 * in it; the last user removes the lock file and lets the lock go only if none is left.
 * {@link OrphanSweep} removes what a lock no longer held covers.
 */
final class OwnerLock {

	static final String LOCK_PREFIX = PrivateHome.PREFIX + "lock-";

	private static final int ATTEMPTS = 10;

	/** This JVM's lock per work directory (by real path), held until the JVM ends. */
	private static final Map<Path, OwnerLock> LOCKS = new ConcurrentHashMap<>();

	private static final SecureRandom RANDOM = new SecureRandom();

	private final Path key;

	/**
	 * This user's home in the work directory, where the lock file and the directories
	 * are.
	 */
	private final Path home;

	private final Path file;

	private final FileLock lock;

	/** The user that created the lock file, which is this JVM's. */
	private final UserPrincipal owner;

	/**
	 * The lock file's identity (device and inode), whatever name it is reached by.
	 */
	private final @Nullable Object fileKey;

	/** The name prefix of the private directories it covers. */
	private final String directoryPrefix;

	/** Guarded by {@link #LOCKS}. */
	private int users;

	private OwnerLock(Path key, Path home, Path file, FileLock lock, UserPrincipal owner, @Nullable Object fileKey,
			String directoryPrefix) {
		this.key = key;
		this.home = home;
		this.fileKey = fileKey;
		this.file = file;
		this.lock = lock;
		this.owner = owner;
		this.directoryPrefix = directoryPrefix;
	}

	/** This user's home in the work directory. */
	Path home() {
		return this.home;
	}

	/** The lock file. */
	Path file() {
		return this.file;
	}

	/** The lock file's identity (device and inode), or {@code null} if unknown. */
	@Nullable Object fileKey() {
		return this.fileKey;
	}

	/** This JVM's user, the owner of the lock file. */
	UserPrincipal owner() {
		return this.owner;
	}

	/** The name prefix of the private directories it covers. */
	String directoryPrefix() {
		return this.directoryPrefix;
	}

	/** The locks this JVM holds now, on any work directory. */
	static Collection<OwnerLock> held() {
		return Collections.unmodifiableCollection(LOCKS.values());
	}

	/** This JVM's lock on the work directory, taken if it is not held yet. */
	static OwnerLock of(Path workDirectory) throws IOException {
		Path key = realPath(workDirectory);
		OwnerLock lock = LOCKS.get(key);
		if (lock != null) {
			return lock;
		}
		synchronized (LOCKS) {
			lock = LOCKS.get(key);
			if (lock == null) {
				lock = acquire(key);
				LOCKS.put(key, lock);
			}
			return lock;
		}
	}

	/** Count one more user of this JVM's lock on the work directory. */
	static OwnerLock register(Path workDirectory) throws IOException {
		synchronized (LOCKS) {
			OwnerLock lock = of(workDirectory);
			lock.users++;
			return lock;
		}
	}

	/**
	 * Count one user less; the last one removes the lock file and lets the lock go if no
	 * directory it covers is left, otherwise it stays until the JVM ends.
	 */
	void unregister() {
		synchronized (LOCKS) {
			this.users--;
			if (this.users > 0 || LOCKS.get(this.key) != this) {
				return;
			}
			try (DirectoryStream<Path> left = Files.newDirectoryStream(this.home, this.directoryPrefix + "*")) {
				if (left.iterator().hasNext()) {
					return;
				}
				Files.deleteIfExists(this.file);
				LOCKS.remove(this.key);
				this.lock.channel().close();
			}
			catch (IOException | RuntimeException ex) {
				// kept until the JVM ends
			}
		}
	}

	private static OwnerLock acquire(Path workDirectory) throws IOException {
		Path home = PrivateHome.of(workDirectory);
		for (int attempt = 1;; attempt++) {
			String id = ProcessHandle.current().pid() + "-" + Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36);
			Path file = home.resolve(LOCK_PREFIX + id);
			FileChannel channel = FileChannel.open(file,
					Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
					PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
			FileLock lock = null;
			try {
				lock = channel.tryLock();
				// Another JVM's sweep may have taken the new, still unlocked file for an
				// orphaned one and removed it: then take another name.
				BasicFileAttributes attributes = (lock != null) ? attributesIfPresent(file) : null;
				if (attributes != null && attributes.isRegularFile()) {
					return new OwnerLock(workDirectory, home, file, lock,
							Files.getOwner(file, LinkOption.NOFOLLOW_LINKS), attributes.fileKey(),
							PrivateHome.PREFIX + id + "-");
				}
			}
			catch (IOException | RuntimeException ex) {
				channel.close();
				Files.deleteIfExists(file);
				throw ex;
			}
			channel.close();
			if (attempt == ATTEMPTS) {
				throw new IOException("could not lock a new file in " + workDirectory);
			}
		}
	}

	private static @Nullable BasicFileAttributes attributesIfPresent(Path file) throws IOException {
		try {
			return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
		}
		catch (NoSuchFileException ex) {
			return null;
		}
	}

	private static Path realPath(Path directory) {
		try {
			return directory.toRealPath();
		}
		catch (IOException ex) {
			return directory.toAbsolutePath().normalize();
		}
	}

}
