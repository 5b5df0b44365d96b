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

	private final Process process;

	private final BoundedOutput stdout;

	private final BoundedOutput stderr;

	private final List<Future<?>> drains;

	private final @Nullable Future<?> feeder;

	/**
	 * Start feeding and draining the child's streams.
	 * @param io the pool whose tasks feed and drain
	 * @param process the child
	 * @param spec its stdin, sinks and cap
	 */
	ChildStreams(ExecutorService io, Process process, ProcessRunner.Spec spec) {
		this.process = process;
		BoundedOutput stdout = new BoundedOutput(spec.maxOutputBytes(), spec.stdoutSink());
		BoundedOutput stderr = new BoundedOutput(spec.maxOutputBytes(), spec.stderrSink());
		this.stdout = stdout;
		this.stderr = stderr;
		this.drains = List.of(io.submit(() -> stdout.drain(process.getInputStream())),
				io.submit(() -> stderr.drain(process.getErrorStream())));
		this.feeder = feed(io, process, spec.stdin());
	}

	private static @Nullable Future<?> feed(ExecutorService io, Process process,
			@Nullable Supplier<InputStream> stdin) {
		OutputStream toChild = process.getOutputStream();
		if (stdin == null) {
			closeQuietly(toChild);
			return null;
		}
		return io.submit(() -> {
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
