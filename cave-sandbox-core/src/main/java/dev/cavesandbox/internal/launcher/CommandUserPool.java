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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of one range's command users in this JVM, shared by every
 * {@link CommandUsers} of that range: which uids are checked free, which wait for a
 * check, and the checks themselves (the rules are {@link CommandUsers}'s). Thread-safe.
 */
final class CommandUserPool {

	private static final Logger logger = LoggerFactory.getLogger(CommandUserPool.class);

	private static final Path PROC = Path.of("/proc");

	private final SandboxSettings.CommandUserRange range;

	/**
	 * The uids checked free, least recently released first; guarded by {@code this}.
	 */
	private final ArrayDeque<Long> free = new ArrayDeque<>();

	/**
	 * The uids not held by an execution and not checked free since their release, in the
	 * order of their release, each with the number of its release (0: never held);
	 * guarded by {@code this}.
	 */
	private final LinkedHashMap<Long, Long> unchecked = new LinkedHashMap<>();

	/** How many uids were released so far; guarded by {@code this}. */
	private long releases;

	/** Whether a check is waiting to run; guarded by {@code this}. */
	private boolean checkWaiting;

	/**
	 * Create the pool of a range.
	 * @param range the uids; each is unchecked at first
	 */
	CommandUserPool(SandboxSettings.CommandUserRange range) {
		this.range = range;
		for (long uid = range.first(); uid <= range.last(); uid++) {
			this.unchecked.put(uid, 0L);
		}
	}

	/**
	 * Take the checked uid released longest ago; where none is checked, check every
	 * unchecked uid first (one scan of {@code /proc} on this thread).
	 * @return the uid, to be {@linkplain #release(long, Executor) released} once the
	 * execution's process tree has ended
	 * @throws SandboxLaunchException ({@value SandboxLaunchException#CODE}) if a process
	 * runs as each uid that no running execution holds
	 */
	long acquire() {
		long upTo;
		synchronized (this) {
			Long checked = this.free.pollFirst();
			if (checked != null) {
				return checked;
			}
			upTo = this.releases;
		}
		Set<Long> running = runningUids();
		synchronized (this) {
			markFree(running, upTo);
			Long checked = this.free.pollFirst();
			if (checked != null) {
				return checked;
			}
			List<Long> busy = new ArrayList<>(this.unchecked.keySet());
			throw new SandboxLaunchException("no command user is free: processes run as each of the " + busy.size()
					+ " uids of the range " + this.range + " that no running execution holds "
					+ ((busy.size() > 8) ? busy.subList(0, 8) + "..." : busy)
					+ " (left behind by earlier executions, or of another program that uses those uids); end them, "
					+ "or set cave.sandbox.linux.command-user-range to uids that nothing else uses");
		}
	}

	/**
	 * Give a uid back, after the execution's process tree has ended, and have it checked
	 * (one check serves every release made before it starts).
	 * @param uid a uid that {@link #acquire()} returned
	 * @param checks where the check runs (a refused check leaves the uid to the next
	 * check or acquisition)
	 */
	void release(long uid, Executor checks) {
		synchronized (this) {
			if (!this.range.contains(uid) || this.free.contains(uid) || this.unchecked.containsKey(uid)) {
				return;
			}
			this.unchecked.put(uid, ++this.releases);
			if (this.checkWaiting) {
				return;
			}
			this.checkWaiting = true;
		}
		try {
			checks.execute(this::check);
		}
		catch (RejectedExecutionException ex) {
			// The next check or acquisition checks the uid.
			synchronized (this) {
				this.checkWaiting = false;
			}
		}
	}

	/**
	 * Check every uid released before this starts: those of which no process runs are
	 * handed out from now on.
	 */
	private void check() {
		long upTo;
		synchronized (this) {
			this.checkWaiting = false;
			upTo = this.releases;
		}
		Set<Long> running;
		try {
			running = runningUids();
		}
		catch (SandboxLaunchException ex) {
			// The next acquisition that finds no checked uid scans, and fails, coded.
			logger.debug("could not check the released command users: {}", ex.getMessage());
			return;
		}
		synchronized (this) {
			markFree(running, upTo);
		}
	}

	/**
	 * Move each unchecked uid released up to the given release of which no process runs
	 * to the checked ones, in the order of release; guarded by {@code this}.
	 */
	private void markFree(Set<Long> running, long upTo) {
		Iterator<Map.Entry<Long, Long>> entries = this.unchecked.entrySet().iterator();
		while (entries.hasNext()) {
			Map.Entry<Long, Long> entry = entries.next();
			if (entry.getValue() > upTo) {
				continue;
			}
			if (running.contains(entry.getKey())) {
				logger.debug("a process runs as the command user {}, which no execution holds: not handed out",
						entry.getKey());
				continue;
			}
			entries.remove();
			this.free.addLast(entry.getKey());
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
