package dev.cavesandbox;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

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
 * @param outputFiles the files the request asked back
 * ({@link ExecutionRequest.Builder#outputFile}), read after the process tree had ended
 * (also after a timeout); {@link OutputFiles#NONE} when it asked for none
 * @param warm whether the command ran in a warm sandbox, set up before the request came
 * ({@code cave.sandbox.warm.size}); {@code false} for the cold path
 */
public record ExecutionResult(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated,
		boolean stderrTruncated, boolean timedOut, Duration wallTime, Isolation isolation,
		@Nullable ResourceLimit limitExceeded, List<EgressDecision> egressDecisions, OutputFiles outputFiles,
		boolean warm) {

	public ExecutionResult {
		egressDecisions = List.copyOf(egressDecisions);
		Objects.requireNonNull(outputFiles, "outputFiles must not be null");
	}

	/**
	 * Create a result of the cold path.
	 * @param exitCode the exit code
	 * @param stdout the captured stdout
	 * @param stderr the captured stderr
	 * @param stdoutTruncated whether stdout was truncated
	 * @param stderrTruncated whether stderr was truncated
	 * @param timedOut whether the timeout ended the execution
	 * @param wallTime the wall-clock time
	 * @param isolation the isolation that was applied
	 * @param limitExceeded the resource limit that ended the command, or {@code null}
	 * @param egressDecisions the egress proxy's decisions
	 * @param outputFiles the files the request asked back
	 */
	public ExecutionResult(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated, boolean stderrTruncated,
			boolean timedOut, Duration wallTime, Isolation isolation, @Nullable ResourceLimit limitExceeded,
			List<EgressDecision> egressDecisions, OutputFiles outputFiles) {
		this(exitCode, stdout, stderr, stdoutTruncated, stderrTruncated, timedOut, wallTime, isolation, limitExceeded,
				egressDecisions, outputFiles, false);
	}

	/**
	 * Create a result without output files.
	 * @param exitCode the exit code
	 * @param stdout the captured stdout
	 * @param stderr the captured stderr
	 * @param stdoutTruncated whether stdout was truncated
	 * @param stderrTruncated whether stderr was truncated
	 * @param timedOut whether the timeout ended the execution
	 * @param wallTime the wall-clock time
	 * @param isolation the isolation that was applied
	 * @param limitExceeded the resource limit that ended the command, or {@code null}
	 * @param egressDecisions the egress proxy's decisions
	 */
	public ExecutionResult(int exitCode, byte[] stdout, byte[] stderr, boolean stdoutTruncated, boolean stderrTruncated,
			boolean timedOut, Duration wallTime, Isolation isolation, @Nullable ResourceLimit limitExceeded,
			List<EgressDecision> egressDecisions) {
		this(exitCode, stdout, stderr, stdoutTruncated, stderrTruncated, timedOut, wallTime, isolation, limitExceeded,
				egressDecisions, OutputFiles.NONE);
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
	 * Return the bytes of an output file that the request asked back
	 * ({@link ExecutionRequest.Builder#outputFile}); see {@link #outputFiles()} for why
	 * one is not there.
	 * @param path its path relative to the working directory, as given or matched
	 * @return a copy of its bytes, or empty where it was not returned (missing, not a
	 * regular file, past the cap, or not asked for)
	 */
	public Optional<byte[]> outputFile(String path) {
		return this.outputFiles.content(path);
	}

	/**
	 * Return whether output files were left out for the cap
	 * ({@link ExecutionRequest.Builder#maxOutputFileBytes(long)}); their paths are in
	 * {@code outputFiles().omitted()}.
	 * @return whether the output files are incomplete for the cap
	 */
	public boolean outputFilesTruncated() {
		return this.outputFiles.truncated();
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
				+ ((this.limitExceeded != null) ? ", limitExceeded=" + this.limitExceeded : "")
				+ ((this.outputFiles != OutputFiles.NONE) ? ", outputFiles=" + this.outputFiles : "") + "]";
	}

}
