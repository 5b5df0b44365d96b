package dev.cavesandbox.internal.process;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The end of a process tree: SIGTERM, the grace period, SIGKILL, the backstops below a
 * sandbox that did not take its own tree down, and what survived all that. Survivors are
 * pids that still {@linkplain ProcFs#running run} after {@link #SURVIVOR_WAIT} and, while
 * any of them is dying, up to {@link #EXIT_WAIT} more.
 */
final class TreeTeardown {

	static final long REAP_TIMEOUT_SECONDS = 5;

	static final Duration REAP_TIMEOUT = Duration.ofSeconds(REAP_TIMEOUT_SECONDS);

	/**
	 * How long the processes of a killed tree get to disappear before they count as
	 * survivors of the teardown.
	 */
	static final Duration SURVIVOR_WAIT = Duration.ofMillis(500);

	/**
	 * How long a killed tree gets beyond {@link #SURVIVOR_WAIT} while processes of it are
	 * dying (freeing their memory costs kernel time in proportion to what they mapped) so
	 * that the result comes once they are gone.
	 */
	static final Duration EXIT_WAIT = Duration.ofSeconds(REAP_TIMEOUT_SECONDS);

	/**
	 * How long a killed wrapper's sandbox gets, at most, to take its own tree down before
	 * the backstop ({@link #awaitTeardown}): the grace period where it is shorter. It is
	 * not the grace period itself, so that a teardown stays within the grace period plus
	 * one second whatever the grace period: the SIGTERM phase has had the grace period
	 * already, and a parent-death chain that a loaded machine delays is ended by the
	 * backstop instead. With the grace period as this wait, a destroy of a tree that
	 * ignores SIGTERM could take twice the grace period before the backstop (seen: 2.3 s,
	 * the tree still there at 2 s, on unshare with a grace period of 1 s under a CPU hog
	 * beside the suite).
	 */
	static final Duration TEARDOWN_WAIT = Duration.ofMillis(500);

	/** How long {@code killBelow} keeps killing what a subreaper still holds. */
	private static final Duration KILL_ROUNDS_TIMEOUT = Duration.ofSeconds(5);

	private final Duration killGracePeriod;

	TreeTeardown(Duration killGracePeriod) {
		this.killGracePeriod = killGracePeriod;
	}

	/**
	 * SIGTERM, the grace period, then SIGKILL. A sandbox gets each as one signal to its
	 * wrapper's launcher ({@code outer}, our direct child), never a listing of its tree
	 * first: a tree that forks without pause makes every read of {@code /proc} slow (a
	 * listing took seconds under a break-in's tree), time in which it runs on.
	 * {@code outer} passes SIGTERM on to the sandbox's PID 1 or the seccomp mechanism's
	 * {@code contain}, which give it to the command's whole tree at once
	 * ({@code kill(-1)} in the PID namespace, the command's process group), and its death
	 * takes the sandbox down (the parent-death signals of bwrap, unshare and PID 1;
	 * {@code contain}'s SIGHUP, then one SIGKILL to the process group). The result waits
	 * for the sandbox's own processes ({@link ProcFs#sandboxProcesses(Process)}), whose
	 * end is the tree's end; should they outlive the grace period, what they still hold
	 * is killed from here. Unisolated, every process of the tree gets the signals.
	 * @return the pids of the tree that were still alive after all that
	 * ({@link #survivors(List)}), empty when the whole tree is gone
	 */
	List<Long> terminate(Process process, boolean sandboxed) {
		if (!sandboxed) {
			return terminateUnisolated(process);
		}
		List<ProcessHandle> sandbox = ProcFs.sandboxProcesses(process);
		process.toHandle().destroy();
		if (!waitFor(process, this.killGracePeriod)) {
			process.toHandle().destroyForcibly();
		}
		awaitTeardown(sandbox);
		return survivors(killWhatIsLeft(sandbox));
	}

	/**
	 * The backstop once the sandbox's own teardown did not end within the grace period:
	 * SIGKILL to every process below the sandbox's own ({@link #killBelow}), then to
	 * them. Return the sandbox's processes and those found below them, which a killed
	 * subreaper ({@code contain}) leaves to init, so that what outlives the kill is still
	 * seen ({@link #survivors}).
	 */
	private List<ProcessHandle> killWhatIsLeft(List<ProcessHandle> sandbox) {
		if (sandbox.stream().noneMatch(ProcFs::running)) {
			return sandbox;
		}
		List<ProcessHandle> below = sandbox.stream().flatMap(ProcessHandle::descendants).toList();
		killBelow(sandbox);
		sandbox.forEach(ProcessHandle::destroyForcibly);
		below.forEach(ProcessHandle::destroyForcibly);
		return concat(sandbox, below);
	}

	/**
	 * Unisolated (fallback mode): SIGTERM to every process of the tree and the process,
	 * the grace period, then SIGKILL to each.
	 */
	private List<Long> terminateUnisolated(Process process) {
		List<ProcessHandle> tree = process.descendants().toList();
		tree.forEach(ProcessHandle::destroy);
		// Signal through the handle: Process.destroy() would also close our ends of the
		// pipes and lose what the tree writes while it shuts down.
		process.toHandle().destroy();
		if (!waitFor(process, this.killGracePeriod)) {
			tree = concat(process.descendants().toList(), tree);
			process.toHandle().destroyForcibly();
		}
		tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
		return survivors(tree);
	}

	/**
	 * The runner's close: SIGKILL to every running tree, a sandbox's own processes (cheap
	 * to find), or an unisolated tree, first seen, then the direct child killed before
	 * the rest, so that it cannot exit on its own (with its own status) between the two;
	 * up to {@link #TEARDOWN_WAIT} for the sandboxes to take their trees down, the
	 * backstop of a timeout ({@link #killWhatIsLeft}: what is below a sandbox that is
	 * still there is seen and killed too), and what still runs after that given to
	 * {@code survived}, per process.
	 * @param running the running processes, each with whether it is a sandbox wrapper
	 * @param survived what to do with the pids of a tree that outlived its teardown
	 */
	void killAll(Map<Process, Boolean> running, BiConsumer<Process, List<Long>> survived) {
		Map<Process, List<ProcessHandle>> trees = new HashMap<>();
		running.forEach((process, sandboxed) -> {
			trees.put(process, sandboxed ? ProcFs.sandboxProcesses(process) : process.descendants().toList());
			process.toHandle().destroyForcibly();
		});
		awaitTeardown(trees.values().stream().flatMap(List::stream).toList());
		trees.replaceAll((process, tree) -> killWhatIsLeft(tree));
		List<ProcessHandle> all = trees.values().stream().flatMap(List::stream).toList();
		awaitEnd(all, SURVIVOR_WAIT);
		awaitExits(all);
		trees.forEach((process, tree) -> {
			List<Long> left = tree.stream().filter(ProcFs::running).map(ProcessHandle::pid).distinct().toList();
			if (!left.isEmpty()) {
				survived.accept(process, left);
			}
		});
	}

	/**
	 * SIGKILL every descendant of the wrapper's children that are still alive (the
	 * seccomp mechanism's subreaper, which had the grace period to take its tree down),
	 * round after round until none is left, before the children themselves are killed. A
	 * subreaper that is still alive collects what a killed process forked meanwhile
	 * (prctl(2), PR_SET_CHILD_SUBREAPER), so the next round finds it; killed first, it
	 * would leave those to init, outside any tree this JVM can list.
	 */
	void killBelow(List<ProcessHandle> anchors) {
		long deadline = System.nanoTime() + KILL_ROUNDS_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			List<ProcessHandle> below = anchors.stream()
				.filter(ProcessHandle::isAlive)
				.flatMap(ProcessHandle::descendants)
				.filter(ProcessHandle::isAlive)
				.toList();
			if (below.isEmpty()) {
				return;
			}
			below.forEach(ProcessHandle::destroyForcibly);
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * After the SIGKILL to a wrapper: give the sandbox up to {@link #TEARDOWN_WAIT} (the
	 * grace period where it is shorter) to take its own tree down before the SIGKILL
	 * backstop reaches what is left. bwrap and unshare leave that to the kernel (their
	 * PID namespace dies with them); the launcher of the seccomp mechanism, a child
	 * subreaper, gets SIGHUP when its parent dies and kills every descendant itself,
	 * including those forked after the JVM listed the tree, which a SIGKILL from here
	 * would leave to init.
	 */
	void awaitTeardown(List<ProcessHandle> tree) {
		awaitEnd(tree, (this.killGracePeriod.compareTo(TEARDOWN_WAIT) < 0) ? this.killGracePeriod : TEARDOWN_WAIT);
	}

	/**
	 * Return the pids of the processes of a killed tree that are still alive after up to
	 * {@link #SURVIVOR_WAIT}: SIGKILL ends a process only when it leaves the kernel, so
	 * one in an uninterruptible sleep (state D) outlives it until it wakes.
	 */
	private static List<Long> survivors(List<ProcessHandle> tree) {
		awaitEnd(tree, SURVIVOR_WAIT);
		awaitExits(tree);
		return tree.stream().filter(ProcFs::running).map(ProcessHandle::pid).distinct().toList();
	}

	/**
	 * Wait, at most {@link #EXIT_WAIT}, while a process of a killed tree that still runs
	 * is dying: a process that got SIGKILL runs on in the kernel until it has freed its
	 * memory (do_exit, exit_mm), seconds for a tree of hundreds of processes that share
	 * gigabytes copy-on-write, and its parent (the sandbox's PID 1, {@code contain})
	 * waits for it.
	 */
	private static void awaitExits(List<ProcessHandle> tree) {
		long deadline = System.nanoTime() + EXIT_WAIT.toNanos();
		try {
			List<ProcessHandle> left = tree.stream().filter(ProcFs::running).toList();
			while (left.stream().anyMatch(ProcFs::dying) && System.nanoTime() < deadline) {
				Thread.sleep(5);
				left = left.stream().filter(ProcFs::running).toList();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Wait until no process of the tree {@linkplain ProcFs#running runs}, at most so
	 * long.
	 */
	private static void awaitEnd(List<ProcessHandle> tree, Duration patience) {
		long deadline = System.nanoTime() + patience.toNanos();
		try {
			while (tree.stream().anyMatch(ProcFs::running) && System.nanoTime() < deadline) {
				Thread.sleep(5);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static boolean waitFor(Process process, Duration duration) {
		try {
			return process.waitFor(duration.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Wait for the direct child to end, at most {@link #REAP_TIMEOUT}; then SIGKILL it
	 * and wait for it.
	 */
	static void reap(Process process) {
		try {
			if (!process.waitFor(REAP_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)) {
				process.toHandle().destroyForcibly();
				process.waitFor();
			}
		}
		catch (InterruptedException ex) {
			process.toHandle().destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	private static List<ProcessHandle> concat(List<ProcessHandle> a, List<ProcessHandle> b) {
		List<ProcessHandle> all = new ArrayList<>(a);
		all.addAll(b);
		return all;
	}

}
