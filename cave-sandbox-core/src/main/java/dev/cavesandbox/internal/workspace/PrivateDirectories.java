package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.WorkDirectoryUnusableException;
import org.jspecify.annotations.Nullable;

/**
 * The pool of one executor's private working directories, in this user's
 * {@link PrivateHome} in the work directory: one created owner-only (mode 0700) for each
 * execution that names no working directory; after it, emptied, renewed and kept for the
 * next execution where nothing can still write into it (reuse on, at most
 * {@code maxKept}), deleted otherwise. Creating a pool takes this JVM's {@link OwnerLock}
 * on the work directory and runs the {@link OrphanSweep}.
 * <p>
 * Renewing and deleting a released directory is done off the caller's thread by one
 * background thread of this instance, {@value #CLEANER_THREAD} (an {@code rmdir} alone
 * costs about half a millisecond where the filesystem discards freed blocks online;
 * BENCHMARKS.md). A directory enters the reuse queue only once it is renewed. Where the
 * cleaner has {@value #MAX_PENDING} directories or more waiting (or {@code maxKept}, if
 * more), or is shut down, the releasing thread does the work itself. {@link #close()}
 * waits for what was handed to the cleaner.
 */
public final class PrivateDirectories {

	public static final String CLEANER_THREAD = "cave-sandbox-cleaner";

	private static final int MAX_PENDING = 16;

	/**
	 * How long {@link #close()} waits for the cleaner before it cleans what is left
	 * itself.
	 */
	private static final long CLOSE_WAIT_SECONDS = 60;

	private final Path workDirectory;

	private final int maxKept;

	private final boolean reuse;

	private final boolean searchable;

	private final Queue<Path> emptied = new ConcurrentLinkedQueue<>();

	/**
	 * Directories in {@link #emptied} or being renewed for it: a slot is taken before the
	 * renewal, since the cleaner and releasing threads renew side by side.
	 */
	private final AtomicInteger keptSlots = new AtomicInteger();

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
	 * for a command user of the seccomp mechanism, another uid of the host, which must
	 * reach its directory by its path ({@code TMPDIR}, {@code HOME})
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
		OwnerLock own;
		try {
			own = OwnerLock.register(workDirectory);
		}
		catch (IOException | RuntimeException ex) {
			// an unusable work directory shows up on the first execution, with its cause
			return;
		}
		this.lock = own;
		OrphanSweep.removeOrphans(own);
		SocketRoom.warnIfShort(own.home());
	}

	/**
	 * Take a renewed private directory of an earlier execution, or create one in this
	 * user's home in the work directory; neither while the work directory is no longer
	 * writable or has no space left (a cheap check before each execution: one
	 * {@code access} and one {@code statvfs} call), and only after its home was checked
	 * (one {@code lstat}; see {@link PrivateHome}). A renewed directory is removed and
	 * created again (see {@link #renew}), so reuse does not save the {@code rmdir} that
	 * costs most where the filesystem discards freed blocks online (BENCHMARKS.md), but
	 * the cleaner does it off the caller's thread; reuse saves choosing a new name.
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
			WorkDirectoryCheck.Reason unusable = WorkDirectoryCheck.beforeExecution(this.workDirectory, own.home(),
					store(own.home()));
			if (unusable != null) {
				throw new WorkDirectoryUnusableException(
						failure + ": " + WorkDirectoryCheck.describe(this.workDirectory, unusable));
			}
			checkHome(own);
			Path reused = this.emptied.poll();
			if (reused == null) {
				return own.createDirectory();
			}
			this.keptSlots.decrementAndGet();
			return reused;
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
	 * Check the home again before an execution that takes a directory created earlier (a
	 * warm sandbox's, at its claim), as {@link #create()} does before each: one
	 * {@code lstat}, a home opened to others repaired (see {@link PrivateHome}). A
	 * command of a mechanism without a mount namespace may have opened it after the warm
	 * sandbox was prepared.
	 * @throws SandboxLaunchException if the home is not this user's alone and cannot be
	 * made so
	 */
	public void checkHome() {
		try {
			checkHome(registered());
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("the private directories' home in " + this.workDirectory
					+ " (workDirectory) is unusable: " + ex.getMessage(), ex);
		}
	}

	private void checkHome(OwnerLock own) throws IOException {
		PrivateHome.checkAgain(own.home(), this.workDirectory);
		if (this.searchable) {
			PrivateHome.makeSearchable(own.home());
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
	 * Run a task on the cleaner thread, after the directories released before it: work of
	 * the executor that belongs after an execution's end and off the caller's thread (the
	 * check of a released command user, {@code CommandUsers}).
	 * @param task the task, which must not throw
	 * @throws RejectedExecutionException if the cleaner has too much waiting or this is
	 * closed: the task does not run
	 */
	public void runOnCleaner(Runnable task) {
		if (this.closed.get()) {
			throw new RejectedExecutionException("the private directories are closed");
		}
		this.cleaner.execute(task);
	}

	/**
	 * Renew a released directory into the reuse queue, or delete it. A directory offered
	 * while {@link #close()} runs is taken back and deleted here unless close took it
	 * first, so none is left in the queue.
	 */
	private void clean(Path directory) {
		if (this.reuse && !this.closed.get() && takeKeptSlot()) {
			if (renew(directory)) {
				this.emptied.offer(directory);
				if (this.closed.get() && this.emptied.remove(directory)) {
					this.keptSlots.decrementAndGet();
					DirectoryTrees.delete(directory);
				}
				return;
			}
			this.keptSlots.decrementAndGet();
		}
		DirectoryTrees.delete(directory);
	}

	/** Take one of the {@code maxKept} slots, if one is free. */
	private boolean takeKeptSlot() {
		int taken = this.keptSlots.get();
		while (taken < this.maxKept) {
			if (this.keptSlots.compareAndSet(taken, taken + 1)) {
				return true;
			}
			taken = this.keptSlots.get();
		}
		return false;
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
			this.keptSlots.decrementAndGet();
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
			Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PrivateHome.OWNER_ONLY));
			return true;
		}
		catch (IOException | RuntimeException ex) {
			return false;
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

}
