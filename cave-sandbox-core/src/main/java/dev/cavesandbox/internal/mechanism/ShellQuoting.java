package dev.cavesandbox.internal.mechanism;

/**
 * Quotes a value for a POSIX shell (sh(1), "Quoting"): inside single quotes nothing is
 * special, and a single quote is written as {@code '\''}.
 */
final class ShellQuoting {

	private ShellQuoting() {
	}

	static String quote(String value) {
		return "'" + value.replace("'", "'\\''") + "'";
	}

}
