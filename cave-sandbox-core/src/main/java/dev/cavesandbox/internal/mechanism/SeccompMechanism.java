package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.LandlockView;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * Builds the command line of the last mechanism, for hosts that allow no namespace at
 * all: Docker's default seccomp profile and capability set, containerd's
 * {@code RuntimeDefault}, and the Kubernetes "restricted" Pod Security Standard refuse
 * {@code unshare(2)}, {@code clone(2)} with namespace flags and {@code mount(2)}, but
 * still let a process load a seccomp filter of its own and, on current kernels, a
 * Landlock ruleset. A pure function of its inputs; nothing here touches the host.
 * <ul>
 * <li>{@code outer} runs the launcher itself ({@value LauncherContract#INSIDE}) as its
 * wrapper in {@code contain} mode: a child subreaper (prctl(2)
 * {@code PR_SET_CHILD_SUBREAPER}) that forks the command in a session and process group
 * of its own ({@code setsid(2)}, so that it cannot push input into the JVM's terminal,
 * {@code TIOCSTI}), which the filter keeps every process of the tree in ({@code setsid}
 * and {@code setpgid} refused); it passes a SIGTERM on to that group and, when the
 * command exits, when its parent dies (with the JVM) or when it is told to stop, kills
 * the group with one SIGKILL, which no fork can outrun, and reaps the orphans that come
 * to it.</li>
 * <li>The command runs with {@code --no-mount-namespace}: the seccomp filter refuses
 * every address family but unix stream and seqpacket sockets, whose {@code connect(2)}
 * and {@code bind(2)} the launcher's supervisor ({@code contain}) performs itself, only
 * beneath the working directory and for no abstract name but an autobind, and the rest of
 * the launcher's list; a Landlock ruleset (landlock(7)) limits writes to the working
 * directory, refuses TCP bind and connect as a second layer, and keeps the command from
 * the memory, environment and signals of every process outside its domain, the JVM's
 * included.</li>
 * <li>With a {@linkplain Launcher#hasCommandUser() command user} (a JVM running as the
 * host's root, whose commands the kernel would exempt from {@code RLIMIT_NPROC}) the
 * command switches to a uid of the host, without any capability: each execution to a uid
 * of its own from the range of command users ({@link #withCommandUser(long)}; the probe
 * verifies the first), all of them with the command user's gid, to which the executor
 * gives the working directory's group for the execution ({@link #commandGroup()}).</li>
 * <li>What it does not give: a private loopback, hidden directories (in a host view the
 * host's files stay readable; a system view keeps all but its paths from being read), a
 * PID or IPC namespace. The probe lists them in its facts; a request for a private
 * loopback is refused.</li>
 * </ul>
 *
 * @param launcher the native launcher
 * @param filesystem what the command sees of the host's files, which the launcher builds
 * with Landlock ({@link LandlockView#options(FilesystemView)}); its hidden directories
 * stay as they are
 */
public record SeccompMechanism(Launcher launcher, FilesystemView filesystem) implements SandboxMechanism {

	/** The name of this mechanism. */
	public static final String NAME = "seccomp";

	public SeccompMechanism {
		Objects.requireNonNull(launcher, "launcher must not be null");
		Objects.requireNonNull(filesystem, "filesystem must not be null");
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback, boolean check,
			ResourceLimits limits) {
		if (loopback) {
			throw new IllegalArgumentException("the seccomp mechanism has no network namespace: no private loopback");
		}
		List<String> command = new ArrayList<>(this.launcher.outer(workingDirectory, false));
		command
			.addAll(this.launcher.inside(LauncherContract.CONTAIN, false, check, true, this.filesystem, limits, argv));
		return command;
	}

	@Override
	public List<Path> binaries() {
		return List.of(this.launcher.path());
	}

	/**
	 * The group that must be able to write the working directory: the command user's gid,
	 * which every execution's uid runs with and which has no capability on this
	 * mechanism, so it would not be able to write a root JVM's directory otherwise.
	 * @return the gid, or {@link Launcher#CALLER} without a command user
	 */
	public long commandGroup() {
		return this.launcher.commandGroup();
	}

	/**
	 * Return this mechanism with the command user of one execution; its gid stays
	 * {@link #commandGroup()}.
	 * @param uid the uid the command runs as, a uid of the host
	 * @return the mechanism
	 * @throws IllegalArgumentException if this mechanism has no command user (a JVM of
	 * another user, or a root JVM whose commands stay root)
	 */
	public SeccompMechanism withCommandUser(long uid) {
		return new SeccompMechanism(this.launcher.withCommandUser(uid), this.filesystem);
	}

	@Override
	public boolean supportsPrivateLoopback() {
		return false;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Without a mount namespace nothing is hidden by mounts: in a system view Landlock
	 * refuses reading what lies outside it; in a host view every file stays readable.
	 */
	@Override
	public boolean hides(Path path) {
		return this.filesystem.isSystem() && this.filesystem.hides(path);
	}

	@Override
	public SandboxMechanism withPaths(List<Path> readable, List<Path> writable) {
		return (readable.isEmpty() && writable.isEmpty()) ? this
				: new SeccompMechanism(this.launcher, this.filesystem.withPaths(readable, writable));
	}

}
