package dev.cavesandbox.internal.launcher;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

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
 * when the process and everything it left have ended). Free uids are handed out least
 * recently released first, so that a uid rests as long as the range allows before it is
 * used again; and a uid is handed out only when no process of the host (as far as this
 * JVM's {@code /proc} shows) runs as it, in any of its real, effective, saved or
 * filesystem uids: a process left behind by an earlier execution (or one of another
 * program that uses the uid) never meets a new one. The range holds at least
 * {@code maxConcurrent} uids (the settings check it), so an execution that holds a slot
 * always finds a uid that no running execution holds.
 * <p>
 * Thread-safe.
 */
public final class CommandUsers {

	private static final Path PROC = Path.of("/proc");

	private final SandboxSettings.CommandUserRange range;

	/** The free uids, least recently released first; guarded by {@code this}. */
	private final ArrayDeque<Long> free = new ArrayDeque<>();

	/**
	 * Create the pool of a range.
	 * @param range the uids; each is free at first
	 */
	public CommandUsers(SandboxSettings.CommandUserRange range) {
		this.range = range;
		for (long uid = range.first(); uid <= range.last(); uid++) {
			this.free.add(uid);
		}
	}

	/**
	 * Take the free uid released longest ago of which no process runs.
	 * @return the uid, to be {@linkplain #release(long) released} once the execution's
	 * process tree has ended
	 * @throws SandboxLaunchException ({@value SandboxLaunchException#CODE}) if a process
	 * runs as each free uid
	 */
	public long acquire() {
		Set<Long> running = runningUids();
		synchronized (this) {
			Iterator<Long> candidates = this.free.iterator();
			while (candidates.hasNext()) {
				long uid = candidates.next();
				if (!running.contains(uid)) {
					candidates.remove();
					return uid;
				}
			}
			List<Long> busy = new ArrayList<>(this.free);
			throw new SandboxLaunchException("no command user is free: processes run as each of the " + busy.size()
					+ " uids of the range " + this.range + " that no running execution holds "
					+ ((busy.size() > 8) ? busy.subList(0, 8) + "..." : busy)
					+ " (left behind by earlier executions, or of another program that uses those uids); end them, "
					+ "or set cave.sandbox.linux.command-user-range to uids that nothing else uses");
		}
	}

	/**
	 * Give a uid back, after the execution's process tree has ended.
	 * @param uid a uid that {@link #acquire()} returned
	 */
	public synchronized void release(long uid) {
		if (this.range.contains(uid) && !this.free.contains(uid)) {
			this.free.addLast(uid);
		}
	}

	/**
	 * Return the uids of the range of which a process runs now: the real, effective,
	 * saved and filesystem uids on the {@code Uid:} line of each {@code /proc/PID/status}
	 * (proc(5)). A process that ends while it is read is not counted.
	 * @return the uids
	 */
	Set<Long> runningUids() {
		Set<Long> uids = new HashSet<>();
		try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC,
				(path) -> isNumber(path.getFileName().toString()))) {
			for (Path process : processes) {
				addUids(process.resolve("status"), uids);
			}
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("cannot list the processes in " + PROC + " to choose a command user "
					+ "that no process runs as: " + ex.getMessage(), ex);
		}
		return uids;
	}

	private void addUids(Path status, Set<Long> uids) {
		try (BufferedReader reader = Files.newBufferedReader(status)) {
			for (String line = reader.readLine(); line != null; line = reader.readLine()) {
				if (line.startsWith("Uid:")) {
					for (String field : line.substring("Uid:".length()).trim().split("\\s+")) {
						if (isNumber(field) && this.range.contains(Long.parseLong(field))) {
							uids.add(Long.parseLong(field));
						}
					}
					return;
				}
			}
		}
		catch (IOException ex) {
			// The process ended meanwhile.
		}
	}

	private static boolean isNumber(String text) {
		return !text.isEmpty() && text.length() <= 10 && text.chars().allMatch((c) -> c >= '0' && c <= '9');
	}

}
