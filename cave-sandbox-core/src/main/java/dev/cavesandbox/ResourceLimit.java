package dev.cavesandbox;

/**
 * A resource limit that ended a command, where that can be known: the kernel signals
 * these two ({@code SIGXCPU}, {@code SIGXFSZ}; {@code setrlimit(2)}), and the command
 * died of that signal. The other limits of {@link ResourceLimits} make the failing call
 * fail ({@code EAGAIN} from {@code fork}, {@code ENOMEM}, {@code ENOSPC},
 * {@code EMFILE}), which only the command sees.
 */
public enum ResourceLimit {

	/** The CPU time limit ({@code cave.sandbox.limits.cpu-time}): SIGXCPU. */
	CPU_TIME("cpu-time"),

	/** The file size limit ({@code cave.sandbox.limits.file-size}): SIGXFSZ. */
	FILE_SIZE("file-size");

	private final String propertyName;

	ResourceLimit(String propertyName) {
		this.propertyName = propertyName;
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

}
