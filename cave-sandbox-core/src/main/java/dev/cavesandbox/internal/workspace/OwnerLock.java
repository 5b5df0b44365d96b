package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
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
 * directories are in use: a lock file {@code cave-sandbox-lock-<tag>} (mode 0600) in this
 * user's {@link PrivateHome}, exclusively locked for the JVM's whole life, and the
 * directories it covers named {@code <tag><random>}. The tag is {@value #TAG_LENGTH}
 * random base-36 characters, taken by giving a new, already locked file the tag's name
 * exclusively ({@link #acquire}; another JVM's tag is never taken: its lock file is there
 * as long as a directory of that tag is, and the sweep removes it only after the
 * directories); the random part is {@value #RANDOM_LENGTH} characters, a directory is
 * created exclusively too and never takes another's name. So a private directory's name
 * has {@value #NAME_LENGTH} characters: short, so that a program's own unix socket
 * beneath it fits in {@code sun_path} (108 bytes with its terminating NUL, unix(7); see
 * {@link SocketRoom}). The lock file holds the pid of its JVM, for people only: a pid
 * proves nothing (another PID namespace, reuse); the kernel releases a record lock when
 * its process ends, however it ends, and every process that opens the file sees it,
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

	/** The prefix of a new lock file's name, until it has a tag's name. */
	static final String NEW_PREFIX = LOCK_PREFIX + "new-";

	/** The length of the random part of a new lock file's name. */
	static final int NEW_RANDOM_LENGTH = 16;

	/** The length of a tag, the first part of a private directory's name. */
	static final int TAG_LENGTH = 3;

	/** The length of the random part of a private directory's name, after the tag. */
	static final int RANDOM_LENGTH = 6;

	/** The length of a private directory's name. */
	static final int NAME_LENGTH = TAG_LENGTH + RANDOM_LENGTH;

	/** The characters of tags and names: base 36, lower case. */
	private static final String DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";

	/**
	 * How often a new tag or name is tried when the one chosen is taken: with 36^3 tags
	 * and 36^6 names per tag, a run of 64 taken ones means a home that something else
	 * fills.
	 */
	private static final int ATTEMPTS = 64;

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

	/** The tag: the first part of the name of every directory it covers. */
	private final String tag;

	/** Guarded by {@link #LOCKS}. */
	private int users;

	private OwnerLock(Path key, Path home, Path file, FileLock lock, UserPrincipal owner, @Nullable Object fileKey,
			String tag) {
		this.key = key;
		this.home = home;
		this.fileKey = fileKey;
		this.file = file;
		this.lock = lock;
		this.owner = owner;
		this.tag = tag;
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

	/**
	 * Create a new private directory that this lock covers, owner-only (mode 0700), under
	 * a name that nothing had: created exclusively, another random part tried where one
	 * is taken.
	 * @return the directory, {@code <home>/<tag><random>}
	 * @throws IOException if it cannot be created
	 */
	Path createDirectory() throws IOException {
		for (int attempt = 1;; attempt++) {
			Path directory = this.home.resolve(this.tag + random(RANDOM_LENGTH));
			try {
				return Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PrivateHome.OWNER_ONLY));
			}
			catch (FileAlreadyExistsException ex) {
				if (attempt == ATTEMPTS) {
					throw new IOException("could not create a directory of a new name in " + this.home + " in "
							+ ATTEMPTS + " attempts", ex);
				}
			}
		}
	}

	/**
	 * The glob that matches exactly the names of the directories a tag covers
	 * ({@link java.nio.file.FileSystem#getPathMatcher}): the tag and
	 * {@value #RANDOM_LENGTH} base-36 characters, nothing longer (the launcher's
	 * {@code launcher-<hash>} and the lock files never match).
	 * @param tag a tag
	 * @return the glob
	 */
	static String directoryGlob(String tag) {
		return tag + "[0-9a-z]".repeat(RANDOM_LENGTH);
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
			try (DirectoryStream<Path> left = Files.newDirectoryStream(this.home, directoryGlob(this.tag))) {
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

	/**
	 * Take a new tag. The lock file is created exclusively under a new name of its own
	 * ({@code cave-sandbox-lock-new-<random>}, which no JVM takes for a lock of a tag)
	 * and locked, and only then given the tag's name, exclusively, as a hard link
	 * ({@code link(2)} fails if the name exists): no other JVM ever sees an unlocked file
	 * under a tag's name, so none takes it for an orphaned one. Where the tag is taken,
	 * another is tried. Where another JVM's sweep took the new, still unlocked file for a
	 * dead JVM's and removed it, linking it fails, and a new file is made. The new name
	 * is removed once the tag's name is there; one left by a JVM killed in between is
	 * removed by a later sweep ({@link OrphanSweep}). The lock file is never opened again
	 * by this JVM: closing any descriptor of it would let its lock go (fcntl(2)).
	 */
	private static OwnerLock acquire(Path workDirectory) throws IOException {
		Path home = PrivateHome.of(workDirectory);
		for (int attempt = 1;; attempt++) {
			Path created = home.resolve(NEW_PREFIX + random(NEW_RANDOM_LENGTH));
			FileChannel channel = FileChannel.open(created,
					Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
					PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
			try {
				FileLock lock = channel.tryLock();
				if (lock != null) {
					channel.write(ByteBuffer
						.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)));
					OwnerLock named = name(workDirectory, home, created, lock);
					if (named != null) {
						Files.deleteIfExists(created);
						return named;
					}
				}
			}
			catch (IOException | RuntimeException ex) {
				channel.close();
				Files.deleteIfExists(created);
				throw ex;
			}
			channel.close();
			Files.deleteIfExists(created);
			if (attempt == ATTEMPTS) {
				throw new IOException("could not lock a new file in " + home + " in " + ATTEMPTS + " attempts");
			}
		}
	}

	/**
	 * Give a new, locked lock file the name of a free tag, trying other tags where one is
	 * taken.
	 * @return the lock, or {@code null} if the new file is gone (a sweep removed it
	 * before it was locked)
	 */
	private static @Nullable OwnerLock name(Path workDirectory, Path home, Path created, FileLock lock)
			throws IOException {
		for (int attempt = 1;; attempt++) {
			String tag = random(TAG_LENGTH);
			Path file = home.resolve(LOCK_PREFIX + tag);
			try {
				Files.createLink(file, created);
			}
			catch (FileAlreadyExistsException ex) {
				if (attempt == ATTEMPTS) {
					throw new IOException(
							"could not find a free name for a lock file in " + home + " in " + ATTEMPTS + " attempts",
							ex);
				}
				continue;
			}
			catch (NoSuchFileException ex) {
				return null;
			}
			BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
					LinkOption.NOFOLLOW_LINKS);
			return new OwnerLock(workDirectory, home, file, lock, Files.getOwner(file, LinkOption.NOFOLLOW_LINKS),
					attributes.fileKey(), tag);
		}
	}

	/** Random base-36 characters. */
	private static String random(int length) {
		StringBuilder text = new StringBuilder(length);
		for (int i = 0; i < length; i++) {
			text.append(DIGITS.charAt(RANDOM.nextInt(DIGITS.length())));
		}
		return text.toString();
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
