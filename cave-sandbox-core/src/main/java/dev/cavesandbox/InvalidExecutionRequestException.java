package dev.cavesandbox;

/**
 * Thrown when an execution request cannot be run as given: an empty argv, an argument
 * that contains a NUL byte, a zero or negative timeout or output cap, a working directory
 * that does not exist, or an output directory that is missing, a symbolic link, not a
 * directory or not writable. Its code is {@value #CODE}; the message names the offending
 * field. Nothing was run and nothing was created when this is thrown.
 */
public class InvalidExecutionRequestException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_invalid_request";

	/**
	 * Create an exception with the given explanation.
	 * @param message what is wrong with the request and how to fix it
	 */
	public InvalidExecutionRequestException(String message) {
		super(CODE, message, null);
	}

}
