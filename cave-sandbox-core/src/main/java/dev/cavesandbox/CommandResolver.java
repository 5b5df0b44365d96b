package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks {@code argv[0]} before anything is spawned, the way {@code execvp(3)} will look for it:
 * a name with a slash is a path (relative to the working directory), a bare name is looked up in
 * each directory of the child's {@code PATH}. This gives a clear, coded error instead of the
 * wrapper's exit code 126 or 127, which a command could also return on its own.
 */
final class CommandResolver {

	private CommandResolver() {
	}

	/**
	 * Check the command and return the file it names.
	 * @return the absolute path of the command
	 */
	static Path check(String command, Path directory, String path) {
		if (command.indexOf('/') >= 0) {
			Path file = directory.resolve(command);
			if (!Files.exists(file)) {
				throw new CommandNotFoundException("command " + command + " does not exist (resolved to " + file + ")");
			}
			if (Files.isDirectory(file) || !Files.isExecutable(file)) {
				throw new CommandNotExecutableException("command " + command + " is "
						+ (Files.isDirectory(file) ? "a directory" : "not executable (no execute permission)"));
			}
			return file.toAbsolutePath();
		}
		boolean foundNotExecutable = false;
		for (String entry : (path != null) ? path.split(":") : new String[0]) {
			Path file = directory.resolve(entry.isEmpty() ? "." : entry).resolve(command);
			if (Files.isRegularFile(file)) {
				if (Files.isExecutable(file)) {
					return file.toAbsolutePath();
				}
				foundNotExecutable = true;
			}
		}
		if (foundNotExecutable) {
			throw new CommandNotExecutableException(
					"command " + command + " was found on PATH but is not executable (no execute permission)");
		}
		throw new CommandNotFoundException("command " + command + " was not found on the child's PATH (" + path
				+ "); give its absolute path, or set PATH in the variables of the settings (environment) or of the request");
	}

}
