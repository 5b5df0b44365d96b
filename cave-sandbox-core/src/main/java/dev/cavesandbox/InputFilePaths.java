package dev.cavesandbox;

import java.nio.charset.StandardCharsets;
import java.util.Collection;

import org.jspecify.annotations.Nullable;

/**
 * The rules of the paths of a request's input files
 * ({@link ExecutionRequest.Builder#inputFile(String, byte[])}): relative to the working
 * directory with {@code /} between names, not empty, no empty, {@code .} or {@code ..}
 * name, no name over {@value #MAX_NAME_BYTES} bytes, no NUL, valid Unicode, and neither
 * the same path as another input file nor one of its directories. A path that breaks one
 * fails with {@link InvalidExecutionRequestException}. The paths and patterns of output
 * files ({@link OutputFilePaths}) follow the same rules but the collision.
 */
final class InputFilePaths {

	/** The longest name of a file that Linux file systems store (NAME_MAX). */
	private static final int MAX_NAME_BYTES = 255;

	private InputFilePaths() {
	}

	/**
	 * Check the path of an input file.
	 * @param relativePath the path
	 * @param given the paths of the input files given before
	 * @return the path
	 * @throws InvalidExecutionRequestException if it breaks a rule
	 */
	static String require(@Nullable String relativePath, Collection<String> given) {
		requireRelative("input file path", relativePath);
		for (String other : given) {
			if (other.equals(relativePath) || other.startsWith(relativePath + "/")
					|| relativePath.startsWith(other + "/")) {
				throw new InvalidExecutionRequestException("input file path " + relativePath + " collides with " + other
						+ ", given before: each path may name one file, and no file may be another's "
						+ "directory; give each file once");
			}
		}
		return relativePath;
	}

	/**
	 * Check a path relative to the working directory: every rule but the collision with
	 * another path.
	 * @param what what the path is, as messages name it ({@code input file path})
	 * @param relativePath the path
	 * @return the path
	 * @throws InvalidExecutionRequestException if it breaks a rule
	 */
	static String requireRelative(String what, @Nullable String relativePath) {
		if (relativePath == null || relativePath.isEmpty()) {
			throw new InvalidExecutionRequestException(
					what + " must name a file relative to the working directory, but was '" + relativePath + "'");
		}
		ProcessStrings.requireNoNul(what, relativePath);
		if (!StandardCharsets.UTF_8.newEncoder().canEncode(relativePath)) {
			throw new InvalidExecutionRequestException(what + " " + relativePath.replaceAll("\\p{Cs}", "?")
					+ " is not valid Unicode (it holds a lone surrogate, shown as ?), so it names no file; give a "
					+ "name of whole characters");
		}
		if (relativePath.startsWith("/")) {
			throw new InvalidExecutionRequestException(
					what + " " + relativePath + " is absolute; give it relative to the working directory, for example "
							+ relativePath.replaceFirst("^/+", ""));
		}
		for (String name : relativePath.split("/", -1)) {
			requireName(what, relativePath, name);
		}
		return relativePath;
	}

	private static void requireName(String what, String relativePath, String name) {
		if (name.isEmpty() || name.equals(".") || name.equals("..")) {
			throw new InvalidExecutionRequestException(what + " " + relativePath
					+ " has an empty, '.' or '..' name; give the plain path below the working directory, "
					+ "such as dir/file.txt");
		}
		if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
			throw new InvalidExecutionRequestException(what + " " + relativePath + " has a name of more than "
					+ MAX_NAME_BYTES + " bytes, which no Linux file system stores; shorten it");
		}
	}

}
