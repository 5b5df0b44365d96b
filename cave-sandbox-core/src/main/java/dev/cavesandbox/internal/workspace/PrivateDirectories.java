package dev.cavesandbox.internal.workspace;

import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.WorkDirectoryUnusableException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileStore;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The private working directories of one executor, in its work directory: created
 * owner-only for an execution that names no working directory, emptied and kept for the
 * next execution where nothing can still write into them, deleted otherwise; and the
 * private directories that a JVM which no longer runs left behind, removed when the
 * executor is created.
 * <p>
 * <strong>Where they live.</strong> Not in the work directory itself but in a home of
 * this JVM's user in it, {@code <workDirectory>/cave-sandbox-<uid>}, owned by that user
 * and traversable by nobody else (mode 0700); the lock files below are in it too. A
 * command sandboxed by a root JVM runs as uid 0 mapped to the host's root, so what it
 * creates in its directory is really root's: it can copy a binary, make it setuid and
 * open its own directory ({@code chmod 755 .}), and in a work directory shared with other
 * local users (the default {@code java.io.tmpdir}, {@code /tmp}) they could run that
 * binary as root while the execution lasts. Inside the home nothing is reachable by
 * another user, whatever the command does to its own directory. The command cannot open
 * the home either: inside the sandbox the hidden directories ({@code /tmp} among them)
 * are a private tmpfs, so the parent it sees of its directory is the tmpfs's, not the
 * host's; a work directory outside the hidden directories is seen read-only (the README's
 * threat model says what is left there). One home per user, not per JVM: the orphan
 * cleanup of one JVM must find the directories of another JVM of the same user, which a
 * randomly named home would hide.
 * <p>
 * <strong>A command user of the seccomp rung.</strong> There a root JVM's command runs as
 * another uid of the host ({@code cave.sandbox.linux.command-user}), which must reach its
 * directory by its path: the home then gets search permission for others (mode 0711; a
 * home with only that is not counted as open by any executor), and the directory's group
 * is the command user's for the execution ({@link WorkingDirectoryGrant}). Others can
 * then pass through the home but not list it, and the directories below are owner-only or
 * the command user's group's alone.
 * <p>
 * <strong>A home that is already there.</strong> Its name is predictable, so in a shared
 * work directory another user can create it first. It is used only if it is a directory
 * (not a symbolic link), owned by this JVM's user and without any group or other
 * permission; a symbolic link, anything but a directory or another user's fails closed
 * with an error that names it ({@link SandboxLaunchException} on the first execution)
 * rather than be used (it would give its owner this user's directories) or replaced by a
 * randomly named home (which the next JVM's orphan cleanup could not find). Removing the
 * planted entry, or a work directory that only this user can write, ends it. In a sticky
 * work directory (like {@code /tmp}) no other user can rename or remove the home once it
 * is this user's, so what was checked stays true.
 * <p>
 * <strong>A home opened to others.</strong> The rungs without a mount namespace see the
 * home's host directory, and Landlock does not cover metadata: a command can
 * {@code chmod 755 ..} and open the home to other local users for the rest of its
 * execution. The home is checked before every execution (one {@code lstat}); one that is
 * still this user's real directory but has group or other permissions is repaired (mode
 * 0700 through a descriptor opened without following links, with a warning) unless
 * another user put an entry directly in it meanwhile: then it is refused, naming the
 * entry, until the entry is gone.
 * <p>
 * <strong>Whose directories are orphaned.</strong> A JVM that was killed (SIGKILL, the
 * OOM killer) never reached its {@code finally}, so its directories stay. The pid in a
 * name cannot tell whether they are still in use: a JVM in another PID namespace (a
 * container sharing the directory) has a pid that means nothing here, and pids are
 * reused. So each JVM creates, per work directory, in its user's home there, a lock file
 * {@code cave-sandbox-lock-<pid>-<token>} (owner-only) and holds an exclusive lock on it
 * for its whole life; its directories are named
 * {@code cave-sandbox-<pid>-<token>-<random>}. The kernel releases a record lock when the
 * process that holds it ends, however it ends (fcntl(2), which
 * {@link FileChannel#tryLock()} uses on Linux; flock(2) locks behave the same way), and a
 * lock is seen by every process that opens the same file, whatever its PID namespace. A
 * directory is therefore removed only if this JVM can take the lock of its owner, and
 * only if it and its lock file belong to this JVM's user; anything else (another user's
 * directories, a live JVM's, directories without a lock file) is left alone, silently.
 * When the last executor of this JVM on a work directory is closed and none of this JVM's
 * directories is left there, the lock file is removed and the lock let go; a lock file
 * left by a JVM that ended without that is removed by the next executor created on the
 * work directory.
 * <p>
 * <strong>Off the caller's thread.</strong> Emptying, renewing and deleting a released
 * directory is done by one background thread of this instance, {@value #CLEANER_THREAD},
 * so that an execution returns without waiting for it (an {@code rmdir} alone costs about
 * half a millisecond where the filesystem discards freed blocks online; BENCHMARKS.md). A
 * directory enters the reuse queue only once it is renewed. Where the cleaner has
 * {@value #MAX_PENDING} directories or more waiting (or {@code maxKept}, if more), or is
 * shut down, the releasing thread does the work itself, as it did before.
 * {@link #close()} waits for what was handed to the cleaner.
 */
public final class PrivateDirectories {

	public static final String CLEANER_THREAD = "cave-sandbox-cleaner";

	private static final int MAX_PENDING = 16;

	/**
	 * How long {@link #close()} waits for the cleaner before it cleans what is left
	 * itself.
	 */
	private static final long CLOSE_WAIT_SECONDS = 60;

	private static final String PREFIX = "cave-sandbox-";

	/**
	 * Every home this JVM has used, in any work directory: no execution's working
	 * directory may contain one or lie in one (see {@link #isOrHoldsAHome}).
	 */
	private static final Set<Path> KNOWN_HOMES = ConcurrentHashMap.newKeySet();

	private static final String LOCK_PREFIX = PREFIX + "lock-";

	private static final Pattern LOCK_NAME = Pattern.compile(Pattern.quote(LOCK_PREFIX) + "[0-9]+-[0-9a-z]+");

	/** This JVM's lock per work directory (by real path), held until the JVM ends. */
	private static final Map<Path, OwnerLock> LOCKS = new ConcurrentHashMap<>();

	private static final SecureRandom RANDOM = new SecureRandom();

	private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	/**
	 * What opens a home to others. Search permission for others alone does not: a command
	 * user of the seccomp rung needs it (see
	 * {@link #PrivateDirectories(Path, int, boolean, boolean)}), and without read
	 * permission nobody can list the randomly named directories, each mode 0700 or 0770
	 * with the command user's group.
	 */
	private static final Set<PosixFilePermission> GROUP_OR_OTHER = EnumSet.of(PosixFilePermission.GROUP_READ,
			PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
			PosixFilePermission.OTHERS_WRITE);

	private static final Set<PosixFilePermission> SEARCHABLE = PosixFilePermissions.fromString("rwx-----x");

	/**
	 * Homes refused after a repair because another user had put an entry in them: checked
	 * again before every execution, although their mode is owner-only again, until the
	 * entry is gone.
	 */
	private static final Set<Path> REFUSED_HOMES = ConcurrentHashMap.newKeySet();

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(PrivateDirectories.class);

	/** This JVM's uid, once known. */
	private static volatile Integer uid;

	private final Path workDirectory;

	private final int maxKept;

	private final boolean reuse;

	private final boolean searchable;

	private final Queue<Path> emptied = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean closed = new AtomicBoolean();

	/** One thread at most, ended when idle. */
	private final ThreadPoolExecutor cleaner;

	/**
	 * This JVM's lock on the work directory, once taken; this instance counts as one of
	 * its users.
	 */
	private volatile @Nullable OwnerLock lock;

	/** The file store of this user's home in the work directory, once found. */
	private volatile @Nullable FileStore store;

	/**
	 * Create the directories of one executor and remove the orphaned ones in the work
	 * directory.
	 * @param workDirectory where the directories are created
	 * @param maxKept how many emptied directories are kept at most
	 * @param reuse whether emptied directories are kept at all: only where nothing of an
	 * execution outlives it (an isolated execution, whose PID namespace is gone)
	 */
	public PrivateDirectories(Path workDirectory, int maxKept, boolean reuse) {
		this(workDirectory, maxKept, reuse, false);
	}

	/**
	 * Create the directories of one executor and remove the orphaned ones in the work
	 * directory.
	 * @param workDirectory where the directories are created
	 * @param maxKept how many emptied directories are kept at most
	 * @param reuse whether emptied directories are kept at all: only where nothing of an
	 * execution outlives it (an isolated execution, whose PID namespace is gone)
	 * @param searchable whether the home gets search permission for others (mode 0711):
	 * for a command user of the seccomp rung, another uid of the host, which must reach
	 * its directory by its path ({@code TMPDIR}, {@code HOME})
	 */
	public PrivateDirectories(Path workDirectory, int maxKept, boolean reuse, boolean searchable) {
		this.searchable = searchable;
		this.workDirectory = workDirectory;
		this.maxKept = maxKept;
		this.reuse = reuse;
		this.cleaner = new ThreadPoolExecutor(1, 1, 2, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(Math.max(MAX_PENDING, maxKept)), (runnable) -> {
					Thread thread = new Thread(runnable, CLEANER_THREAD);
					thread.setDaemon(true);
					return thread;
				});
		this.cleaner.allowCoreThreadTimeOut(true);
		try {
			this.lock = OwnerLock.register(workDirectory);
		}
		catch (IOException | RuntimeException ex) {
			// an unusable work directory shows up on the first execution, with its cause
			return;
		}
		removeOrphans(this.lock);
	}

	/**
	 * Take a renewed private directory of an earlier execution, or create one in this
	 * user's home in the work directory; neither while the work directory is no longer
	 * writable or has no space left (a cheap check before each execution: one
	 * {@code access} and one {@code statvfs} call), and only after its home was checked
	 * (one {@code lstat}; see {@link #checkHome}). A renewed directory is removed and
	 * created again (see {@link #renew}), so reuse does not save the {@code rmdir} that
	 * costs most where the filesystem discards freed blocks online (BENCHMARKS.md), but
	 * the cleaner does it off the caller's thread; reuse saves choosing a new random
	 * name.
	 * @return an empty, owner-only directory
	 * @throws WorkDirectoryUnusableException if none can be created because the work
	 * directory is unusable (missing, read-only, full, ...)
	 * @throws SandboxLaunchException if none can be created for another reason (a home
	 * that another user planted)
	 * @throws ExecutionCancelledException if this is closed
	 */
	public Path create() {
		if (this.closed.get()) {
			throw new ExecutionCancelledException("the executor is closed", null);
		}
		String failure = "could not create a private working directory in " + this.workDirectory
				+ ", the work directory (workDirectory)";
		try {
			OwnerLock own = registered();
			WorkDirectoryCheck.Reason unusable = WorkDirectoryCheck.beforeExecution(this.workDirectory, own.home,
					store(own.home));
			if (unusable != null) {
				throw new WorkDirectoryUnusableException(
						failure + ": " + WorkDirectoryCheck.describe(this.workDirectory, unusable));
			}
			checkHome(own.home, uid(this.workDirectory));
			if (this.searchable) {
				makeSearchable(own.home);
			}
			Path reused = this.emptied.poll();
			return (reused != null) ? reused : Files.createTempDirectory(own.home, own.directoryPrefix());
		}
		catch (IOException ex) {
			if (WorkDirectoryCheck.reason(this.workDirectory, ex) != null) {
				throw new WorkDirectoryUnusableException(
						failure + ": " + WorkDirectoryCheck.explain(this.workDirectory, ex), ex);
			}
			throw new SandboxLaunchException(failure + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * The file store of the home, found once ({@link Files#getFileStore} reads the mount
	 * table), or {@code null} where it cannot be found.
	 */
	private @Nullable FileStore store(Path home) {
		FileStore known = this.store;
		if (known == null) {
			try {
				known = Files.getFileStore(home);
			}
			catch (IOException | RuntimeException ex) {
				return null;
			}
			this.store = known;
		}
		return known;
	}

	/**
	 * After an isolated execution the whole PID namespace is gone, so nothing can still
	 * write into its private directory: it is emptied, recreated owner-only, and kept for
	 * the next execution (at most {@code maxKept} are kept). Anything else, and every
	 * directory when reuse is off (an unisolated execution's background processes may
	 * live on), is deleted. The cleaner thread does it, unless it is busy with too many
	 * or this is closed: then the calling thread does.
	 * @param directory a directory from {@link #create()}
	 */
	public void release(Path directory) {
		if (this.closed.get()) {
			DirectoryTrees.delete(directory);
			return;
		}
		try {
			this.cleaner.execute(new Cleanup(directory));
		}
		catch (RejectedExecutionException ex) {
			// full, or shut down by close(): clean() deletes once closed
			clean(directory);
		}
	}

	/**
	 * Renew a released directory into the reuse queue, or delete it. A directory offered
	 * while {@link #close()} runs is taken back and deleted here unless close took it
	 * first, so none is left in the queue.
	 */
	private void clean(Path directory) {
		if (this.reuse && !this.closed.get() && this.emptied.size() < this.maxKept && renew(directory)) {
			this.emptied.offer(directory);
			if (this.closed.get() && this.emptied.remove(directory)) {
				DirectoryTrees.delete(directory);
			}
			return;
		}
		DirectoryTrees.delete(directory);
	}

	/**
	 * Return whether a directory is, contains or lies in a home of private directories
	 * (and of the launcher) that this JVM has used, or lies in any directory named like
	 * this user's home (another JVM's, in another work directory).
	 * @param directory a real path
	 * @return the home it touches, or {@code null}
	 */
	public static @Nullable Path isOrHoldsAHome(Path directory) {
		for (Path known : KNOWN_HOMES) {
			Path home;
			try {
				home = known.toRealPath();
			}
			catch (IOException ex) {
				continue;
			}
			if (home.startsWith(directory) || directory.startsWith(home)) {
				return home;
			}
			for (Path part = directory; part != null; part = part.getParent()) {
				if (home.getFileName().equals(part.getFileName())) {
					return part;
				}
			}
		}
		return null;
	}

	private OwnerLock registered() throws IOException {
		OwnerLock own = this.lock;
		if (own == null) {
			synchronized (this) {
				if (this.lock == null) {
					this.lock = OwnerLock.register(this.workDirectory);
				}
				own = this.lock;
			}
		}
		return own;
	}

	/**
	 * Wait for the cleaner to finish what was handed to it (what is still waiting after
	 * {@value #CLOSE_WAIT_SECONDS} seconds, or when this thread is interrupted, is
	 * deleted here), then delete the kept directories; every later release deletes its
	 * directory on the releasing thread. The last user of this JVM's lock on the work
	 * directory removes the lock file and lets the lock go if no directory of this JVM is
	 * left there; otherwise it stays until the JVM ends.
	 */
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.cleaner.shutdown();
		try {
			if (!this.cleaner.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
				this.cleaner.shutdownNow().forEach(Runnable::run);
			}
		}
		catch (InterruptedException ex) {
			this.cleaner.shutdownNow().forEach(Runnable::run);
			Thread.currentThread().interrupt();
		}
		for (Path directory = this.emptied.poll(); directory != null; directory = this.emptied.poll()) {
			DirectoryTrees.delete(directory);
		}
		OwnerLock own;
		synchronized (this) {
			own = this.lock;
		}
		if (own != null) {
			own.unregister();
		}
	}

	/**
	 * Make a directory new for reuse: its entries are deleted, then the directory itself
	 * is removed and created again under the same name, owner-only. A new inode carries
	 * nothing the last command left on the directory itself for the next one to read: no
	 * extended attributes, no POSIX ACL (a default ACL, {@code system.posix_acl_default},
	 * would reach every file the next command creates, and the JDK can neither see nor
	 * remove it on Linux), no timestamps, no mode. The name cannot be taken in between:
	 * the home is this user's alone.
	 * @return whether the directory is there again, new and empty
	 */
	private static boolean renew(Path directory) {
		try {
			Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
			try (DirectoryStream<Path> children = Files.newDirectoryStream(directory)) {
				for (Path child : children) {
					DirectoryTrees.delete(child);
				}
			}
			Files.delete(directory);
			Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
			return true;
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

	/**
	 * Remove the private directories in the work directory whose JVM has ended, as the
	 * class comment describes. Never throws; what cannot be proven orphaned and this
	 * user's is left.
	 * @param workDirectory the work directory
	 */
	static void removeOrphans(Path workDirectory) {
		OwnerLock own;
		try {
			own = OwnerLock.of(workDirectory);
		}
		catch (IOException | RuntimeException ex) {
			// an unusable work directory shows up on the first execution, with its cause
			return;
		}
		removeOrphans(own);
	}

	private static void removeOrphans(OwnerLock own) {
		try (DirectoryStream<Path> lockFiles = Files.newDirectoryStream(own.home, LOCK_PREFIX + "*")) {
			for (Path lockFile : lockFiles) {
				String name = lockFile.getFileName().toString();
				// Never open a lock file of this JVM: closing any descriptor of a file
				// releases the process's fcntl(2) locks on it.
				if (LOCK_NAME.matcher(name).matches() && !ownLockName(name) && !ownLockFile(lockFile)) {
					removeIfOrphaned(own.home, lockFile, own.owner);
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// unreadable: nothing of ours can be in it
		}
	}

	private static boolean ownLockName(String name) {
		return LOCKS.values().stream().anyMatch((lock) -> lock.file.getFileName().toString().equals(name));
	}

	/**
	 * Whether a file is one of this JVM's lock files under another name (a hard link):
	 * opening it and closing it again would release this JVM's lock, as any descriptor's
	 * close does.
	 */
	private static boolean ownLockFile(Path file) {
		try {
			Object key = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
			return key == null || LOCKS.values().stream().anyMatch((lock) -> key.equals(lock.fileKey));
		}
		catch (IOException | RuntimeException ex) {
			return true;
		}
	}

	private static void removeIfOrphaned(Path home, Path lockFile, UserPrincipal owner) {
		try {
			if (!Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS) || !ownedBy(lockFile, owner)) {
				return;
			}
			try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
					FileLock lock = channel.tryLock()) {
				if (lock == null) {
					return; // its JVM runs
				}
				String prefix = PREFIX + lockFile.getFileName().toString().substring(LOCK_PREFIX.length()) + "-";
				boolean left = false;
				try (DirectoryStream<Path> directories = Files.newDirectoryStream(home, prefix + "*")) {
					for (Path directory : directories) {
						if (Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS) && ownedBy(directory, owner)) {
							DirectoryTrees.delete(directory);
						}
						// Another user's look-alike names do not keep the lock file.
						left |= Files.exists(directory, LinkOption.NOFOLLOW_LINKS) && ownedBy(directory, owner);
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

	/**
	 * This JVM's user's home in a work directory, created if it is not there, checked if
	 * it is, as the class comment describes.
	 * @param workDirectory the work directory
	 * @return {@code <workDirectory>/cave-sandbox-<uid>}
	 * @throws IOException if it cannot be created, or is there but is not this user's
	 * alone
	 */
	public static Path home(Path workDirectory) throws IOException {
		int own = uid(workDirectory);
		Path home = workDirectory.resolve(PREFIX + own);
		KNOWN_HOMES.add(home.toAbsolutePath().normalize());
		try {
			Files.createDirectory(home, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
		}
		catch (FileAlreadyExistsException ex) {
			// checked below, like a new one
		}
		checkHome(home, own);
		return home;
	}

	/**
	 * Check a home of this user's private directories, before its first use and before
	 * every execution: it must be a directory (not a symbolic link), owned by this JVM's
	 * user, without group or other permissions. One that is this user's real directory
	 * but open to others (a command of a rung without a mount namespace can {@code chmod}
	 * it, since Landlock does not cover metadata) is repaired, see {@link #repair};
	 * anything else is refused.
	 * @param home the home
	 * @param own this JVM's uid
	 * @throws IOException if it is not this user's alone and cannot be made so
	 */
	private static void checkHome(Path home, int own) throws IOException {
		Map<String, Object> attributes = Files.readAttributes(home,
				"unix:uid,permissions,fileKey,isDirectory,isSymbolicLink", LinkOption.NOFOLLOW_LINKS);
		int owner = (Integer) attributes.get("uid");
		boolean directory = (Boolean) attributes.get("isDirectory");
		if (!directory || owner != own) {
			throw new IOException(refusal(home, own, ((Boolean) attributes.get("isSymbolicLink")) ? "is a symbolic link"
					: !directory ? "is not a directory" : "is owned by uid " + owner));
		}
		@SuppressWarnings("unchecked")
		Set<PosixFilePermission> permissions = (Set<PosixFilePermission>) attributes.get("permissions");
		Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
		open.addAll(permissions);
		open.retainAll(GROUP_OR_OTHER);
		if (!open.isEmpty() || REFUSED_HOMES.contains(home.toAbsolutePath().normalize())) {
			repair(home, own, attributes.get("fileKey"), permissions, !open.isEmpty());
		}
	}

	/**
	 * Make a home that is this user's real directory but open to others owner-only again,
	 * in one place: it is opened without following a symbolic link (through its parent,
	 * {@code O_NOFOLLOW}) and must be the directory that was checked (the same file key,
	 * before and after); its mode is set to 0700 through that descriptor; then no entry
	 * directly in it may belong to another user, who could have put it there while it was
	 * open. Where one does, the home is refused, naming the entry, and checked again
	 * before every later execution of this JVM, until the entry is gone. A repair is
	 * logged as a warning that names the directory and the mode it had.
	 */
	private static void repair(Path home, int own, @Nullable Object fileKey, Set<PosixFilePermission> found,
			boolean open) throws IOException {
		Path key = home.toAbsolutePath().normalize();
		String mode = PosixFilePermissions.toString(found);
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(key.getParent())) {
			if (fileKey == null || !(parent instanceof SecureDirectoryStream<Path> secureParent)) {
				throw new IOException(refusal(home, own, "is open to others (" + mode + ") and cannot be repaired "
						+ "without following links on this platform"));
			}
			try (SecureDirectoryStream<Path> opened = secureParent.newDirectoryStream(key.getFileName(),
					LinkOption.NOFOLLOW_LINKS)) {
				PosixFileAttributeView view = opened.getFileAttributeView(PosixFileAttributeView.class);
				PosixFileAttributes attributes = view.readAttributes();
				if (!attributes.isDirectory() || !fileKey.equals(attributes.fileKey())) {
					throw new IOException(refusal(home, own, "was replaced while it was checked"));
				}
				if (open) {
					view.setPermissions(OWNER_ONLY);
				}
				for (Path entry : opened) {
					UserPrincipal owner = ownerIfPresent(opened, entry.getFileName());
					if (owner != null && !owner.equals(attributes.owner())) {
						REFUSED_HOMES.add(key);
						throw new IOException(refusal(home, own,
								"was open to others" + (open ? " (" + mode + ")" : "") + " and holds "
										+ key.resolve(entry.getFileName()) + ", owned by " + owner.getName()
										+ " (remove that entry)"));
					}
				}
			}
		}
		catch (FileSystemException ex) {
			throw new IOException(refusal(home, own,
					(open ? "is open to others (" + mode + ") and cannot be repaired: " : "cannot be checked again: ")
							+ ex),
					ex);
		}
		REFUSED_HOMES.remove(key);
		if (!open) {
			return;
		}
		BasicFileAttributes after = Files.readAttributes(home, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
		if (!fileKey.equals(after.fileKey())) {
			throw new IOException(refusal(home, own, "was replaced while it was repaired"));
		}
		logger.warn("Repaired {}, the home of uid {}'s private directories: it was open to others ({}), now {}; "
				+ "other local users could reach the private directories while it was. A command of a rung without "
				+ "a mount namespace can change the mode of its directory's parent (Landlock does not cover metadata)",
				home, own, mode, PosixFilePermissions.toString(OWNER_ONLY));
	}

	/**
	 * Give others search permission on a checked home (mode 0711), through a descriptor
	 * opened without following a link, where it lacks it.
	 */
	private static void makeSearchable(Path home) throws IOException {
		Path key = home.toAbsolutePath().normalize();
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(key.getParent())) {
			if (!(parent instanceof SecureDirectoryStream<Path> secureParent)) {
				throw new IOException(
						"cannot open " + home + " for the command user without following links on this " + "platform");
			}
			try (SecureDirectoryStream<Path> opened = secureParent.newDirectoryStream(key.getFileName(),
					LinkOption.NOFOLLOW_LINKS)) {
				PosixFileAttributeView view = opened.getFileAttributeView(PosixFileAttributeView.class);
				if (!view.readAttributes().permissions().contains(PosixFilePermission.OTHERS_EXECUTE)) {
					view.setPermissions(SEARCHABLE);
				}
			}
		}
	}

	/**
	 * The owner of an entry of an opened home, or {@code null} if it is gone: this JVM's
	 * cleaner deletes released directories while a home is repaired, and an entry that is
	 * no longer there cannot be used to reach anything.
	 */
	private static @Nullable UserPrincipal ownerIfPresent(SecureDirectoryStream<Path> opened, Path name)
			throws IOException {
		try {
			return opened.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.readAttributes()
				.owner();
		}
		catch (NoSuchFileException ex) {
			return null;
		}
	}

	private static String refusal(Path home, int own, String what) {
		return "refusing " + home + " as the home of uid " + own + "'s private directories: it " + what
				+ "; another user may have created or opened it to reach them. Remove it, or choose a work directory"
				+ " that only this user can write";
	}

	/** The uid that owns what this JVM creates: a new file's owner, asked once. */
	private static int uid(Path workDirectory) throws IOException {
		Integer known = uid;
		if (known == null) {
			Path probe = Files.createTempFile(workDirectory, PREFIX + "uid-", null);
			try {
				known = (Integer) Files.getAttribute(probe, "unix:uid", LinkOption.NOFOLLOW_LINKS);
			}
			finally {
				Files.deleteIfExists(probe);
			}
			uid = known;
		}
		return known;
	}

	private static Path realPath(Path directory) {
		try {
			return directory.toRealPath();
		}
		catch (IOException ex) {
			return directory.toAbsolutePath().normalize();
		}
	}

	/** A released directory handed to the cleaner. */
	private final class Cleanup implements Runnable {

		private final Path directory;

		Cleanup(Path directory) {
			this.directory = directory;
		}

		@Override
		public void run() {
			clean(this.directory);
		}

	}

	/**
	 * This JVM's lock on a work directory: held while an executor of this JVM uses the
	 * directory or a directory of this JVM is left in it, and in any case released by the
	 * kernel when the JVM ends.
	 */
	private static final class OwnerLock {

		private static final int ATTEMPTS = 10;

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

		String directoryPrefix() {
			return this.directoryPrefix;
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
			Path home = home(workDirectory);
			for (int attempt = 1;; attempt++) {
				String id = ProcessHandle.current().pid() + "-" + Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36);
				Path file = home.resolve(LOCK_PREFIX + id);
				FileChannel channel = FileChannel.open(file,
						Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
						PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
				FileLock lock = null;
				try {
					lock = channel.tryLock();
					// Another JVM's cleanup may have taken the new, still unlocked file
					// for an orphaned one and removed it: then take another name.
					BasicFileAttributes attributes = (lock != null) ? attributesIfPresent(file) : null;
					if (attributes != null && attributes.isRegularFile()) {
						return new OwnerLock(workDirectory, home, file, lock,
								Files.getOwner(file, LinkOption.NOFOLLOW_LINKS), attributes.fileKey(),
								PREFIX + id + "-");
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

	}

}
