package dev.cavesandbox.internal.launcher;

/**
 * The Java side of the contract with the native launcher, whose protocol
 * {@code src/main/c/launcher.h} describes in full: descriptor numbers, mode names, the
 * set-up exit code, the names of its variable and socket, and how its messages begin.
 * {@code LauncherContractTests} reads the C sources and fails the build when either side
 * changed alone; it also compares the option names that {@link Launcher} passes and the
 * refusal names of {@link Refusals}.
 */
public final class LauncherContract {

	/** The descriptor of the working directory, for the wrapper. */
	public static final int DIRECTORY_FD = 3;

	/** The descriptor of the launcher itself, for the wrapper. */
	public static final int SELF_FD = 4;

	/**
	 * The descriptor of the egress directory ({@code outer --egress}), for the bridge.
	 */
	public static final int EGRESS_FD = 6;

	/**
	 * The descriptor of the first path that {@code outer} opens for {@code --listed}; the
	 * others follow it ({@link Launcher#listedDescriptor(int)}).
	 */
	public static final int LISTED_FD = 10;

	/** How the wrapper runs the launcher inside the sandbox. */
	public static final String INSIDE = "/proc/self/fd/" + SELF_FD;

	/**
	 * The mode of PID 1 of unshare's namespaces (the unshare and namespaces mechanisms),
	 * which {@code unshare --fork} runs: makes the mounts of a view itself, forks the
	 * command's {@value #EXEC} in-process, reaps orphans, passes on the status.
	 */
	public static final String ROOT = "root";

	/** The mode of bubblewrap's PID 1: forks the command and reaps orphans. */
	public static final String INIT = "init";

	/** The mode that replaces itself with the command (unshare, namespaces mechanism). */
	public static final String EXEC = "exec";

	/**
	 * The mode of the seccomp mechanism: {@code outer}'s wrapper, a subreaper that kills
	 * what the command leaves behind.
	 */
	public static final String CONTAIN = "contain";

	/** The exit code of the launcher when it could not set the sandbox up. */
	public static final int SETUP_FAILED = 125;

	/** The first word of every line the launcher itself writes on stderr. */
	public static final String MESSAGE_PREFIX = "cave-sandbox-launcher:";

	/**
	 * How the launcher's last line begins when the wrapper ended before the sandbox was
	 * set up; the wrapper's own message, if any, is on the lines before it.
	 */
	public static final String NOT_SET_UP = MESSAGE_PREFIX + " the sandbox could not be set up";

	/** The first line of {@code --check} about Landlock begins with this. */
	public static final String LANDLOCK_PREFIX = "landlock=";

	/**
	 * The variable in which the executor gives {@code outer} a token of its own for one
	 * execution: {@code outer} takes it out of the wrapper's environment and ends each of
	 * its failure lines with {@code [launch TOKEN]}, which the command cannot know, so it
	 * cannot pass its own exit 125 off as a sandbox that was never set up.
	 */
	public static final String TOKEN_VARIABLE = "CAVE_SANDBOX_LAUNCH_TOKEN";

	/** The name of the egress proxy's unix socket in the egress directory. */
	public static final String EGRESS_SOCKET = "egress.sock";

	/**
	 * The 8 bytes the launcher of {@code --handover} ({@link Launcher#HANDOVER}) writes
	 * on stdout once the set-up is done, before it reads the frame: nothing else writes
	 * stdout before them but {@code --check}'s lines.
	 */
	public static final String HANDOVER_READY = "CAVE-RDY";

	/**
	 * The 8 bytes the launcher of {@code --handover} writes on stdout once it has read
	 * and checked the frame, right before {@code execve(2)}: the command starts after
	 * them, and what follows on stdout is its own. A launcher that ended without them
	 * never started the command.
	 */
	public static final String HANDOVER_STARTED = "CAVE-RUN";

	/** The first 8 bytes of a frame ({@link HandoverFrame}). */
	public static final String HANDOVER_MAGIC = "CAVEWARM";

	/** The version of the frame, after its magic. */
	public static final int HANDOVER_VERSION = 1;

	/**
	 * The largest body of a frame, in bytes: 2 MiB + 64 KiB, above {@code ARG_MAX}.
	 */
	public static final int HANDOVER_MAX = 2 * 1024 * 1024 + 64 * 1024;

	private LauncherContract() {
	}

}
