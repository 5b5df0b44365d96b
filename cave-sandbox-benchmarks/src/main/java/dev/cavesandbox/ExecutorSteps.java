package dev.cavesandbox;

import java.nio.file.Path;

/**
 * Lets the benchmarks call package-private steps of the executor itself rather than copies of
 * them. It lives in the core's package on the class path of the benchmarks only; it is not part
 * of any published artifact.
 */
public final class ExecutorSteps {

	private ExecutorSteps() {
	}

	/**
	 * Remove a private working directory as the executor does after each execution.
	 * @param directory the directory
	 */
	public static void deleteTree(Path directory) {
		ProcessIsolatedExecutor.deleteTree(directory);
	}

	/**
	 * Check {@code argv[0]} as the executor does before each spawn.
	 * @param command {@code argv[0]}
	 * @param directory the working directory
	 * @param path the child's {@code PATH}
	 */
	public static void checkCommand(String command, Path directory, String path) {
		CommandResolver.check(command, directory, path);
	}

}
