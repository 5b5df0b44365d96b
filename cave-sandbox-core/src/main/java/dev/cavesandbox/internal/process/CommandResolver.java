package dev.cavesandbox.internal.process;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.cavesandbox.CommandNotExecutableException;
import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.jspecify.annotations.Nullable;

/**
 * Checks {@code argv[0]} before anything is spawned, the way {@code execvp(3)} will look
 * for it: a name with a slash is a path (relative to the working directory), a bare name
 * is looked up in each directory of the child's {@code PATH}. This gives a clear, coded
 * error instead of the wrapper's exit code 126 or 127, which a command could also return
 * on its own.
 * <p>
 * An internal building block of {@link ProcessIsolatedExecutor}, public only so that the
 * project's benchmarks can measure the executor's own code; it is not part of the
 * supported API and may change without notice.
 */
public final class CommandResolver {

	private CommandResolver() {
	}

	/**
	 * Check the command and return the file it names.
	 * @param command {@code argv[0]}
	 * @param directory the working directory, against which relative paths and
	 * {@code PATH} entries resolve
	 * @param path the child's {@code PATH}, or {@code null}
	 * @return the absolute path of the command
	 * @throws CommandNotFoundException if there is no such file
	 * @throws CommandNotExecutableException if it is a directory or not executable
	 */
	public static Path check(String command, Path directory, @Nullable String path) {
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
