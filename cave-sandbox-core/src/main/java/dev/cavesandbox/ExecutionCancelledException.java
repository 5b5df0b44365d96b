package dev.cavesandbox;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when an execution was cancelled before it finished: the calling thread was
 * interrupted, or the {@link java.util.concurrent.CompletableFuture} of an asynchronous
 * execution was cancelled, or the executor was closed. The whole process tree was killed
 * before this is thrown, and the interrupt flag of the calling thread is set again. Its
 * code is {@value #CODE}.
 */
public class ExecutionCancelledException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_execution_cancelled";

	/**
	 * Create an exception with the given explanation.
	 * @param message why the execution was cancelled
	 * @param cause the interruption, if any
	 */
	public ExecutionCancelledException(String message, @Nullable Throwable cause) {
		super(CODE, message, cause);
	}

}
