package dev.cavesandbox;

/**
 * Thrown when an execution waited for a free slot longer than the configured queue
 * timeout ({@link SandboxSettings#queueTimeout()}) because
 * {@link SandboxSettings#maxConcurrent()} executions were already running. Its code is
 * {@value #CODE}. Nothing was run.
 */
public class ConcurrencyLimitExceededException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_concurrency_limit_exceeded";

	/**
	 * Create an exception with the given explanation.
	 * @param message the limit and how long the execution waited
	 */
	public ConcurrencyLimitExceededException(String message) {
		super(CODE, message, null);
	}

}
