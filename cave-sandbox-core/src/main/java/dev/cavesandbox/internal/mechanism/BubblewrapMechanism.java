package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * Builds the command line of bubblewrap ({@code bwrap(1)}, Debian package
 * {@code bubblewrap}, not setuid): new user, network, PID, IPC and mount namespaces, set
 * up by bwrap itself before the command starts, then the {@link Launcher}'s {@code init}
 * as PID 1 in front of the command. The whole command line runs behind
 * {@link Launcher#outer(Path, boolean, List)}, which opens the working directory and the
 * listed paths without following symbolic links; bwrap binds them through those
 * descriptors, never by path. A pure function of its inputs; nothing here touches the
 * host. Each step of {@link #commandLine} says what its options do and why.
 *
 * @param bwrap the {@code bwrap} binary
 * @param launcher the native launcher
 * @param filesystem what the command sees of the host's filesystem
 */
public record BubblewrapMechanism(Path bwrap, Launcher launcher,
		FilesystemView filesystem) implements SandboxMechanism {

	/** The name of this mechanism. */
	public static final String NAME = "bwrap";

	private static final List<String> COMMAND_USER_CAPABILITIES = List.of("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP",
			"CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL");

	public BubblewrapMechanism {
		Objects.requireNonNull(bwrap, "bwrap must not be null");
		Objects.requireNonNull(launcher, "launcher must not be null");
		Objects.requireNonNull(filesystem, "filesystem must not be null");
	}

	@Override
	public String name() {
		return NAME;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * bwrap brings {@code lo} up in every sandbox; {@code loopback} decides whether the
	 * launcher's filter lets the command create {@code AF_INET} and {@code AF_INET6}
	 * sockets to use it.
	 */
	@Override
	public List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback, boolean check,
			ResourceLimits limits) {
		List<FilesystemView.Listed> listedPaths = this.filesystem.listedPaths();
		List<String> command = new ArrayList<>(this.launcher.outer(workingDirectory, true,
				listedPaths.stream().map(FilesystemView.Listed::path).toList()));
		command.addAll(List.of(this.bwrap.toString(), "--die-with-parent"));
		command.addAll(newNamespaces());
		command.addAll(capabilities());
		command.addAll(root());
		command.addAll(devAndProc());
		command.addAll(hiddenDirectories(limits));
		command.addAll(listedPaths(listedPaths));
		// bwrap's /dev is a tmpfs of its own without a size: read-only, so that it holds
		// no file of the command's (the device nodes stay usable; /dev/shm, /dev/pts and
		// any hidden directory below it are mounts of their own).
		command.addAll(List.of("--remount-ro", "/dev"));
		// The working directory, writable, through the descriptor outer opened
		// (--bind-fd mounts are always nosuid and nodev), never by its path on the host.
		command
			.addAll(List.of("--bind-fd", String.valueOf(LauncherContract.DIRECTORY_FD), workingDirectory.toString()));
		command.addAll(masks());
		if (this.filesystem.isSystem()) {
			// Last, once every mount point exists. --remount-ro is not recursive:
			// the working directory, the hidden directories and the writable paths
			// stay writable.
			command.addAll(List.of("--remount-ro", "/"));
		}
		command.addAll(List.of("--chdir", workingDirectory.toString(), "--"));
		command.addAll(this.launcher.inside(LauncherContract.INIT, loopback, check, false, limits, argv));
		return command;
	}

	/**
	 * The new namespaces. {@code --unshare-user}: the command keeps the caller's uid;
	 * with a {@linkplain Launcher#hasCommandUser() command user}, {@code outer} has
	 * joined a user namespace of its own instead. {@code --unshare-net}: the only
	 * interface is {@code lo}, which bwrap always brings up: a private loopback that
	 * cannot reach the host's (network_namespaces(7)); the host's abstract unix sockets
	 * are unreachable too (unix(7)). {@code --unshare-pid --as-pid-1}: the launcher is
	 * PID 1 in place of bwrap's own init (which the command, with the same uid and no
	 * capability less, could ptrace or write through {@code /proc/1/mem}); the launcher
	 * is not dumpable and under its own seccomp filter, forks the command and exits with
	 * its status; then, or when bwrap dies, every process left in the namespace is killed
	 * (pid_namespaces(7)). {@code --unshare-ipc}: the host's System V IPC and POSIX
	 * message queues are out of reach. No {@code --new-session}: PID 1 stays in bwrap's
	 * process group, which {@code outer} passes the executor's SIGTERM to; the launcher
	 * runs the command in a session of its own (no TIOCSTI into the JVM's terminal).
	 * {@code --die-with-parent}, before these, kills the sandbox when the JVM thread that
	 * spawned bwrap ends (prctl(2) PR_SET_PDEATHSIG; bubblewrap issue 692).
	 */
	private List<String> newNamespaces() {
		List<String> options = new ArrayList<>();
		if (!this.launcher.hasCommandUser()) {
			options.add("--unshare-user");
		}
		options.addAll(List.of("--unshare-net", "--unshare-pid", "--as-pid-1", "--unshare-ipc"));
		return options;
	}

	/**
	 * {@code --cap-drop ALL}: the command holds no capability, even when the JVM runs as
	 * root, so it can neither unmount the tmpfs that hides host sockets nor change the
	 * mounts. With a command user, what the launcher's init needs to switch to it, empty
	 * the bounding set and keep {@code CAP_DAC_OVERRIDE} and {@code CAP_FOWNER}; it drops
	 * the rest before the command, but {@code CAP_KILL}, which PID 1 keeps to pass
	 * SIGTERM on to the command's tree.
	 */
	private List<String> capabilities() {
		List<String> options = new ArrayList<>(List.of("--cap-drop", "ALL"));
		if (this.launcher.hasCommandUser()) {
			for (String capability : COMMAND_USER_CAPABILITIES) {
				options.addAll(List.of("--cap-add", capability));
			}
		}
		return options;
	}

	/**
	 * The root: the host's ({@code --ro-bind / /}, or {@code --bind} when the root is
	 * writable) or, for a {@linkplain FilesystemView#isSystem() system view}, an empty
	 * tmpfs of bwrap's own ({@code --tmpfs /}, read-only at the end) with each system
	 * directory {@code --ro-bind} (recursive: every mount below is read-only too) and
	 * each system link {@code --symlink}: nothing else of the host exists inside.
	 */
	private List<String> root() {
		FilesystemView view = this.filesystem;
		if (!view.isSystem()) {
			return List.of(view.readOnlyRoot() ? "--ro-bind" : "--bind", "/", "/");
		}
		List<String> options = new ArrayList<>(List.of("--tmpfs", "/"));
		for (Path system : view.systemDirectories()) {
			options.addAll(List.of("--ro-bind", system.toString(), system.toString()));
		}
		new TreeMap<>(view.systemLinks())
			.forEach((link, target) -> options.addAll(List.of("--symlink", target.toString(), link.toString())));
		return options;
	}

	/**
	 * A minimal new {@code /dev} ({@code null}, {@code zero}, {@code full},
	 * {@code random}, {@code urandom}, {@code tty}, a private {@code pts}: no disks, so a
	 * command running as root cannot write the host's block devices) and a new
	 * {@code /proc} with {@code /proc/sys} and {@code /proc/sysrq-trigger} read-only. The
	 * kernel's key lists are not namespaced: {@code /proc/keys} would show the JVM's keys
	 * (ids and descriptions) to the command, so they are masked as container runtimes do.
	 */
	private static List<String> devAndProc() {
		List<String> options = new ArrayList<>(List.of("--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys",
				"/proc/sys", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"));
		for (String keys : Launcher.KEY_LISTS) {
			options.addAll(List.of("--dev-bind-try", "/dev/null", keys));
		}
		return options;
	}

	/**
	 * An empty tmpfs over each hidden directory (where host unix sockets live:
	 * {@code /run/docker.sock}, {@code /tmp/.X11-unix}, ...), of the limits' tmpfs size.
	 */
	private List<String> hiddenDirectories(ResourceLimits limits) {
		List<String> options = new ArrayList<>();
		for (Path hidden : this.filesystem.hiddenDirectories()) {
			if (limits.tmpfsSize() != null) {
				options.addAll(List.of("--size", limits.tmpfsSize().toString()));
			}
			options.addAll(List.of("--perms", "1777", "--tmpfs", hidden.toString()));
		}
		return options;
	}

	/**
	 * The listed paths, after the hidden directories (so that one inside them is
	 * visible), parents first ({@link FilesystemView#listedPaths()}): readable ones
	 * {@code --ro-bind-fd}, writable ones {@code --bind-fd}, each through the descriptor
	 * that {@code outer} opened without following symbolic links. bwrap mounts the
	 * descriptor's file and compares the mount's device and inode with the descriptor's,
	 * so a path swapped after {@code outer} opened it binds nothing else; it creates each
	 * mount point by the descriptor's file type.
	 */
	private static List<String> listedPaths(List<FilesystemView.Listed> listedPaths) {
		List<String> options = new ArrayList<>();
		for (int i = 0; i < listedPaths.size(); i++) {
			FilesystemView.Listed listed = listedPaths.get(i);
			options.addAll(List.of(listed.writable() ? "--bind-fd" : "--ro-bind-fd",
					String.valueOf(Launcher.listedDescriptor(i)), listed.path().toString()));
		}
		return options;
	}

	/**
	 * The masks, after every bind so that no listed path (such as {@code /etc}) covers
	 * them: a masked file is the host's {@code /dev/null} bound with its device access
	 * ({@code --dev-bind}: a plain {@code --ro-bind} is {@code nodev}, and opening the
	 * file would fail with {@code EACCES}), so it reads as empty; a masked directory is
	 * an empty read-only tmpfs.
	 */
	private List<String> masks() {
		List<String> options = new ArrayList<>();
		for (Path file : this.filesystem.maskedFiles()) {
			options.addAll(List.of("--dev-bind", "/dev/null", file.toString()));
		}
		for (Path masked : this.filesystem.maskedDirectories()) {
			options.addAll(List.of("--tmpfs", masked.toString(), "--remount-ro", masked.toString()));
		}
		return options;
	}

	@Override
	public Set<LinuxNamespace> namespaces() {
		return EnumSet.allOf(LinuxNamespace.class);
	}

	@Override
	public List<Path> binaries() {
		return List.of(this.launcher.path(), this.bwrap);
	}

	@Override
	public boolean hides(Path path) {
		return this.filesystem.hides(path);
	}

	@Override
	public boolean supportsPrivateLoopback() {
		return true;
	}

	@Override
	public SandboxMechanism withEgress(Launcher.Egress egress) {
		return new BubblewrapMechanism(this.bwrap, this.launcher.withEgress(egress), this.filesystem);
	}

	@Override
	public SandboxMechanism withPaths(List<Path> readable, List<Path> writable) {
		return (readable.isEmpty() && writable.isEmpty()) ? this
				: new BubblewrapMechanism(this.bwrap, this.launcher, this.filesystem.withPaths(readable, writable));
	}

}
