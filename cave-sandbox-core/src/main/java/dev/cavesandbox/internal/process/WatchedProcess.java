package dev.cavesandbox.internal.process;

import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ProcessTreeSurvivedException;
import dev.cavesandbox.internal.launcher.LauncherContract;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process that {@link ProcessRunner#start} started, watched by a task of the runner's
 * I/O pool: its end, its timeout and its termination, which may be asked for from any
 * thread, concurrently with its end.
 */
public final class WatchedProcess {

	/** The runner's warnings, under one name. */
	private static final Logger logger = LoggerFactory.getLogger(ProcessRunner.class);

	private final Process process;

	/**
	 * The process's stdout as the caller reads it (after the ready and started markers).
	 */
	private final InputStream stdout;

	private final boolean sandboxed;

	private final TreeTeardown trees;

	/** Completes with the exit code once the tree has ended and is torn down. */
	private final CompletableFuture<Integer> ended = new CompletableFuture<>();

	/** Guards the termination and the end, so that neither overlaps the other. */
	private final Object lock = new Object();

	private boolean terminating;

	/**
	 * Whether the command was started, known once {@link #ended()} completes
	 * ({@link #exitCode()}).
	 */
	private volatile boolean commandStarted = true;

	/** Whether the runner's close killed the tree ({@link #closing()}). */
	private volatile boolean closing;

	private boolean exited;

	private volatile boolean timedOut;

	private volatile List<Long> survivors = List.of();

	WatchedProcess(Process process, InputStream stdout, boolean sandboxed, TreeTeardown trees) {
		this.process = process;
		this.stdout = stdout;
		this.sandboxed = sandboxed;
		this.trees = trees;
	}

	Process process() {
		return this.process;
	}

	InputStream stdout() {
		return this.stdout;
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
	public List<Long> survivors() {
		return this.survivors;
	}

	/**
	 * Return whether the command was started: {@code false} only where the launcher's
	 * started marker is known not to have come
	 * ({@link ReadyMarker.Output#neverStarted()}, asked once the tree has ended and none
	 * of it survived). Meaningful once {@link #ended()} has completed.
	 * @return whether the command was started
	 */
	boolean commandStarted() {
		return this.commandStarted;
	}

	/** Record that the runner's close is about to kill the tree. */
	void closing() {
		this.closing = true;
	}

	/** Record what of the tree outlived the runner's close. */
	void survivors(List<Long> survivors) {
		this.survivors = survivors;
	}

	/**
	 * Terminate the tree as a timeout does ({@link TreeTeardown#terminate}), unless that
	 * already began or the process has ended; return at once then. Does not wait for the
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
			this.survivors = this.trees.terminate(this.process, this.sandboxed);
		}
	}

	/**
	 * The sandbox's own processes ({@link ProcFs#sandboxProcesses}: the wrapper's
	 * children and theirs, bwrap and its PID 1, unshare and its PID 1, {@code contain}
	 * and the command) as soon as the second generation is there, unless the wrapper ends
	 * first or it takes longer than {@value TreeTeardown#REAP_TIMEOUT_SECONDS} seconds.
	 * With the first generation alone, a wrapper killed from outside ended with bwrap
	 * while its PID 1 still took the namespace down.
	 */
	private List<ProcessHandle> sandboxChildren() throws InterruptedException {
		long deadline = System.nanoTime() + TreeTeardown.REAP_TIMEOUT.toNanos();
		List<ProcessHandle> sandbox = List.of();
		while (this.process.isAlive() && System.nanoTime() < deadline) {
			sandbox = ProcFs.sandboxProcesses(this.process);
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
	 * @param timeout when the tree is terminated, or {@code null} (never)
	 * @param teardown the caller's release, once the tree has ended; it must not throw
	 * @param whenExited what the runner forgets once the process has exited, before
	 * {@code teardown}
	 * @param whenEnded what the runner forgets once the teardown is over, before
	 * {@link #ended()} completes
	 */
	void watch(@Nullable Duration timeout, Runnable teardown, Runnable whenExited, Runnable whenEnded) {
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
		TreeTeardown.reap(this.process);
		// A wrapper killed from outside (not by terminate) can end before the
		// sandbox it started: the seccomp mechanism's subreaper then still takes its tree
		// down. The end is reported only once that is over.
		this.trees.awaitTeardown(inside);
		this.trees.killBelow(inside);
		inside.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
		if (!this.survivors.isEmpty()) {
			logger.warn(new ProcessTreeSurvivedException(this.survivors).getMessage());
		}
		synchronized (this.lock) {
			this.exited = true;
		}
		whenExited.run();
		try {
			teardown.run();
		}
		finally {
			whenEnded.run();
			this.ended.complete(exitCode());
		}
	}

	/**
	 * The exit code: the direct child's, or {@value LauncherContract#SETUP_FAILED} where
	 * the sandbox ended before its command started
	 * ({@link ReadyMarker.Output#neverStarted()}: its wrapper killed from outside during
	 * the set-up) without a timeout, a termination or the runner's close that this side
	 * began, and with nothing of its tree left: as when the launcher itself fails,
	 * nothing of the command ran.
	 */
	private int exitCode() {
		int code = this.process.exitValue();
		boolean ours;
		synchronized (this.lock) {
			ours = this.terminating;
		}
		this.commandStarted = !(this.survivors.isEmpty() && this.stdout instanceof ReadyMarker.Output output
				&& output.neverStarted());
		return (this.commandStarted || ours || this.closing) ? code : LauncherContract.SETUP_FAILED;
	}

}
