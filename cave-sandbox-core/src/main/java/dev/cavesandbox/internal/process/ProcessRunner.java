package dev.cavesandbox.internal.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ProcessTreeSurvivedException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one process runner shared by every mechanism: spawn ({@link SpawnThreads}), feed
 * stdin and drain both streams with caps ({@link ChildStreams}), time out, tear down the
 * tree ({@link TreeTeardown}), report. Isolated and unisolated executions differ only in
 * the command line they pass.
 */
public final class ProcessRunner implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ProcessRunner.class);

	/**
	 * Idle I/O threads end after this, so a burst of executions leaves no threads behind.
	 */
	private static final Duration IO_KEEP_ALIVE = Duration.ofSeconds(2);

	private final Duration killGracePeriod;

	private final TreeTeardown trees;

	private final SpawnThreads spawnThreads;

	private final ExecutorService io;

	/** The running processes, each with whether it is a sandbox wrapper. */
	private final Map<Process, Boolean> running = new ConcurrentHashMap<>();

	/** The started processes whose teardown has not ended yet. */
	private final Set<WatchedProcess> started = ConcurrentHashMap.newKeySet();

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
		this.trees = new TreeTeardown(killGracePeriod);
		this.spawnThreads = new SpawnThreads();
		this.io = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IO_KEEP_ALIVE.toNanos(), TimeUnit.NANOSECONDS,
				new SynchronousQueue<>(), SpawnThreads.daemons("cave-sandbox-io-"));
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
		return run(spec, null);
	}

	/**
	 * Run one command line and wait for its whole process tree to end; with a frame, the
	 * command line is a launcher's of {@code --handover} (a cold launch: prepared and
	 * claimed at once): the frame is written on its stdin before the spec's stdin, and
	 * the markers are dropped from the front of its stdout ({@link ReadyMarker}); the
	 * outcome tells whether the command was started ({@link Outcome#commandStarted()}).
	 * @param spec what to run
	 * @param frame the {@code HandoverFrame} of the command, or {@code null} where the
	 * command line holds the command
	 * @return what it produced
	 * @throws IOException if the process could not be started
	 * @throws InterruptedException if the calling thread was interrupted; the tree was
	 * killed
	 */
	public Outcome run(Spec spec, byte @Nullable [] frame) throws IOException, InterruptedException {
		long start = System.nanoTime();
		Process process = spawn(spec);
		try {
			return await(process, spec, streams(process, spec, frame, false), start);
		}
		finally {
			this.running.remove(process);
		}
	}

	/**
	 * Spawn a launcher of {@code --handover} ahead of its command (a warm sandbox) and
	 * count it as running: {@link #close()} kills it like any other. The caller reads its
	 * ready marker ({@link ReadyMarker#await}) and then either claims it
	 * ({@link #runPrepared}) or {@linkplain #discard discards} it.
	 * @param spec the command line; its stdin, sinks, cap and timeout are the claim's
	 * @return the process, waiting for its frame
	 * @throws IOException if the process could not be started
	 * @throws InterruptedException if the calling thread was interrupted; nothing was
	 * left running
	 */
	public Process spawnPrepared(Spec spec) throws IOException, InterruptedException {
		return spawn(spec);
	}

	/**
	 * Claim a process of {@link #spawnPrepared} whose ready marker was read: write the
	 * frame, then the spec's stdin, and wait for the whole tree to end. The timeout and
	 * the wall time start now. The started marker is dropped from the front of its
	 * stdout, and the outcome tells whether it came ({@link Outcome#commandStarted()}): a
	 * sandbox killed before it never ran the command.
	 * @param process the waiting process
	 * @param spec the claim's stdin, sinks, cap and timeout (its command line is the
	 * process's)
	 * @param frame the command's {@code HandoverFrame}
	 * @return what it produced
	 * @throws InterruptedException if the calling thread was interrupted; the tree was
	 * killed
	 */
	public Outcome runPrepared(Process process, Spec spec, byte[] frame) throws InterruptedException {
		long start = System.nanoTime();
		try {
			return await(process, spec, streams(process, spec, frame, true), start);
		}
		finally {
			this.running.remove(process);
		}
	}

	/**
	 * Kill a process of {@link #spawnPrepared} that is not claimed: SIGKILL to the
	 * wrapper and to what is left of its sandbox ({@link TreeTeardown#killAll}, as
	 * {@link #close()} does), reap it and forget it.
	 * @param process the waiting process
	 */
	public void discard(Process process) {
		try {
			killAndReap(process, true);
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
	 * completes {@link WatchedProcess#ended()}. {@link #close()} kills it like a running
	 * {@link #run(Spec)}, and waits for its teardown.
	 * @param spec what to run; its timeout may be {@code null} (none)
	 * @param teardown what to release once the tree has ended, before
	 * {@link WatchedProcess#ended()} completes, given the ended process (its
	 * {@linkplain WatchedProcess#survivors() survivors} known); it must not throw
	 * @return the started process
	 * @throws IOException if the process could not be started
	 * @throws InterruptedException if the calling thread was interrupted; nothing was
	 * left running
	 */
	public WatchedProcess start(Spec spec, Consumer<WatchedProcess> teardown) throws IOException, InterruptedException {
		return start(spec, null, teardown);
	}

	/**
	 * Start one command line as {@link #start(Spec, Consumer)} does; with a frame, the
	 * command line is a launcher's of {@code --handover}: the frame is written on its
	 * stdin before this returns, and the process's stdout starts after the ready and
	 * started markers.
	 * @param spec what to run; its timeout may be {@code null} (none)
	 * @param frame the command's {@code HandoverFrame}, or {@code null}
	 * @param teardown what to release once the tree has ended
	 * @return the started process
	 * @throws IOException if the process could not be started
	 * @throws InterruptedException if the calling thread was interrupted; nothing was
	 * left running
	 */
	public WatchedProcess start(Spec spec, byte @Nullable [] frame, Consumer<WatchedProcess> teardown)
			throws IOException, InterruptedException {
		Process process = spawn(spec);
		InputStream stdout = process.getInputStream();
		if (frame != null) {
			ChildStreams.writeFrame(process, frame);
			stdout = ReadyMarker.dropped(stdout, false);
		}
		WatchedProcess started = new WatchedProcess(process, stdout, spec.sandboxed(), this.trees);
		this.started.add(started);
		try {
			this.io.execute(() -> started.watch(spec.timeout(), () -> teardown.accept(started),
					() -> this.running.remove(process), () -> this.started.remove(started)));
		}
		catch (RejectedExecutionException ex) {
			// Closed meanwhile: what close() may have missed is killed here.
			process.toHandle().destroyForcibly();
			TreeTeardown.reap(process);
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
		Process process = this.spawnThreads.start(builder);
		this.running.put(process, spec.sandboxed());
		if (this.closed) {
			process.toHandle().destroyForcibly();
		}
		return process;
	}

	/**
	 * Start feeding and draining the process's streams on the I/O pool. A process spawned
	 * or claimed as {@link #close()} began may reach this after the close shut the pool
	 * down: it is killed as the close kills a running tree (it is dead already, or dying,
	 * where the close or {@link #spawn} saw it) and the run ends with the cancellation,
	 * not with the pool's {@link RejectedExecutionException}.
	 */
	private ChildStreams streams(Process process, Spec spec, byte @Nullable [] frame, boolean readyRead) {
		try {
			return new ChildStreams(this.io, process, spec, frame, readyRead);
		}
		catch (RejectedExecutionException ex) {
			killAndReap(process, spec.sandboxed());
			throw new ExecutionCancelledException("the executor is closed", ex);
		}
	}

	/** Kill a process's tree as {@link #close()} does, log what outlived it, reap it. */
	private void killAndReap(Process process, boolean sandboxed) {
		this.trees.killAll(Map.of(process, sandboxed),
				(ended, left) -> logger.warn(new ProcessTreeSurvivedException(left).getMessage()));
		TreeTeardown.reap(process);
	}

	private Outcome await(Process process, Spec spec, ChildStreams streams, long start) throws InterruptedException {
		boolean timedOut = false;
		List<Long> survivors = List.of();
		Duration timeout = Objects.requireNonNull(spec.timeout(), "run() needs a timeout");
		try {
			if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
				timedOut = true;
				survivors = this.trees.terminate(process, spec.sandboxed());
			}
		}
		catch (InterruptedException ex) {
			survivors = this.trees.terminate(process, spec.sandboxed());
			streams.finish(this.killGracePeriod);
			if (!survivors.isEmpty()) {
				throw new ProcessTreeSurvivedException(survivors);
			}
			throw ex;
		}
		if (this.closed && !timedOut) {
			survivors = awaitClose(process, survivors);
		}
		streams.finish(this.killGracePeriod);
		Duration wallTime = Duration.ofNanos(System.nanoTime() - start);
		return new Outcome(process.exitValue(), streams.stdout().bytes(), streams.stderr().bytes(),
				streams.stdout().truncated(), streams.stderr().truncated(), timedOut, wallTime, survivors,
				streams.started());
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
	 * Return whether {@link #close()} was called: a run it ended was killed by it.
	 * @return whether this runner is closed
	 */
	public boolean closed() {
		return this.closed;
	}

	/**
	 * Kill every running process tree ({@link TreeTeardown#killAll}), wait (at most
	 * {@value TreeTeardown#REAP_TIMEOUT_SECONDS} seconds more) for the teardown of the
	 * started ones, and stop the threads. What outlives the teardown is logged as a
	 * warning and reported by the run it ended ({@link ProcessTreeSurvivedException}).
	 */
	@Override
	public void close() {
		this.closed = true;
		this.started.forEach(WatchedProcess::closing);
		try {
			killRunning();
		}
		finally {
			// Only now: a spawn thread that ends fires the parent-death signal of what it
			// spawned (prctl(2)); before killRunning() that signal killed the sandboxes
			// unseen, and close() returned while their trees were still dying.
			this.spawnThreads.shutdown();
			this.closeDone.countDown();
		}
		long deadline = System.nanoTime() + TreeTeardown.REAP_TIMEOUT.toNanos();
		for (WatchedProcess started : this.started) {
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
	 * {@link #close()}'s SIGKILL to every running tree; what still runs after it is
	 * recorded for the run or started process it ended.
	 */
	private void killRunning() {
		this.trees.killAll(this.running, (process, left) -> {
			this.closeSurvivors.put(process, left);
			this.started.stream().filter((started) -> started.process() == process).forEach((started) -> {
				started.survivors(left);
			});
			logger.warn(new ProcessTreeSurvivedException(left).getMessage());
		});
	}

	/**
	 * What to run.
	 *
	 * @param timeout when the tree is terminated; {@code null} (none) only for
	 * {@link #start(Spec, Consumer)}
	 * @param sandboxed whether the direct child is a sandbox wrapper (bwrap, unshare)
	 * rather than the command itself: a wrapper gets no SIGTERM on timeout, see
	 * {@link TreeTeardown#terminate}
	 */
	public record Spec(List<String> commandLine, Path directory, Map<String, String> environment,
			@Nullable Supplier<InputStream> stdin, @Nullable Duration timeout, long maxOutputBytes,
			@Nullable OutputStream stdoutSink, @Nullable OutputStream stderrSink, boolean sandboxed) {
	}

	/**
	 * What it produced.
	 *
	 * @param commandStarted whether the command was started: always without a frame; with
	 * one, whether the launcher wrote its started marker
	 * ({@link dev.cavesandbox.internal.launcher.LauncherContract#HANDOVER_STARTED})
	 * before the process ended. {@code false} means the exit code is the sandbox's, not
	 * the command's
	 */
	public record Outcome(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated, boolean stderrTruncated,
			boolean timedOut, Duration wallTime, List<Long> survivors, boolean commandStarted) {
	}

}
