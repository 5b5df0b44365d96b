package dev.cavesandbox.internal.process;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import dev.cavesandbox.Isolation;
import dev.cavesandbox.OutputFiles;
import dev.cavesandbox.ProcessTreeSurvivedException;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.internal.egress.EgressSession;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.jspecify.annotations.Nullable;

/**
 * The {@link SandboxedProcess} of {@link ProcessIsolatedExecutor#start}: the
 * {@link WatchedProcess}'s own pipes, its end as the runner reports it after the
 * teardown, and the decisions of its egress session.
 */
public final class StartedProcess implements SandboxedProcess {

	private final WatchedProcess started;

	private final Isolation isolation;

	private final @Nullable EgressSession egress;

	private final Supplier<@Nullable OutputFiles> outputFiles;

	/**
	 * A started process.
	 * @param started the watched process
	 * @param isolation its isolation
	 * @param egress its egress session, if any
	 * @param outputFiles its output files once read by its teardown, before its end is
	 * reported; {@code null} where they were not read for its survivors
	 */
	public StartedProcess(WatchedProcess started, Isolation isolation, @Nullable EgressSession egress,
			Supplier<@Nullable OutputFiles> outputFiles) {
		this.started = started;
		this.isolation = isolation;
		this.egress = egress;
		this.outputFiles = outputFiles;
	}

	@Override
	public OutputStream stdin() {
		return this.started.process().getOutputStream();
	}

	@Override
	public InputStream stdout() {
		return this.started.stdout();
	}

	@Override
	public InputStream stderr() {
		return this.started.process().getErrorStream();
	}

	@Override
	public long pid() {
		return this.started.process().pid();
	}

	@Override
	public boolean isAlive() {
		return !this.started.ended().isDone();
	}

	@Override
	public int waitFor() throws InterruptedException {
		try {
			return this.started.ended().get();
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("the teardown never fails", ex);
		}
	}

	@Override
	public boolean waitFor(Duration timeout) throws InterruptedException {
		try {
			this.started.ended().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
			return true;
		}
		catch (TimeoutException ex) {
			return false;
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("the teardown never fails", ex);
		}
	}

	@Override
	public CompletableFuture<SandboxedProcess> onExit() {
		// A new future each time: cancelling it leaves the process and other callers'
		// futures alone.
		return this.started.ended().thenApply((exitCode) -> this);
	}

	@Override
	public OptionalInt exitCode() {
		Integer code = this.started.ended().getNow(null);
		return (code != null) ? OptionalInt.of(code) : OptionalInt.empty();
	}

	@Override
	public boolean timedOut() {
		return this.started.timedOut();
	}

	@Override
	public List<Long> survivors() {
		return this.started.survivors();
	}

	@Override
	public boolean commandStarted() {
		requireEnded("whether its command was started is known");
		return this.started.commandStarted();
	}

	@Override
	public OutputFiles outputFiles() {
		requireEnded("its output files are read");
		OutputFiles read = this.outputFiles.get();
		if (read == null) {
			throw new ProcessTreeSurvivedException(survivors());
		}
		return read;
	}

	/** Fail while the process runs: what is asked for is known once it has ended. */
	private void requireEnded(String what) {
		if (isAlive()) {
			throw new IllegalStateException("the process is still running; " + what
					+ " once it has ended: wait for it (waitFor(), onExit()) first");
		}
	}

	@Override
	public Isolation isolation() {
		return this.isolation;
	}

	@Override
	public List<EgressDecision> egressDecisions() {
		return (this.egress != null) ? this.egress.decisions() : List.of();
	}

	@Override
	public void destroy() {
		this.started.terminate();
		boolean interrupted = false;
		while (true) {
			try {
				waitFor();
				break;
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		destroy();
	}

	@Override
	public String toString() {
		return "SandboxedProcess[pid " + pid() + ", " + this.isolation + ", "
				+ (isAlive() ? "running" : "exit code " + exitCode().getAsInt()) + "]";
	}

}
