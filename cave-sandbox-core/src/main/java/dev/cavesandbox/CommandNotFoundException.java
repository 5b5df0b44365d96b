package dev.cavesandbox;

/**
 * Thrown when the command ({@code argv[0]}) does not exist: a path that names no file, or
 * a bare name that is on no directory of the child's {@code PATH}. Its code is
 * {@value #CODE}; the command-line tool of the sample app maps it to exit code 127, like
 * a POSIX shell.
 */
public class CommandNotFoundException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_command_not_found";

	/**
	 * Create an exception for the given command.
	 * @param message which command was not found and where it was looked for
	 */
	public CommandNotFoundException(String message) {
		super(CODE, message, null);
	}

}
