package dev.cavesandbox.ai;

import org.jspecify.annotations.Nullable;

/**
 * What the {@link CodeExecutionTool} returns to the model, serialized as JSON: what the
 * snippet printed and how it ended, or why it did not run.
 *
 * @param exitCode the snippet's exit code ({@code 128 + n} when killed by signal
 * {@code n}), or {@code null} when it did not run
 * @param stdout what it printed on stdout, decoded as UTF-8, at most the configured size,
 * followed by {@link #TRUNCATED_MARKER} and that size when it printed more
 * @param stderr what it printed on stderr, likewise
 * @param stdoutTruncated whether stdout was longer than the configured size and the rest
 * discarded
 * @param stderrTruncated whether stderr was longer than the configured size
 * @param timedOut whether the timeout ended the snippet (its processes were killed)
 * @param isolation the isolation applied (for example
 * {@code unshare (network isolated)}), or {@code null} when it did not run
 * @param error why the snippet did not run (an unknown language, an invalid input file
 * name), or {@code null} when it ran
 */
public record CodeExecutionResult(@Nullable Integer exitCode, String stdout, String stderr, boolean stdoutTruncated,
		boolean stderrTruncated, boolean timedOut, @Nullable String isolation, @Nullable String error) {

	/** The text that follows an output stream that was truncated. */
	public static final String TRUNCATED_MARKER = "[output truncated at ";

	/**
	 * Create the result of a snippet that did not run.
	 * @param error why it did not run
	 * @return the result
	 */
	public static CodeExecutionResult notRun(String error) {
		return new CodeExecutionResult(null, "", "", false, false, false, null, error);
	}

}
