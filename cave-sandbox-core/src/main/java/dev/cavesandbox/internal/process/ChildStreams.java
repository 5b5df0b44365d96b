package dev.cavesandbox.internal.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The three streams of one {@link ProcessRunner#run} child, each on a task of the I/O
 * pool: stdin fed from the spec's supplier (or closed at once), stdout and stderr drained
 * to their ends with the spec's cap ({@link BoundedOutput}).
 */
final class ChildStreams {

	/**
	 * What an empty pipe takes without blocking the writer, in bytes: one page, the least
	 * capacity of a pipe (pipe(7): a user over {@code pipe-user-pages-soft} gets pipes of
	 * one page; {@code PIPE_BUF} is 4096 on Linux).
	 */
	static final int PIPE_CAPACITY_AT_LEAST = 4096;

	private final Process process;

	private final BoundedOutput stdout;

	private final BoundedOutput stderr;

	private final List<Future<?>> drains;

	private final @Nullable Future<?> feeder;

	/** The launcher's stdout without its markers; {@code null} without a frame. */
	private final ReadyMarker.@Nullable Output marked;

	/**
	 * Start feeding and draining the child's streams.
	 * @param io the pool whose tasks feed and drain
	 * @param process the child
	 * @param spec its stdin, sinks and cap
	 */
	ChildStreams(ExecutorService io, Process process, ProcessRunner.Spec spec) {
		this(io, process, spec, null, false);
	}

	/**
	 * Start feeding and draining the streams of a launcher of {@code --handover}.
	 * @param io the pool whose tasks feed and drain
	 * @param process the child
	 * @param spec its stdin, sinks and cap
	 * @param frame the command's frame, written before the spec's stdin; {@code null} for
	 * none (no launcher of {@code --handover}: stdout has no markers)
	 * @param readyRead whether the ready marker was read by a warm sandbox's preparation
	 * (a cold launch's is still at the front of stdout); the started marker is read here
	 * in both cases ({@link #started()})
	 */
	ChildStreams(ExecutorService io, Process process, ProcessRunner.Spec spec, byte @Nullable [] frame,
			boolean readyRead) {
		this.process = process;
		BoundedOutput stdout = new BoundedOutput(spec.maxOutputBytes(), spec.stdoutSink());
		BoundedOutput stderr = new BoundedOutput(spec.maxOutputBytes(), spec.stderrSink());
		this.stdout = stdout;
		this.stderr = stderr;
		this.marked = (frame != null) ? ReadyMarker.dropped(process.getInputStream(), readyRead) : null;
		InputStream fromChild = (this.marked != null) ? this.marked : process.getInputStream();
		this.drains = List.of(io.submit(() -> stdout.drain(fromChild)),
				io.submit(() -> stderr.drain(process.getErrorStream())));
		this.feeder = feed(io, process, frame, spec.stdin());
	}

	private static @Nullable Future<?> feed(ExecutorService io, Process process, byte @Nullable [] frame,
			@Nullable Supplier<InputStream> stdin) {
		OutputStream toChild = process.getOutputStream();
		if (stdin == null && frame == null) {
			closeQuietly(toChild);
			return null;
		}
		if (stdin == null && frame != null && frame.length <= PIPE_CAPACITY_AT_LEAST) {
			// Fits in the empty pipe: written from the caller's thread without waiting
			// for the child, and no task to wake.
			writeFrame(process, frame);
			closeQuietly(toChild);
			return null;
		}
		// On a task of its own: a frame larger than the pipe waits for the launcher's
		// set-up, which the caller's timeout must bound.
		return io.submit(() -> {
			// The child's stdin is closed whatever the supplier does: throw, or return
			// null.
			try (toChild) {
				if (frame != null) {
					toChild.write(frame);
					toChild.flush();
				}
				if (stdin != null) {
					try (InputStream in = stdin.get()) {
						if (in != null) {
							in.transferTo(toChild);
						}
					}
				}
			}
			catch (IOException ex) {
				// The child closed its stdin or exited before reading it all: that is its
				// choice (or its set-up failed before it read the frame: it says so).
			}
		});
	}

	/**
	 * Write a frame on the child's stdin and flush it, from the calling thread; the
	 * stream stays open. A child that ended before it read it (its set-up failed) is left
	 * to report so.
	 * @param process the child
	 * @param frame the frame
	 */
	static void writeFrame(Process process, byte[] frame) {
		try {
			process.getOutputStream().write(frame);
			process.getOutputStream().flush();
		}
		catch (IOException ex) {
			// its exit code and stderr say why
		}
	}

	/**
	 * After the direct child has exited: wait for both streams to reach their end. Inside
	 * a PID namespace the kernel has already killed every other process, so the pipes
	 * close at once. Unisolated, a background process may still hold them: it gets the
	 * grace period, then the call returns with what was read and the streams are closed.
	 * A drain thread blocked in a read stays blocked until that process ends or closes
	 * them: close(2) does not wake a read that another thread is blocked in.
	 * @param killGracePeriod how long the drains get
	 */
	void finish(Duration killGracePeriod) {
		TreeTeardown.reap(this.process);
		if (this.feeder != null) {
			this.feeder.cancel(true);
			closeQuietly(this.process.getOutputStream());
		}
		long deadline = System.nanoTime() + killGracePeriod.toNanos();
		for (Future<?> drain : this.drains) {
			try {
				drain.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (TimeoutException ex) {
				closeQuietly(this.process.getInputStream());
				closeQuietly(this.process.getErrorStream());
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
	 * Whether the command was started: without a frame always; with one, whether the
	 * launcher wrote its started marker. Meaningful after {@link #finish}.
	 * @return whether the command was started
	 */
	boolean started() {
		return this.marked == null || this.marked.started();
	}

	BoundedOutput stdout() {
		return this.stdout;
	}

	BoundedOutput stderr() {
		return this.stderr;
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// nothing left to do
		}
	}

}
