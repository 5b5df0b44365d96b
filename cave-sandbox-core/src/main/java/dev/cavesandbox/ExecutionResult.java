package dev.cavesandbox;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.cavesandbox.egress.EgressDecision;
import org.jspecify.annotations.Nullable;

/**
 * What one execution produced. Immutable.
 *
 * @param exitCode the exit code of the command; {@code 128 + n} when it was killed by
 * signal {@code n} (for example 137 after SIGKILL on timeout)
 * @param stdout the captured stdout, at most the output cap; empty when it was streamed
 * to a sink
 * @param stderr the captured stderr, at most the output cap; empty when it was streamed
 * to a sink
 * @param stdoutTruncated whether stdout exceeded the cap and the rest was discarded
 * @param stderrTruncated whether stderr exceeded the cap and the rest was discarded
 * @param timedOut whether the timeout ended the execution (the process tree was killed)
 * @param wallTime the wall-clock time from start to the end of the process tree
 * @param isolation the isolation that was actually applied
 * @param limitExceeded the resource limit that ended the command, where that can be known
 * ({@link ResourceLimit}: the command died of {@code SIGXCPU} under a CPU time limit, or
 * of {@code SIGXFSZ} under a file size limit), else {@code null}; always {@code null}
 * when the timeout ended the execution, and where no limit is applied (unisolated in
 * fallback mode, macOS)
 * @param egressDecisions what the egress proxy decided for each connection the command
 * asked it for, in order (host and port as the command named them, allowed or the reason
 * of the refusal); empty without an allow-list
 */
public record ExecutionResult(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated,
		boolean stderrTruncated, boolean timedOut, Duration wallTime, Isolation isolation,
		@Nullable ResourceLimit limitExceeded, List<EgressDecision> egressDecisions) {

	public ExecutionResult {
		egressDecisions = List.copyOf(egressDecisions);
	}

	/**
	 * Create a result without egress decisions.
	 * @param exitCode the exit code
	 * @param stdout the captured stdout
	 * @param stderr the captured stderr
	 * @param stdoutTruncated whether stdout was truncated
	 * @param stderrTruncated whether stderr was truncated
	 * @param timedOut whether the timeout ended the execution
	 * @param wallTime the wall-clock time
	 * @param isolation the isolation that was applied
	 * @param limitExceeded the resource limit that ended the command, or {@code null}
	 */
	public ExecutionResult(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated, boolean stderrTruncated,
			boolean timedOut, Duration wallTime, Isolation isolation, @Nullable ResourceLimit limitExceeded) {
		this(exitCode, stdout, stderr, stdoutTruncated, stderrTruncated, timedOut, wallTime, isolation, limitExceeded,
				List.of());
	}

	/**
	 * Create a result of a command that no known resource limit ended.
	 * @param exitCode the exit code
	 * @param stdout the captured stdout
	 * @param stderr the captured stderr
	 * @param stdoutTruncated whether stdout was truncated
	 * @param stderrTruncated whether stderr was truncated
	 * @param timedOut whether the timeout ended the execution
	 * @param wallTime the wall-clock time
	 * @param isolation the isolation that was applied
	 */
	public ExecutionResult(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated, boolean stderrTruncated,
			boolean timedOut, Duration wallTime, Isolation isolation) {
		this(exitCode, stdout, stderr, stdoutTruncated, stderrTruncated, timedOut, wallTime, isolation, null);
	}

	/**
	 * Return whether the command exited with code 0 before its timeout.
	 * @return whether the execution succeeded
	 */
	public boolean succeeded() {
		return this.exitCode == 0 && !this.timedOut;
	}

	/**
	 * Return stdout decoded as UTF-8.
	 * @return the text
	 */
	public String stdoutText() {
		return stdoutText(StandardCharsets.UTF_8);
	}

	/**
	 * Return stdout decoded with the given charset.
	 * @param charset the charset
	 * @return the text
	 */
	public String stdoutText(Charset charset) {
		return new String(this.stdout, charset);
	}

	/**
	 * Return stderr decoded as UTF-8.
	 * @return the text
	 */
	public String stderrText() {
		return stderrText(StandardCharsets.UTF_8);
	}

	/**
	 * Return stderr decoded with the given charset.
	 * @param charset the charset
	 * @return the text
	 */
	public String stderrText(Charset charset) {
		return new String(this.stderr, charset);
	}

	@Override
	public String toString() {
		return "ExecutionResult[exitCode=" + this.exitCode + ", timedOut=" + this.timedOut + ", stdout="
				+ this.stdout.length + " bytes" + (this.stdoutTruncated ? " (truncated)" : "") + ", stderr="
				+ this.stderr.length + " bytes" + (this.stderrTruncated ? " (truncated)" : "") + ", wallTime="
				+ this.wallTime.toMillis() + " ms, isolation=" + this.isolation
				+ ((this.limitExceeded != null) ? ", limitExceeded=" + this.limitExceeded : "") + "]";
	}

}
