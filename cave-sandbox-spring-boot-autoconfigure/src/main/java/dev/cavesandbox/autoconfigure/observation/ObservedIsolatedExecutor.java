package dev.cavesandbox.autoconfigure.observation;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.WarmPoolState;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * An {@link IsolatedExecutor} that records one
 * {@link SandboxObservationDocumentation#EXECUTION observation} per execution of the
 * executor it decorates, and one {@link SandboxObservationDocumentation#PROCESS
 * observation} per process it starts, from the call until the process has ended. An
 * asynchronous execution is observed from the call until its future completes; the future
 * returned is the delegate's own, so that cancelling it still kills the process tree.
 */
final class ObservedIsolatedExecutor implements IsolatedExecutor {

	private static final SandboxExecutionObservationConvention DEFAULT_CONVENTION = new DefaultSandboxExecutionObservationConvention();

	private static final SandboxExecutionObservationConvention PROCESS_CONVENTION = new DefaultSandboxProcessObservationConvention();

	private final IsolatedExecutor delegate;

	private final ObservationRegistry registry;

	private final @Nullable SandboxExecutionObservationConvention convention;

	private final @Nullable EgressRecorder egressRecorder;

	ObservedIsolatedExecutor(IsolatedExecutor delegate, ObservationRegistry registry,
			@Nullable SandboxExecutionObservationConvention convention) {
		this(delegate, registry, convention, null);
	}

	ObservedIsolatedExecutor(IsolatedExecutor delegate, ObservationRegistry registry,
			@Nullable SandboxExecutionObservationConvention convention, @Nullable EgressRecorder egressRecorder) {
		this.delegate = delegate;
		this.registry = registry;
		this.convention = convention;
		this.egressRecorder = egressRecorder;
	}

	@Override
	public ExecutionResult execute(ExecutionRequest request) {
		SandboxExecutionObservationContext context = new SandboxExecutionObservationContext(request,
				executorIsolation());
		return observation(context).observe(() -> {
			ExecutionResult result = this.delegate.execute(request);
			context.setResult(result);
			countEgress(request, result);
			return result;
		});
	}

	@Override
	public CompletableFuture<ExecutionResult> executeAsync(ExecutionRequest request) {
		SandboxExecutionObservationContext context = new SandboxExecutionObservationContext(request,
				executorIsolation());
		Observation observation = observation(context).start();
		CompletableFuture<ExecutionResult> future;
		try (Observation.Scope scope = observation.openScope()) {
			future = this.delegate.executeAsync(request);
		}
		catch (RuntimeException | Error ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
		future.whenComplete((result, failure) -> {
			if (failure != null) {
				observation.error((failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure);
			}
			else {
				context.setResult(result);
				countEgress(request, result);
			}
			observation.stop();
		});
		return future;
	}

	private void countEgress(ExecutionRequest request, ExecutionResult result) {
		if (this.egressRecorder != null) {
			this.egressRecorder.record(request, result);
		}
	}

	private Observation observation(SandboxExecutionObservationContext context) {
		return SandboxObservationDocumentation.EXECUTION.observation(this.convention, DEFAULT_CONVENTION, () -> context,
				this.registry);
	}

	private Isolation executorIsolation() {
		try {
			return this.delegate.isolation();
		}
		catch (NetworkIsolationUnavailableException ex) {
			return Isolation.NONE;
		}
	}

	/**
	 * Start the request through the delegate, observed as
	 * {@link SandboxObservationDocumentation#PROCESS} from the call until the process
	 * tree has ended; its egress decisions are counted then.
	 */
	@Override
	public SandboxedProcess start(ExecutionRequest request) {
		SandboxExecutionObservationContext context = new SandboxExecutionObservationContext(request,
				executorIsolation());
		Observation observation = SandboxObservationDocumentation.PROCESS
			.observation(null, PROCESS_CONVENTION, () -> context, this.registry)
			.start();
		long start = System.nanoTime();
		SandboxedProcess process;
		try (Observation.Scope scope = observation.openScope()) {
			process = this.delegate.start(request);
		}
		catch (RuntimeException | Error ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
		process.onExit().whenComplete((ended, failure) -> {
			// The result of a started process: how it ended, without output (the caller
			// read its streams).
			ExecutionResult result = new ExecutionResult(process.exitCode().orElse(-1), new byte[0], new byte[0], false,
					false, process.timedOut(), Duration.ofNanos(System.nanoTime() - start), process.isolation(), null,
					process.egressDecisions());
			context.setResult(result);
			countEgress(request, result);
			observation.stop();
		});
		return process;
	}

	@Override
	public Isolation isolation() {
		return this.delegate.isolation();
	}

	@Override
	public WarmPoolState warmPool() {
		return this.delegate.warmPool();
	}

	@Override
	public void close() {
		this.delegate.close();
	}

	/**
	 * Return the decorated executor.
	 * @return the executor
	 */
	IsolatedExecutor delegate() {
		return this.delegate;
	}

	@Override
	public String toString() {
		return "Observed" + this.delegate;
	}

}
