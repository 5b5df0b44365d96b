package dev.cavesandbox;

/**
 * Thrown when the sandbox process could not be started although the probe had verified
 * it, for example because the JVM ran out of file descriptors or the wrapper binary was
 * removed after startup, or because the launcher refused to set the sandbox up (its
 * working directory was swapped for a symbolic link, ...). Its code is {@value #CODE}.
 * The command was not run.
 */
public class SandboxLaunchException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_launch_failed";

	/**
	 * Create an exception with the given explanation.
	 * @param message what could not be started
	 * @param cause the underlying I/O failure
	 */
	public SandboxLaunchException(String message, Throwable cause) {
		super(CODE, message, cause);
	}

	/**
	 * Create an exception with the given explanation and no underlying exception.
	 * @param message what could not be started, and why
	 */
	public SandboxLaunchException(String message) {
		super(CODE, message, null);
	}

}
