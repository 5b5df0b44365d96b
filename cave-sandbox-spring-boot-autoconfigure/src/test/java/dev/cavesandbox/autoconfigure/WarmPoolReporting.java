package dev.cavesandbox.autoconfigure;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.WarmPoolState;

/**
 * A real executor that reports a given state of its pool of warm sandboxes, for the
 * readers of {@link IsolatedExecutor#warmPool()} (health, info, meters): everything else
 * is the delegate's.
 */
public final class WarmPoolReporting implements IsolatedExecutor {

	private final IsolatedExecutor delegate;

	private final Supplier<WarmPoolState> state;

	public WarmPoolReporting(IsolatedExecutor delegate, Supplier<WarmPoolState> state) {
		this.delegate = delegate;
		this.state = state;
	}

	@Override
	public ExecutionResult execute(ExecutionRequest request) {
		return this.delegate.execute(request);
	}

	@Override
	public CompletableFuture<ExecutionResult> executeAsync(ExecutionRequest request) {
		return this.delegate.executeAsync(request);
	}

	@Override
	public SandboxedProcess start(ExecutionRequest request) {
		return this.delegate.start(request);
	}

	@Override
	public Isolation isolation() {
		return this.delegate.isolation();
	}

	@Override
	public WarmPoolState warmPool() {
		return this.state.get();
	}

	@Override
	public void close() {
		this.delegate.close();
	}

}
