package dev.cavesandbox;

/**
 * Thrown when the command ({@code argv[0]}) exists but cannot be executed: it is a
 * directory or lacks the execute permission. Its code is {@value #CODE}; the command-line
 * tool of the sample app maps it to exit code 126, like a POSIX shell.
 */
public class CommandNotExecutableException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_command_not_executable";

	/**
	 * Create an exception for the given command.
	 * @param message which command cannot be executed and why
	 */
	public CommandNotExecutableException(String message) {
		super(CODE, message, null);
	}

}
