package dev.cavesandbox.internal.process;

import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ProcessTreeSurvivedException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one process runner shared by every mechanism: spawn, feed stdin, drain both streams
 * with caps, time out, tear down the tree, report. Isolated and unisolated executions
 * differ only in the command line they pass.
 * <p>
 * Processes are spawned from a small pool of dedicated, long-lived platform threads: the
 * parent-death signal that ties a sandbox to the JVM ({@code setpriv --pdeathsig}) fires
 * when the <em>thread</em> that spawned it ends (prctl(2)), so spawning from a
 * short-lived, pooled or virtual thread's carrier would kill the sandbox early.
 */
public final class ProcessRunner implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ProcessRunner.class);

	private static final long REAP_TIMEOUT_SECONDS = 5;

	private static final Duration REAP_TIMEOUT = Duration.ofSeconds(REAP_TIMEOUT_SECONDS);

	/**
	 * How long the processes of a killed tree get to disappear before they count as
	 * survivors of the teardown.
	 */
	private static final Duration SURVIVOR_WAIT = Duration.ofMillis(500);

	/**
	 * How long a killed tree gets beyond {@link #SURVIVOR_WAIT} while processes of it are
	 * dying (freeing their memory costs kernel time in proportion to what they mapped) so
	 * that the result comes once they are gone.
	 */
	private static final Duration EXIT_WAIT = Duration.ofSeconds(REAP_TIMEOUT_SECONDS);

	/** PF_EXITING in the flags of /proc/PID/stat (include/linux/sched.h). */
	private static final long PF_EXITING = 0x4;

	/** SIGKILL (9) in a pending-signal mask of /proc/PID/status: bit 8. */
	private static final long SIGKILL_BIT = 1L << 8;

	/** How long {@code killBelow} keeps killing what a subreaper still holds. */
	private static final Duration KILL_ROUNDS_TIMEOUT = Duration.ofSeconds(5);

	/**
	 * Idle I/O threads end after this, so a burst of executions leaves no threads behind.
	 */
	private static final Duration IO_KEEP_ALIVE = Duration.ofSeconds(2);

	private final Duration killGracePeriod;

	private final ExecutorService launcher;

	private final ExecutorService io;

	/** The running processes, each with whether it is a sandbox wrapper. */
	private final Map<Process, Boolean> running = new ConcurrentHashMap<>();

	/** The started processes whose teardown has not ended yet. */
	private final Set<Started> started = ConcurrentHashMap.newKeySet();

	private volatile boolean closed;

	/**
	 * What {@link #close()} found still running of each process's tree after its
	 * teardown, for the {@link #run(Spec)} that the close ended.
	 */
	private final Map<Process, List<Long>> closeSurvivors = new ConcurrentHashMap<>();

	/** Counted down once {@link #close()} has torn every running tree down. */
	private final CountDownLatch closeDone = new CountDownLatch(1);

	public ProcessRunner(Duration killGracePeriod) {
		this.killGracePeriod = killGracePeriod;
		int launchers = Math.max(2, Runtime.getRuntime().availableProcessors());
		ThreadPoolExecutor launcher = new ThreadPoolExecutor(launchers, launchers, 0, TimeUnit.NANOSECONDS,
				new LinkedBlockingQueue<>(), threads("cave-sandbox-spawn-"));
		// Started now and never timed out: a spawn thread that ended would take the
		// parent-death signal of its sandboxes with it.
		launcher.prestartAllCoreThreads();
		this.launcher = launcher;
		this.io = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IO_KEEP_ALIVE.toNanos(), TimeUnit.NANOSECONDS,
				new SynchronousQueue<>(), threads("cave-sandbox-io-"));
	}

	private static ThreadFactory threads(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Run one command line and wait for its whole process tree to end.
	 * @param spec what to run
	 * @return what it produced
	 * @throws IOException if the process could not be started
	 * @throws InterruptedException if the calling thread was interrupted; the tree was
	 * killed
	 */
	public Outcome run(Spec spec) throws IOException, InterruptedException {
		long start = System.nanoTime();
		Process process = spawn(spec);
		try {
			return await(process, spec, start);
		}
		finally {
			this.running.remove(process);
		}
	}

	/**
	 * Start one command line and return at once. Its streams are the caller's; no
	 * {@code stdin}, sink or cap of the spec applies. A task of the I/O pool waits for
	 * it: it terminates the tree when the spec's timeout (if any) strikes, then, once the
	 * direct child has ended and any termination is over, runs {@code teardown} and
	 * completes {@link Started#ended()}. {@link #close()} kills it like a running
	 * {@link #run(Spec)}, and waits for its teardown.
	 * @param spec what to run; its timeout may be {@code null} (none)
	 * @param teardown what to release once the tree has ended, before
	 * {@link Started#ended()} completes; it must not throw
	 * @return the started process
	 * @throws IOException if the process could not be started
	 * @throws InterruptedException if the calling thread was interrupted; nothing was
	 * left running
	 */
	public Started start(Spec spec, Runnable teardown) throws IOException, InterruptedException {
		Process process = spawn(spec);
		Started started = new Started(process, spec.sandboxed());
		this.started.add(started);
		try {
			this.io.execute(() -> started.watch(spec.timeout(), teardown));
		}
		catch (RejectedExecutionException ex) {
			// Closed meanwhile: what close() may have missed is killed here.
			process.toHandle().destroyForcibly();
			reap(process);
			this.running.remove(process);
			this.started.remove(started);
			throw new ExecutionCancelledException("the executor is closed", ex);
		}
		return started;
	}

	/**
	 * Spawn the spec from a spawn thread and count it as running. A process spawned while
	 * {@link #close()} ran, which it may not have seen, is killed.
	 */
	private Process spawn(Spec spec) throws IOException, InterruptedException {
		if (this.closed) {
			throw new ExecutionCancelledException("the executor is closed", null);
		}
		ProcessBuilder builder = new ProcessBuilder(spec.commandLine()).directory(spec.directory().toFile());
		builder.environment().clear();
		builder.environment().putAll(spec.environment());
		Process process = launch(builder);
		this.running.put(process, spec.sandboxed());
		if (this.closed) {
			process.toHandle().destroyForcibly();
		}
		return process;
	}

	private Process launch(ProcessBuilder builder) throws IOException, InterruptedException {
		Future<Process> launched;
		try {
			launched = this.launcher.submit(builder::start);
		}
		catch (RejectedExecutionException ex) {
			// close() shut the spawn threads down after the check in spawn().
			throw new ExecutionCancelledException("the executor is closed", ex);
		}
		try {
			return launched.get();
		}
		catch (InterruptedException ex) {
			// The spawn may still complete: wait for it so that no process is left
			// behind.
			try {
				Process process = getUninterruptibly(launched);
				process.destroyForcibly();
			}
			catch (ExecutionException | CancellationException ignored) {
			}
			throw ex;
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof IOException io) {
				throw io;
			}
			throw new IOException(ex.getCause());
		}
		catch (RejectedExecutionException ex) {
			throw new ExecutionCancelledException("the executor is closed", ex);
		}
	}

	private Outcome await(Process process, Spec spec, long start) throws InterruptedException {
		BoundedOutput stdout = new BoundedOutput(spec.maxOutputBytes(), spec.stdoutSink());
		BoundedOutput stderr = new BoundedOutput(spec.maxOutputBytes(), spec.stderrSink());
		List<Future<?>> tasks = new ArrayList<>(3);
		tasks.add(this.io.submit(() -> stdout.drain(process.getInputStream())));
		tasks.add(this.io.submit(() -> stderr.drain(process.getErrorStream())));
		Future<?> feeder = feed(process, spec.stdin());
		boolean timedOut = false;
		List<Long> survivors = List.of();
		Duration timeout = Objects.requireNonNull(spec.timeout(), "run() needs a timeout");
		try {
			if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
				timedOut = true;
				survivors = terminate(process, spec.sandboxed());
			}
		}
		catch (InterruptedException ex) {
			survivors = terminate(process, spec.sandboxed());
			finish(process, tasks, feeder);
			if (!survivors.isEmpty()) {
				throw new ProcessTreeSurvivedException(survivors);
			}
			throw ex;
		}
		if (this.closed && !timedOut) {
			survivors = awaitClose(process, survivors);
		}
		finish(process, tasks, feeder);
		Duration wallTime = Duration.ofNanos(System.nanoTime() - start);
		return new Outcome(process.exitValue(), stdout.bytes(), stderr.bytes(), stdout.truncated(), stderr.truncated(),
				timedOut, wallTime, survivors);
	}

	private @Nullable Future<?> feed(Process process, @Nullable Supplier<InputStream> stdin) {
		OutputStream toChild = process.getOutputStream();
		if (stdin == null) {
			closeQuietly(toChild);
			return null;
		}
		return this.io.submit(() -> {
			// The child's stdin is closed whatever the supplier does: throw, or return
			// null.
			try (toChild; InputStream in = stdin.get()) {
				if (in != null) {
					in.transferTo(toChild);
				}
			}
			catch (IOException ex) {
				// The child closed its stdin or exited before reading it all: that is its
				// choice.
			}
		});
	}

	/**
	 * After the direct child has exited: wait for both streams to reach their end. Inside
	 * a PID namespace the kernel has already killed every other process, so the pipes
	 * close at once. Unisolated, a background process may still hold them: it gets the
	 * grace period, then the call returns with what was read and the streams are closed.
	 * A drain thread blocked in a read stays blocked until that process ends or closes
	 * them: close(2) does not wake a read that another thread is blocked in.
	 */
	private void finish(Process process, List<Future<?>> drains, @Nullable Future<?> feeder) {
		reap(process);
		if (feeder != null) {
			feeder.cancel(true);
			closeQuietly(process.getOutputStream());
		}
		long deadline = System.nanoTime() + this.killGracePeriod.toNanos();
		for (Future<?> drain : drains) {
			try {
				drain.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (TimeoutException ex) {
				closeQuietly(process.getInputStream());
				closeQuietly(process.getErrorStream());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (ExecutionException ex) {
				// drain() handles its own failures
			}
		}
	}

	/**
	 * SIGTERM, the grace period, then SIGKILL. A sandbox gets each as one signal to its
	 * wrapper's launcher ({@code outer}, our direct child), never a listing of its tree
	 * first: a tree that forks without pause makes every read of {@code /proc} slow (a
	 * listing took seconds under a break-in's tree), time in which it runs on.
	 * {@code outer} passes SIGTERM on to the sandbox's PID 1 or the seccomp rung's
	 * {@code contain}, which give it to the command's whole tree at once
	 * ({@code kill(-1)} in the PID namespace, the command's process group), and its death
	 * takes the sandbox down (the parent-death signals of bwrap, unshare and PID 1;
	 * {@code contain}'s SIGHUP, then one SIGKILL to the process group). The result waits
	 * for the sandbox's own processes ({@link #sandboxProcesses(Process)}), whose end is
	 * the tree's end; should they outlive the grace period, what they still hold is
	 * killed from here. Unisolated, every process of the tree gets the signals.
	 * @return the pids of the tree that were still alive after all that
	 * ({@link #survivors(List)}), empty when the whole tree is gone
	 */
	private List<Long> terminate(Process process, boolean sandboxed) {
		if (!sandboxed) {
			return terminateUnisolated(process);
		}
		List<ProcessHandle> sandbox = sandboxProcesses(process);
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
		if (sandbox.stream().noneMatch(ProcessRunner::running)) {
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
	 * The sandbox's own processes below its wrapper's launcher: that launcher's children
	 * and theirs (bwrap and its PID 1, unshare and its PID 1, {@code contain} and the
	 * command), each read from {@code /proc/PID/task/PID/children} (proc(5)), a file per
	 * process rather than a scan of every process of the host. Their end is the end of
	 * the tree: PID 1's exit waits for every other process of its namespace
	 * (pid_namespaces(7)), {@code contain} exits once it has reaped its last child.
	 */
	private static List<ProcessHandle> sandboxProcesses(Process process) {
		List<ProcessHandle> sandbox = new ArrayList<>();
		for (long child : children(process.pid())) {
			ProcessHandle.of(child).ifPresent(sandbox::add);
			for (long grandchild : children(child)) {
				ProcessHandle.of(grandchild).ifPresent(sandbox::add);
			}
		}
		return sandbox;
	}

	/**
	 * The children of a single-threaded process, from
	 * {@code /proc/PID/task/PID/children}; where that file is missing (a kernel without
	 * {@code CONFIG_PROC_CHILDREN}), a scan.
	 */
	private static List<Long> children(long pid) {
		Path file = Path.of("/proc", Long.toString(pid), "task", Long.toString(pid), "children");
		try {
			String text = Files.readString(file).trim();
			return text.isEmpty() ? List.of() : Arrays.stream(text.split("\\s+")).map(Long::valueOf).toList();
		}
		catch (IOException | RuntimeException ex) {
			return ProcessHandle.of(pid)
				.map((handle) -> handle.children().map(ProcessHandle::pid).toList())
				.orElse(List.of());
		}
	}

	/**
	 * Return the pids of the processes of a killed tree that are still alive after up to
	 * {@link #SURVIVOR_WAIT}: SIGKILL ends a process only when it leaves the kernel, so
	 * one in an uninterruptible sleep (state D) outlives it until it wakes.
	 */
	private static List<Long> survivors(List<ProcessHandle> tree) {
		awaitEnd(tree, SURVIVOR_WAIT);
		awaitExits(tree);
		return tree.stream().filter(ProcessRunner::running).map(ProcessHandle::pid).distinct().toList();
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
			List<ProcessHandle> left = tree.stream().filter(ProcessRunner::running).toList();
			while (left.stream().anyMatch(ProcessRunner::dying) && System.nanoTime() < deadline) {
				Thread.sleep(5);
				left = left.stream().filter(ProcessRunner::running).toList();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Whether a process is dying: exiting (PF_EXITING in the flags of
	 * {@code /proc/PID/stat}, proc(5) field 9, set once it has begun do_exit) or with a
	 * SIGKILL pending ({@code SigPnd} or {@code ShdPnd} of {@code /proc/PID/status}).
	 * False where the files cannot be read.
	 */
	public static boolean dying(ProcessHandle process) {
		try {
			if ((Long.parseLong(statFields(process.pid())[6]) & PF_EXITING) != 0) {
				return true;
			}
			return Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))
				.stream()
				.filter((line) -> line.startsWith("SigPnd:") || line.startsWith("ShdPnd:"))
				.anyMatch((line) -> (Long.parseUnsignedLong(line.substring(7).trim(), 16) & SIGKILL_BIT) != 0);
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

	/**
	 * Whether a process still runs: alive and not a zombie.
	 * {@link ProcessHandle#isAlive()} counts a zombie, which holds nothing but its pid
	 * until its parent reaps it; an orphan's zombie waits for the host's init, which may
	 * take its time (a container's or a VM's init reaps on its own schedule). Where
	 * {@code /proc/PID/stat} cannot be read (not Linux), the handle's answer.
	 */
	private static boolean running(ProcessHandle process) {
		if (!process.isAlive()) {
			return false;
		}
		try {
			return !statFields(process.pid())[0].equals("Z");
		}
		catch (IOException | RuntimeException ex) {
			return process.isAlive();
		}
	}

	/**
	 * The fields of {@code /proc/PID/stat} after the command name, which may hold spaces
	 * and parentheses (proc(5)): the state first, the flags seventh.
	 */
	private static String[] statFields(long pid) throws IOException {
		String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
		return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
	}

	/**
	 * SIGKILL every descendant of the wrapper's children that are still alive (the
	 * seccomp rung's subreaper, which had the grace period to take its tree down), round
	 * after round until none is left, before the children themselves are killed. A
	 * subreaper that is still alive collects what a killed process forked meanwhile
	 * (prctl(2), PR_SET_CHILD_SUBREAPER), so the next round finds it; killed first, it
	 * would leave those to init, outside any tree this JVM can list.
	 */
	private void killBelow(List<ProcessHandle> anchors) {
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
	 * After the SIGKILL to a wrapper: give the sandbox up to the grace period to take its
	 * own tree down before the SIGKILL backstop reaches what is left. bwrap and unshare
	 * leave that to the kernel (their PID namespace dies with them); the launcher of the
	 * seccomp rung, a child subreaper, gets SIGHUP when its parent dies and kills every
	 * descendant itself, including those forked after the JVM listed the tree, which a
	 * SIGKILL from here would leave to init.
	 */
	private void awaitTeardown(List<ProcessHandle> tree) {
		awaitEnd(tree, this.killGracePeriod);
	}

	/** Wait until no process of the tree {@linkplain #running runs}, at most so long. */
	private static void awaitEnd(List<ProcessHandle> tree, Duration patience) {
		long deadline = System.nanoTime() + patience.toNanos();
		try {
			while (tree.stream().anyMatch(ProcessRunner::running) && System.nanoTime() < deadline) {
				Thread.sleep(5);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static List<ProcessHandle> concat(List<ProcessHandle> a, List<ProcessHandle> b) {
		List<ProcessHandle> all = new ArrayList<>(a);
		all.addAll(b);
		return all;
	}

	private static void reap(Process process) {
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

	private static <T> T getUninterruptibly(Future<T> future) throws ExecutionException {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return future.get();
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// nothing left to do
		}
	}

	/**
	 * A run that {@link #close()} ended: its result waits until the close has torn the
	 * tree down, and reports what of it the close found still running.
	 */
	private List<Long> awaitClose(Process process, List<Long> survivors) throws InterruptedException {
		// close() counts down in a finally block, after bounded waits (the grace period,
		// SURVIVOR_WAIT, EXIT_WAIT).
		this.closeDone.await();
		List<Long> left = this.closeSurvivors.get(process);
		return (left != null) ? left : survivors;
	}

	/**
	 * Kill every running process tree, wait (at most {@value #REAP_TIMEOUT_SECONDS}
	 * seconds more) for the teardown of the started ones, and stop the threads. What
	 * outlives the teardown is logged as a warning and reported by the run it ended
	 * ({@link ProcessTreeSurvivedException}).
	 */
	@Override
	public void close() {
		this.closed = true;
		try {
			killRunning();
		}
		finally {
			// Only now: a spawn thread that ends fires the parent-death signal of what it
			// spawned (prctl(2)); before killRunning() that signal killed the sandboxes
			// unseen, and close() returned while their trees were still dying.
			this.launcher.shutdown();
			this.closeDone.countDown();
		}
		long deadline = System.nanoTime() + REAP_TIMEOUT.toNanos();
		for (Started started : this.started) {
			try {
				started.ended().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
			catch (ExecutionException | TimeoutException ex) {
				// its watcher ends it; nothing more to wait for here
			}
		}
		this.io.shutdown();
	}

	/**
	 * {@link #close()}'s SIGKILL to every running tree: a sandbox's own processes (cheap
	 * to find), or an unisolated tree, first seen, then the direct child killed before
	 * the rest, so that it cannot exit on its own (with its own status) between the two;
	 * the grace period for the sandboxes to take their trees down, the backstop of a
	 * timeout ({@link #killWhatIsLeft}: what is below a sandbox that is still there is
	 * seen and killed too), and what still runs after that recorded per process.
	 */
	private void killRunning() {
		Map<Process, List<ProcessHandle>> trees = new HashMap<>();
		this.running.forEach((process, sandboxed) -> {
			trees.put(process, sandboxed ? sandboxProcesses(process) : process.descendants().toList());
			process.toHandle().destroyForcibly();
		});
		awaitTeardown(trees.values().stream().flatMap(List::stream).toList());
		trees.replaceAll((process, tree) -> killWhatIsLeft(tree));
		List<ProcessHandle> all = trees.values().stream().flatMap(List::stream).toList();
		awaitEnd(all, SURVIVOR_WAIT);
		awaitExits(all);
		trees.forEach((process, tree) -> {
			List<Long> left = tree.stream().filter(ProcessRunner::running).map(ProcessHandle::pid).distinct().toList();
			if (!left.isEmpty()) {
				this.closeSurvivors.put(process, left);
				this.started.stream().filter((started) -> started.process == process).forEach((started) -> {
					started.survivors = left;
				});
				logger.warn(new ProcessTreeSurvivedException(left).getMessage());
			}
		});
	}

	/**
	 * A process that {@link #start(Spec, Runnable)} started: its end, its timeout and its
	 * termination, which may be asked for from any thread, concurrently with its end.
	 */
	public final class Started {

		private final Process process;

		private final boolean sandboxed;

		/** Completes with the exit code once the tree has ended and is torn down. */
		private final CompletableFuture<Integer> ended = new CompletableFuture<>();

		/** Guards the termination and the end, so that neither overlaps the other. */
		private final Object lock = new Object();

		private boolean terminating;

		private boolean exited;

		private volatile boolean timedOut;

		private volatile List<Long> survivors = List.of();

		private Started(Process process, boolean sandboxed) {
			this.process = process;
			this.sandboxed = sandboxed;
		}

		Process process() {
			return this.process;
		}

		/**
		 * Return the future of the exit code, completed after the teardown; it never
		 * completes exceptionally.
		 * @return the future
		 */
		CompletableFuture<Integer> ended() {
			return this.ended;
		}

		/**
		 * Return whether the timeout ended the process.
		 * @return whether it struck
		 */
		boolean timedOut() {
			return this.timedOut;
		}

		/**
		 * Return the pids of the tree that outlived its termination
		 * ({@link ProcessTreeSurvivedException}); empty when none did or it was not
		 * terminated.
		 * @return the pids
		 */
		List<Long> survivors() {
			return this.survivors;
		}

		/**
		 * Terminate the tree as a timeout does ({@code terminate}), unless that already
		 * began or the process has ended; return at once then. Does not wait for the
		 * teardown.
		 */
		void terminate() {
			terminate(false);
		}

		private void terminate(boolean timeout) {
			synchronized (this.lock) {
				if (this.terminating || this.exited) {
					return;
				}
				this.terminating = true;
				this.timedOut = timeout;
				this.survivors = ProcessRunner.this.terminate(this.process, this.sandboxed);
			}
		}

		/**
		 * The sandbox's own processes ({@link ProcessRunner#sandboxProcesses}: the
		 * wrapper's children and theirs, bwrap and its PID 1, unshare and its PID 1,
		 * {@code contain} and the command) as soon as the second generation is there,
		 * unless the wrapper ends first or it takes longer than
		 * {@value ProcessRunner#REAP_TIMEOUT_SECONDS} seconds. With the first generation
		 * alone, a wrapper killed from outside ended with bwrap while its PID 1 still
		 * took the namespace down.
		 */
		private List<ProcessHandle> sandboxChildren() throws InterruptedException {
			long deadline = System.nanoTime() + REAP_TIMEOUT.toNanos();
			List<ProcessHandle> sandbox = List.of();
			while (this.process.isAlive() && System.nanoTime() < deadline) {
				sandbox = sandboxProcesses(this.process);
				if (sandbox.stream()
					.anyMatch((handle) -> handle.parent().map(ProcessHandle::pid).orElse(-1L) != this.process.pid())) {
					return sandbox;
				}
				Thread.sleep(5);
			}
			return sandbox;
		}

		/**
		 * The watcher, on an I/O thread: wait for the end or the timeout, wait for a
		 * termination that another thread began, tear down, complete.
		 */
		private void watch(@Nullable Duration timeout, Runnable teardown) {
			long start = System.nanoTime();
			List<ProcessHandle> inside = List.of();
			try {
				inside = this.sandboxed ? sandboxChildren() : List.of();
				if (timeout == null) {
					this.process.waitFor();
				}
				else if (!this.process.waitFor(timeout.toNanos() - (System.nanoTime() - start), TimeUnit.NANOSECONDS)) {
					terminate(true);
				}
			}
			catch (InterruptedException ex) {
				terminate(false);
			}
			reap(this.process);
			// A wrapper killed from outside (not by terminate) can end before the
			// sandbox it started: the seccomp rung's subreaper then still takes its tree
			// down. The end is reported only once that is over.
			awaitTeardown(inside);
			killBelow(inside);
			inside.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
			if (!this.survivors.isEmpty()) {
				logger.warn(new ProcessTreeSurvivedException(this.survivors).getMessage());
			}
			synchronized (this.lock) {
				this.exited = true;
			}
			ProcessRunner.this.running.remove(this.process);
			try {
				teardown.run();
			}
			finally {
				ProcessRunner.this.started.remove(this);
				this.ended.complete(this.process.exitValue());
			}
		}

	}

	/**
	 * What to run.
	 *
	 * @param timeout when the tree is terminated; {@code null} (none) only for
	 * {@link #start(Spec, Runnable)}
	 * @param sandboxed whether the direct child is a sandbox wrapper (bwrap, unshare)
	 * rather than the command itself: a wrapper gets no SIGTERM on timeout, see
	 * {@code terminate}
	 */
	public record Spec(List<String> commandLine, Path directory, Map<String, String> environment,
			@Nullable Supplier<InputStream> stdin, @Nullable Duration timeout, long maxOutputBytes,
			@Nullable OutputStream stdoutSink, @Nullable OutputStream stderrSink, boolean sandboxed) {
	}

	/**
	 * What it produced.
	 */
	public record Outcome(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated, boolean stderrTruncated,
			boolean timedOut, Duration wallTime, List<Long> survivors) {
	}

}
