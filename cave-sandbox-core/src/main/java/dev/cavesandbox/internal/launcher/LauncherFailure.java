package dev.cavesandbox.internal.launcher;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What the launcher (and the wrapper before it) wrote on stderr when a sandbox was not
 * set up: the one reader of the launcher's failure lines ({@code fail.c}). Each line the
 * launcher writes starts with {@value LauncherContract#MESSAGE_PREFIX} and, under the
 * executor, ends with {@code [launch TOKEN]} ({@link LauncherContract#TOKEN_VARIABLE});
 * when the wrapper ended first, the last line starts with
 * {@link LauncherContract#NOT_SET_UP}.
 *
 * @param lines stderr's lines
 */
public record LauncherFailure(List<String> lines) {

	public LauncherFailure {
		lines = List.copyOf(lines);
	}

	/**
	 * Read stderr as UTF-8, stripped as a whole.
	 * @param stderr what the process wrote on stderr
	 * @return its lines
	 */
	public static LauncherFailure of(byte[] stderr) {
		return of(new String(stderr, StandardCharsets.UTF_8).strip());
	}

	/**
	 * Read stderr.
	 * @param stderr what the process wrote on stderr
	 * @return its lines
	 */
	public static LauncherFailure of(String stderr) {
		return new LauncherFailure(stderr.lines().toList());
	}

	/**
	 * Return whether the last line is the launcher's failure of the launch with this
	 * token: the command cannot write it (it does not know the token).
	 * @param token the launch's token
	 * @return whether the sandbox of that launch was not set up
	 */
	public boolean endsLaunch(String token) {
		String last = this.lines.isEmpty() ? "" : this.lines.get(this.lines.size() - 1);
		return last.startsWith(LauncherContract.MESSAGE_PREFIX) && last.endsWith(" [launch " + token + "]");
	}

	/**
	 * Return the lines that may name a cause: all but the launcher's closing
	 * {@link LauncherContract#NOT_SET_UP} lines, which say nothing of it.
	 * @return those lines, joined by newlines
	 */
	public String causes() {
		return this.lines.stream()
			.filter((line) -> !line.startsWith(LauncherContract.NOT_SET_UP))
			.collect(Collectors.joining("\n"));
	}

	/**
	 * Return whether the launcher itself reported this reason (a line
	 * {@code cave-sandbox-launcher: REASON...}).
	 * @param reason the start of the launcher's reason, for example
	 * {@code cannot load the seccomp filter}
	 * @return whether a cause line says it
	 */
	public boolean says(String reason) {
		return causes().contains(LauncherContract.MESSAGE_PREFIX + " " + reason);
	}

	/**
	 * Return whether a cause line is the launcher's own (rather than the wrapper's).
	 * @return whether the launcher refused something
	 */
	public boolean fromLauncher() {
		String causes = causes();
		return causes.startsWith(LauncherContract.MESSAGE_PREFIX)
				|| causes.contains("\n" + LauncherContract.MESSAGE_PREFIX);
	}

	/**
	 * Return the lines joined for a message.
	 * @return the lines joined by {@code " / "}
	 */
	public String joined() {
		return String.join(" / ", this.lines);
	}

}
