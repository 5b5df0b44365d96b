package dev.cavesandbox;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * What one program did in one shape of the compatibility suite: whether it worked (exit 0
 * and the expected last line of stdout) and, if not, one line that says how it failed
 * (for the table) with everything it printed (for the assertion's message).
 *
 * @param ok whether the program worked
 * @param summary {@code ok}, or the failure's error line
 * @param detail the exit, stdout and stderr, or the exception
 */
record CompatibilityOutcome(boolean ok, String summary, String detail) {

	/** The longest summary, in characters; a longer one is cut and ends with "...". */
	static final int SUMMARY_LENGTH = 160;

	/**
	 * Lines of stderr that say what went wrong, in the words programs use: the last of
	 * them that says something (not a shell's report of a signal, which the exit code
	 * gives, nor a bare exception name) is the failure's error line: the one a Python
	 * traceback ends with (its child's, when the parent's only says {@code EOFError}), or
	 * the {@code FATAL} line a Chromium aborted on after a child's failure it survived.
	 */
	private static final Pattern ERROR_LINE = Pattern
		.compile("(?i).*(error|denied|not permitted|fail|fatal|abort|cannot|can't|unable|too long|refused|killed|"
				+ "no such|not found|segmentation|exception).*");

	/** A shell's report of its child's signal. */
	private static final Pattern SIGNAL_LINE = Pattern
		.compile("(Aborted|Killed|Segmentation fault|Bus error|Terminated)( \\(core dumped\\))?");

	/** The name of an execution's private working directory. */
	private static final Pattern EXECUTION = Pattern.compile("cave-sandbox-\\d+-[0-9a-z]+-\\d+");

	/** A name of {@code mkdtemp(3)}'s ({@code prefix.XXXXXX}) in a path. */
	private static final Pattern MKDTEMP = Pattern.compile("(\\w)\\.[A-Za-z0-9]{6}/");

	private static final Pattern RUNC_TIME = Pattern.compile("time=\"[^\"]*\" ");

	/** {@code [pid:tid:MMDD/HHMMSS.micros:LEVEL:} of Chromium's logging. */
	private static final Pattern CHROMIUM_PREFIX = Pattern.compile("\\[\\d+:\\d+:\\d{4}/\\d{6}\\.\\d+:([A-Z]+):");

	/**
	 * Judge an execution's result.
	 * @param program the program
	 * @param exitCode its exit code
	 * @param timedOut whether its timeout ended it
	 * @param stdout its stdout
	 * @param stderr its stderr
	 * @return the outcome
	 */
	static CompatibilityOutcome of(CompatibilityProgram program, int exitCode, boolean timedOut, String stdout,
			String stderr) {
		String detail = "exit " + exitCode + (timedOut ? " (timed out)" : "") + "\n--- stdout:\n" + stdout
				+ "\n--- stderr:\n" + stderr;
		if (timedOut) {
			return failed("timed out after " + program.deadline().toSeconds() + " s", detail);
		}
		List<String> lines = stdout.lines().filter((line) -> !line.isBlank()).toList();
		String last = lines.isEmpty() ? "" : lines.get(lines.size() - 1);
		if (exitCode == 0 && last.equals(program.lastLine())) {
			return new CompatibilityOutcome(true, "ok", detail);
		}
		Optional<String> error = errorLine(stderr);
		if (exitCode != 0) {
			return failed("exit " + exitCode + ": " + error.orElse(lastLine(stderr, stdout)), detail);
		}
		return failed("printed \"" + last + "\", expected \"" + program.lastLine() + "\"", detail);
	}

	/**
	 * An execution that did not run: the executor's error or a JVM that did not start.
	 * @param what what failed
	 * @param message its message
	 * @return the outcome
	 */
	static CompatibilityOutcome error(String what, @Nullable String message) {
		String text = String.valueOf(message);
		return failed(what + ": " + text.lines().findFirst().orElse(""), what + ": " + text);
	}

	private static CompatibilityOutcome failed(String summary, String detail) {
		// Chromium's and runc's log lines begin with process ids and times, which would
		// tell equal failures apart.
		String line = CHROMIUM_PREFIX.matcher(RUNC_TIME.matcher(summary).replaceAll("")).replaceAll("[$1:");
		// and a private working directory's name tells executions apart
		// and so do the names mkdtemp(3) makes under it
		line = MKDTEMP.matcher(EXECUTION.matcher(line).replaceAll("cave-sandbox-PID-ID-N"))
			.replaceAll("$1.XXXXXX/")
			.strip();
		if (line.length() > SUMMARY_LENGTH) {
			line = line.substring(0, SUMMARY_LENGTH - 3) + "...";
		}
		return new CompatibilityOutcome(false, line, detail);
	}

	private static Optional<String> errorLine(String stderr) {
		List<String> errors = stderr.lines()
			.map(String::strip)
			.filter((line) -> ERROR_LINE.matcher(line).matches() && !SIGNAL_LINE.matcher(line).matches())
			.toList();
		// A line that says something (a bare "EOFError" of a parent whose child failed
		// does not) wins.
		return errors.stream()
			.filter((line) -> line.contains(": "))
			.reduce((first, second) -> second)
			.or(() -> errors.stream().reduce((first, second) -> second));
	}

	private static String lastLine(String stderr, String stdout) {
		String text = stderr.isBlank() ? stdout : stderr;
		List<String> lines = text.lines().filter((line) -> !line.isBlank()).toList();
		return lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1).strip();
	}

}
