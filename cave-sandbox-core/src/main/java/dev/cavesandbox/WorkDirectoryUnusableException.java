package dev.cavesandbox;

/**
 * Thrown when an execution cannot create or prepare its private working directory because
 * the work directory ({@link SandboxSettings#workDirectory()}) has become unusable since
 * startup: it was removed, made read-only, filled up, ran out of inodes or refuses this
 * user. Its code is {@value #CODE}; its message names the directory and the cause. The
 * command was not run and nothing of the execution is left behind; the next execution
 * works again once the cause is gone (space freed, the file system writable again).
 */
public class WorkDirectoryUnusableException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_work_directory_unusable";

	/**
	 * Create an exception with the given explanation.
	 * @param message which directory, and why it is unusable
	 * @param cause the underlying I/O failure
	 */
	public WorkDirectoryUnusableException(String message, Throwable cause) {
		super(CODE, message, cause);
	}

	/**
	 * Create an exception with the given explanation and no underlying exception.
	 * @param message which directory, and why it is unusable
	 */
	public WorkDirectoryUnusableException(String message) {
		super(CODE, message, null);
	}

}
