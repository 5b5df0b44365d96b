package dev.cavesandbox.internal.execution;

import java.util.concurrent.CompletableFuture;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxedProcess;

/**
 * The {@link IsolatedExecutor} of strict mode on a host without isolation: it fails
 * closed. Every execution throws {@link NetworkIsolationUnavailableException}
 * ({@code cave_sandbox_os_network_isolation_unavailable}) naming the detected cause, and
 * nothing is ever spawned.
 */
public final class UnavailableIsolatedExecutor implements IsolatedExecutor {

	private final IsolationCapability capability;

	/**
	 * Create an executor that refuses every execution because of the given verdict.
	 * @param capability a verdict of unavailable isolation
	 */
	public UnavailableIsolatedExecutor(IsolationCapability capability) {
		if (capability.available()) {
			throw new IllegalArgumentException("capability must be unavailable, but was " + capability);
		}
		this.capability = capability;
	}

	@Override
	public ExecutionResult execute(ExecutionRequest request) {
		throw new NetworkIsolationUnavailableException(this.capability);
	}

	@Override
	public SandboxedProcess start(ExecutionRequest request) {
		throw new NetworkIsolationUnavailableException(this.capability);
	}

	@Override
	public CompletableFuture<ExecutionResult> executeAsync(ExecutionRequest request) {
		return CompletableFuture.failedFuture(new NetworkIsolationUnavailableException(this.capability));
	}

	@Override
	public Isolation isolation() {
		throw new NetworkIsolationUnavailableException(this.capability);
	}

	@Override
	public void close() {
	}

	@Override
	public String toString() {
		return "UnavailableIsolatedExecutor[" + this.capability + "]";
	}

}
