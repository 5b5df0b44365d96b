package dev.cavesandbox.autoconfigure.observation;

import java.util.concurrent.CancellationException;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.Isolation;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Observation.Context} of one {@link SandboxObservationDocumentation#EXECUTION
 * execution}: the request, the isolation of the executor, and the result once there is
 * one.
 */
public class SandboxExecutionObservationContext extends Observation.Context {

	private final ExecutionRequest request;

	private final Isolation isolation;

	private @Nullable ExecutionResult result;

	/**
	 * Create a context of one execution.
	 * @param request the request
	 * @param isolation the isolation that the executor applies ({@link Isolation#NONE}
	 * when it refuses every execution)
	 */
	public SandboxExecutionObservationContext(ExecutionRequest request, Isolation isolation) {
		this.request = request;
		this.isolation = isolation;
	}

	/**
	 * Return the request.
	 * @return the request
	 */
	public ExecutionRequest getRequest() {
		return this.request;
	}

	/**
	 * Return the isolation that was applied: the result's once there is one, otherwise
	 * the executor's.
	 * @return the isolation
	 */
	public Isolation getIsolation() {
		return (this.result != null) ? this.result.isolation() : this.isolation;
	}

	/**
	 * Return the result.
	 * @return the result, or {@code null} while the execution runs or when it failed
	 */
	public @Nullable ExecutionResult getResult() {
		return this.result;
	}

	/**
	 * Set the result.
	 * @param result the result
	 */
	public void setResult(ExecutionResult result) {
		this.result = result;
	}

	/**
	 * Return how the execution ended.
	 * @return the outcome, {@link Outcome#UNKNOWN} while it runs
	 */
	public Outcome getOutcome() {
		if (this.result != null) {
			return this.result.timedOut() ? Outcome.TIMEOUT
					: (this.result.exitCode() == 0) ? Outcome.SUCCESS : Outcome.NON_ZERO_EXIT;
		}
		return (getError() != null) ? Outcome.ERROR : Outcome.UNKNOWN;
	}

	/**
	 * Return the stable code of the failure: the {@link CaveSandboxException#code() code}
	 * of a cave-sandbox exception, {@value ExecutionCancelledException#CODE} for a
	 * cancelled future, the simple class name of any other exception.
	 * @return the code, or {@code null} when there was no failure
	 */
	public @Nullable String getErrorCode() {
		Throwable error = getError();
		if (error == null) {
			return null;
		}
		if (error instanceof CaveSandboxException sandboxException) {
			return sandboxException.code();
		}
		if (error instanceof CancellationException) {
			return ExecutionCancelledException.CODE;
		}
		return error.getClass().getSimpleName();
	}

	/**
	 * How an execution ended.
	 */
	public enum Outcome {

		/** The command exited with code 0 before its timeout. */
		SUCCESS,

		/** The command exited with another code before its timeout. */
		NON_ZERO_EXIT,

		/** The timeout ended the execution; the process tree was killed. */
		TIMEOUT,

		/** The execution threw: it was refused, could not start, or was cancelled. */
		ERROR,

		/** The execution has not ended yet. */
		UNKNOWN

	}

}
