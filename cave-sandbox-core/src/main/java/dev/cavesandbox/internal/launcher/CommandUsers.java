package dev.cavesandbox.internal.launcher;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;

/**
 * The command users of a root JVM's executions on the seccomp mechanism, one uid of its
 * own for each running execution ({@link SandboxSettings.Linux#commandUserRange()}). That
 * mechanism has no user namespace, so whatever one uid of the host does is shared by
 * everything running as it: the kernel counts {@code RLIMIT_NPROC} per real uid
 * (kernel/fork.c, the ucounts of the initial user namespace), lets a process signal
 * another whose real or saved uid is its real or effective uid (kill(2)), and allows
 * ptrace access only where the uids and the gids match (ptrace_may_access). With a uid
 * each, one execution's fork storm, signals and ptrace stay its own. The gid stays the
 * command user's for every execution ({@link SandboxSettings.Linux#commandUser()}), so
 * that a working directory that overlapping executions share is given to one group for
 * all of them: what one execution makes group-accessible is open to the others.
 * <p>
 * An execution takes a uid with its slot ({@link #acquire()}) and gives it back with the
 * slot ({@link #release(long)}), after its process tree has ended (for {@code start()}:
 * when the process and everything it left have ended). A uid is handed out only once it
 * was <em>checked free</em>: no process of the host (as far as this JVM's {@code /proc}
 * shows) ran as it, in any of its real, effective, saved or filesystem uids, at a check
 * made after its last release. So a process left behind by an earlier execution (or one
 * of another program that uses the uid) never meets a new one. Checked uids are handed
 * out least recently released first, so that a uid rests as long as the range allows
 * before it is used again.
 * <p>
 * The check is made when a uid is released, off the caller's thread: on the executor's
 * {@code checks} executor (the private directories' cleaner thread, which renews the
 * execution's directories just before), one scan of {@code /proc} for every uid released
 * since the last one; {@link #acquire()} then takes a uid already checked, without
 * reading {@code /proc}. That is as safe as a check at acquisition: nothing of ours runs
 * as a released uid (the execution's tree was killed before the release, and no running
 * execution holds the uid until it is acquired again), so a check at release time misses
 * only a process of a foreign program that starts as the uid after the check; a check at
 * acquisition misses one that starts a moment after it just as well, and the range is
 * meant for these executions alone. A uid found in use at its check is not handed out: it
 * waits, unchecked, for a later check to find it free.
 * <p>
 * The executors of this JVM with the same range share one pool, so that no uid is held by
 * two running executions of the JVM at once, whichever executor runs them (each
 * executor's releases are checked on its own cleaner thread). Executors with different
 * but overlapping ranges, and other JVMs, are not kept apart by the pool, only by the
 * checks: give each a range of its own.
 * <p>
 * At first every uid is unchecked. The first acquisition, and any acquisition that finds
 * no checked uid (the check of a release has not run yet, or was refused because the
 * cleaner had too much waiting), scans {@code /proc} once on its own thread and checks
 * every unchecked uid at once; the acquisitions after it take those uids with no further
 * scan. The range holds at least {@code maxConcurrent} uids (the settings check it), so
 * an execution that holds a slot always finds a uid that no running execution holds.
 * <p>
 * Thread-safe.
 */
public final class CommandUsers {

	/**
	 * The pools of this JVM, one per range: the executors of one range share theirs.
	 */
	private static final Map<SandboxSettings.CommandUserRange, CommandUserPool> POOLS = new ConcurrentHashMap<>();

	private final CommandUserPool pool;

	private final Executor checks;

	/**
	 * Take the pool of a range, whose releases through this instance are checked on the
	 * releasing thread.
	 * @param range the uids; each is unchecked at first
	 */
	public CommandUsers(SandboxSettings.CommandUserRange range) {
		this(range, Runnable::run);
	}

	/**
	 * Take the pool of a range.
	 * @param range the uids; each is unchecked at first
	 * @param checks where the check after a release through this instance runs: the
	 * executor's cleaner thread (a refused check leaves the uid to the next check or
	 * acquisition)
	 */
	public CommandUsers(SandboxSettings.CommandUserRange range, Executor checks) {
		this.pool = POOLS.computeIfAbsent(range, CommandUserPool::new);
		this.checks = checks;
	}

	/**
	 * Take the checked uid released longest ago; where none is checked, check every
	 * unchecked uid first (one scan of {@code /proc} on this thread).
	 * @return the uid, to be {@linkplain #release(long) released} once the execution's
	 * process tree has ended
	 * @throws SandboxLaunchException ({@value SandboxLaunchException#CODE}) if a process
	 * runs as each uid that no running execution holds
	 */
	public long acquire() {
		return this.pool.acquire();
	}

	/**
	 * Give a uid back, after the execution's process tree has ended, and have it checked
	 * (on {@code checks}; one check serves every release made before it starts).
	 * @param uid a uid that {@link #acquire()} returned
	 */
	public void release(long uid) {
		this.pool.release(uid, this.checks);
	}

	/**
	 * Return the uids of the range of which a process runs now: the real, effective,
	 * saved and filesystem uids on the {@code Uid:} line of each {@code /proc/PID/status}
	 * (proc(5)). A process that ends while it is read is not counted.
	 * @return the uids
	 */
	Set<Long> runningUids() {
		return this.pool.runningUids();
	}

}
