package dev.cavesandbox;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The rule of the host paths that settings and requests list (hidden directories,
 * readable and writable paths): absolute and other than {@code /}. A path that breaks it
 * fails with {@code "WHAT must be an absolute path other than /, but was PATH"}, thrown
 * as the caller's exception.
 */
final class ListedPaths {

	private ListedPaths() {
	}

	static <X extends RuntimeException> Path require(String what, @Nullable Path path, Function<String, X> failure) {
		if (path == null || !path.isAbsolute() || path.getParent() == null) {
			throw failure.apply(what + " must be an absolute path other than /, but was " + path);
		}
		return path;
	}

	/**
	 * Check every path of a list of settings.
	 * @param what the name of one path, for the message
	 * @param paths the paths
	 * @return an unmodifiable copy of the paths
	 * @throws IllegalArgumentException if one breaks the rule
	 */
	static List<Path> requireAll(String what, List<Path> paths) {
		List<Path> copy = List.copyOf(paths);
		copy.forEach((path) -> require(what, path, IllegalArgumentException::new));
		return copy;
	}

}
