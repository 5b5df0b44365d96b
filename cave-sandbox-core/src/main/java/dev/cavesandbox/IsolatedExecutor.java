package dev.cavesandbox;

import java.util.concurrent.CompletableFuture;

/**
 * Runs child processes in an OS-level network-isolated sandbox: the command sees no
 * network interface but an unconfigured loopback, so it has no TCP, UDP or DNS egress.
 * <p>
 * An executor is thread-safe. Each execution gets its own sandbox; when it ends
 * (normally, by timeout or by cancellation) its whole process tree is gone. In strict
 * mode (the default) every execution throws {@link NetworkIsolationUnavailableException}
 * ({@code cave_sandbox_os_network_isolation_unavailable}) when the host cannot isolate,
 * and nothing runs; in fallback mode it runs unisolated and the result says so
 * ({@link ExecutionResult#isolation()}).
 */
public interface IsolatedExecutor extends AutoCloseable {

	/**
	 * Run the request and wait for the whole process tree to end.
	 * @param request the request
	 * @return the result; a timeout is reported with {@link ExecutionResult#timedOut()},
	 * not thrown
	 * @throws NetworkIsolationUnavailableException isolation is unavailable and the mode
	 * is strict
	 * @throws InvalidExecutionRequestException the working directory does not exist
	 * @throws CommandNotFoundException {@code argv[0]} does not exist
	 * @throws CommandNotExecutableException {@code argv[0]} cannot be executed
	 * @throws ConcurrencyLimitExceededException no slot became free within the queue
	 * timeout
	 * @throws ExecutionCancelledException the calling thread was interrupted
	 * @throws SandboxLaunchException the sandbox process could not be started
	 */
	ExecutionResult execute(ExecutionRequest request);

	/**
	 * Run the given argv with every other value at its default.
	 * @param argv the command and its arguments
	 * @return the result
	 * @see #execute(ExecutionRequest)
	 */
	default ExecutionResult execute(String... argv) {
		return execute(ExecutionRequest.of(argv));
	}

	/**
	 * Run the request asynchronously. The future completes with the result, or
	 * exceptionally with one of the exceptions of {@link #execute(ExecutionRequest)}.
	 * Cancelling the future kills the process tree.
	 * @param request the request
	 * @return the future result
	 */
	CompletableFuture<ExecutionResult> executeAsync(ExecutionRequest request);

	/**
	 * Start the request and return at once with a handle to the running process, for a
	 * long-running program that the caller talks to over its stdin and stdout (an MCP
	 * server, a language server, a REPL). The same sandbox, environment, working
	 * directory, resource limits and allow-list apply as for
	 * {@link #execute(ExecutionRequest)}; the process holds one concurrency slot until
	 * its tree has ended; it dies with the JVM; closing the executor kills it.
	 * <p>
	 * Differences from {@link #execute(ExecutionRequest)}: only the request's own timeout
	 * applies (none by default: a server runs until it exits or is destroyed, the
	 * settings' timeout does not apply); the streams are the caller's, so the request may
	 * set no stdin, no output sink and no output cap.
	 * @param request the request
	 * @return the running process
	 * @throws NetworkIsolationUnavailableException isolation is unavailable and the mode
	 * is strict
	 * @throws InvalidExecutionRequestException the request sets stdin, an output sink or
	 * an output cap, or its working directory does not exist
	 * @throws CommandNotFoundException {@code argv[0]} does not exist
	 * @throws CommandNotExecutableException {@code argv[0]} cannot be executed
	 * @throws ConcurrencyLimitExceededException no slot became free within the queue
	 * timeout
	 * @throws ExecutionCancelledException the calling thread was interrupted, or the
	 * executor is closed
	 * @throws SandboxLaunchException the sandbox process could not be started
	 */
	SandboxedProcess start(ExecutionRequest request);

	/**
	 * Return the isolation that this executor applies to every execution.
	 * @return the isolation, {@link Isolation#NONE} in fallback mode on a host without
	 * isolation
	 * @throws NetworkIsolationUnavailableException isolation is unavailable and the mode
	 * is strict
	 */
	Isolation isolation();

	/**
	 * Return the state of this executor's pool of warm sandboxes
	 * ({@code cave.sandbox.warm.size}, {@link SandboxSettings#warm()}).
	 * @return a snapshot; {@link WarmPoolState#OFF} where the executor has no pool
	 */
	default WarmPoolState warmPool() {
		return WarmPoolState.OFF;
	}

	/**
	 * Kill every running execution and release the executor's threads. Executions started
	 * afterwards throw {@link ExecutionCancelledException}.
	 */
	@Override
	void close();

}
