package dev.cavesandbox;

import org.jspecify.annotations.Nullable;

/**
 * A resource limit that ended a command, where that can be known: the kernel signals
 * these two ({@code SIGXCPU}, {@code SIGXFSZ}; {@code setrlimit(2)}), and the command
 * died of that signal. The other limits of {@link ResourceLimits} make the failing call
 * fail ({@code EAGAIN} from {@code fork}, {@code ENOMEM}, {@code ENOSPC},
 * {@code EMFILE}), which only the command sees.
 * <p>
 * The executor reports one ({@link ExecutionResult#limitExceeded()}) when the command
 * exited with {@code 128 + n} for its signal {@code n} (the launcher's and bwrap's
 * convention: 152 for {@code SIGXCPU}, 153 for {@code SIGXFSZ}), that limit was in effect
 * for the execution, and the timeout did not end it. It cannot tell the kernel's signal
 * from the same signal sent by the command itself ({@code kill -XCPU $$}), nor from a
 * command that exits with that code on its own (a shell does when a child of it died of
 * the signal): the report says the command ended as if by the limit's signal, under that
 * limit; a diagnosis, not evidence. A command that ignores {@code SIGXCPU} is killed by
 * {@code SIGKILL} one second of CPU later (exit code 137), which is not reported: an
 * out-of-memory kill looks the same. Nothing is reported where no limit was applied:
 * unisolated (fallback mode) and on macOS.
 */
public enum ResourceLimit {

	/** The CPU time limit ({@code cave.sandbox.limits.cpu-time}): SIGXCPU. */
	CPU_TIME("cpu-time", 24),

	/** The file size limit ({@code cave.sandbox.limits.file-size}): SIGXFSZ. */
	FILE_SIZE("file-size", 25);

	private final String propertyName;

	/** The signal the kernel sends, as numbered on Linux (x86_64 and aarch64). */
	private final int signal;

	ResourceLimit(String propertyName, int signal) {
		this.propertyName = propertyName;
		this.signal = signal;
	}

	/**
	 * Return the name of the limit as in its property, {@code cpu-time} or
	 * {@code file-size}: the value of the observation's {@code limit} key and of the
	 * command-line tool's {@code cave-sandbox: limit exceeded: <name>}.
	 * @return the name
	 */
	public String propertyName() {
		return this.propertyName;
	}

	/**
	 * Return the limit that ended a command, as the executor reports it: the command
	 * exited with {@code 128 +} the limit's signal, the limit is set in {@code applied},
	 * and the timeout did not end the execution (the tree was then killed by the
	 * executor, whatever signal the command's last report names).
	 * @param exitCode the exit code of the command
	 * @param timedOut whether the timeout ended the execution
	 * @param applied the limits that were applied to the command;
	 * {@link ResourceLimits#NONE} where none was (unisolated, macOS)
	 * @return the limit, or {@code null}
	 */
	public static @Nullable ResourceLimit exceeded(int exitCode, boolean timedOut, ResourceLimits applied) {
		if (timedOut) {
			return null;
		}
		if (exitCode == 128 + CPU_TIME.signal && applied.cpuTime() != null) {
			return CPU_TIME;
		}
		if (exitCode == 128 + FILE_SIZE.signal && applied.fileSize() != null) {
			return FILE_SIZE;
		}
		return null;
	}

}
