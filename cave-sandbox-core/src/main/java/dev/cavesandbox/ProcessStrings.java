package dev.cavesandbox;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The rules of the strings a child process gets: no NUL byte in an argument, a name or a
 * value (execve(2) passes C strings), and variable names that are not empty and hold no
 * {@code '='} (environ(7)). A request's strings that break them fail with
 * {@link InvalidExecutionRequestException}, the settings' with
 * {@link IllegalArgumentException}.
 */
final class ProcessStrings {

	private ProcessStrings() {
	}

	static boolean isVariableName(String name) {
		return !name.isEmpty() && name.indexOf('=') < 0 && name.indexOf('\0') < 0;
	}

	/**
	 * Check the environment of the settings ({@link SandboxSettings.Env}).
	 * @param pass the names to pass
	 * @param set the variables to set
	 * @throws IllegalArgumentException if a name or value breaks a rule
	 */
	static void requireEnvironment(Set<String> pass, Map<String, String> set) {
		set.forEach((name, value) -> {
			if (!isVariableName(name) || value.indexOf('\0') >= 0) {
				throw new IllegalArgumentException("environment variable '" + name.replace('\0', '?')
						+ "' must have a non-empty name without '=' and no NUL byte in its name or value");
			}
		});
		pass.forEach((name) -> {
			if (!isVariableName(name)) {
				throw new IllegalArgumentException(
						"variable name '" + name.replace('\0', '?') + "' to pass is not valid");
			}
		});
	}

	/**
	 * Check a request's argv.
	 * @param argv the command and its arguments
	 * @return the argv
	 * @throws InvalidExecutionRequestException if it is empty, {@code argv[0]} is empty
	 * or an element is {@code null} or holds a NUL byte
	 */
	static List<String> requireArgv(@Nullable List<String> argv) {
		if (argv == null || argv.isEmpty()) {
			throw new InvalidExecutionRequestException("argv must name a command: it is empty");
		}
		for (int i = 0; i < argv.size(); i++) {
			String arg = argv.get(i);
			if (arg == null) {
				throw new InvalidExecutionRequestException("argv[" + i + "] is null");
			}
			requireNoNul("argv[" + i + "]", arg);
		}
		if (argv.get(0).isEmpty()) {
			throw new InvalidExecutionRequestException("argv[0] must name a command: it is an empty string");
		}
		return argv;
	}

	/**
	 * Check the name of a request's variable.
	 * @param name the name
	 * @return the name
	 * @throws InvalidExecutionRequestException if it breaks a rule
	 */
	static String requireVariableName(@Nullable String name) {
		if (name == null || name.isEmpty() || name.indexOf('=') >= 0) {
			throw new InvalidExecutionRequestException(
					"environment variable name must be non-empty and contain no '=', but was '" + name + "'");
		}
		return requireNoNul("environment variable name", name);
	}

	/**
	 * Check that a request's string holds no NUL byte.
	 * @param what what the string is, for the message
	 * @param value the string
	 * @return the string
	 * @throws InvalidExecutionRequestException if it holds one
	 */
	static String requireNoNul(String what, String value) {
		if (value.indexOf('\0') >= 0) {
			throw new InvalidExecutionRequestException(
					what + " contains a NUL byte, which cannot be passed to a process (execve(2))");
		}
		return value;
	}

}
