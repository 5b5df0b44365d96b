package dev.cavesandbox.internal.mechanism;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

import dev.cavesandbox.ResourceLimits;

/**
 * Builds the command line of bubblewrap ({@code bwrap(1)}, Debian package
 * {@code bubblewrap}, not setuid): new user, network, PID, IPC and mount namespaces, set
 * up by bwrap itself before the command starts. A pure function of its inputs; nothing
 * here touches the host.
 * <ul>
 * <li>{@code --unshare-user} (the command keeps the caller's uid; with a
 * {@linkplain Launcher#hasCommandUser() command user}, {@code outer} has joined a user
 * namespace of its own instead, and bwrap keeps the capabilities the launcher needs to
 * switch to it, see {@link Launcher}) {@code --unshare-net}: the only interface is
 * {@code lo}, which bwrap always brings up: a private loopback that cannot reach the
 * host's (network_namespaces(7)). The host's abstract unix sockets belong to the host's
 * network namespace and are unreachable too (unix(7)).</li>
 * <li>{@code --unshare-pid --as-pid-1}: the {@link Launcher} is PID 1 in place of bwrap's
 * own init (which the command, with the same uid and no capability less, could ptrace or
 * write through {@code /proc/1/mem}); the launcher is not dumpable and under its own
 * seccomp filter, forks the command and exits with its status; then, or when bwrap dies,
 * every process left in the namespace is killed (pid_namespaces(7)).</li>
 * <li>{@code --die-with-parent}: bwrap and the sandbox get SIGKILL when the JVM thread
 * that spawned bwrap ends (prctl(2) PR_SET_PDEATHSIG; see bubblewrap issue 692 about
 * threads). No {@code --new-session}: PID 1 stays in bwrap's process group, which the
 * launcher's {@code outer} gives the executor's SIGTERM to, and passes it on to its whole
 * namespace; it runs the command in a session of its own, so the command cannot push
 * input into the JVM's terminal (TIOCSTI).</li>
 * <li>{@code --unshare-ipc}: System V IPC and POSIX message queues of the host are out of
 * reach. {@code --cap-drop ALL}: the command holds no capability, even when the JVM runs
 * as root, so it can neither unmount the tmpfs that hides host sockets nor change the
 * mounts.</li>
 * <li>The filesystem: {@code --ro-bind / /} (or {@code --bind} when the root is
 * writable), a minimal new {@code /dev} ({@code null}, {@code zero}, {@code full},
 * {@code random}, {@code urandom}, {@code tty}, a private {@code pts}: no disks, so a
 * command running as root cannot write the host's block devices), a new {@code /proc}
 * with {@code /proc/sys} and {@code /proc/sysrq-trigger} read-only, an empty tmpfs over
 * each hidden directory (where host unix sockets live: {@code /run/docker.sock},
 * {@code /tmp/.X11-unix}, ...), of the limits' tmpfs size ({@code --size}), and the
 * working directory bound writable on top through the descriptor the launcher opened
 * ({@code --bind-fd}, always {@code nosuid} and {@code nodev}), never by its path on the
 * host.</li>
 * <li>A {@linkplain FilesystemView#isSystem() system view} starts from an empty root
 * ({@code --tmpfs /}) instead of the host's: each system directory {@code --ro-bind}
 * (recursive, every mount below read-only too), each system link {@code --symlink}, then
 * {@code /dev}, {@code /proc} and the hidden directories as above, and at the very end
 * {@code --remount-ro /} (which is not recursive: the working directory, the hidden
 * directories and the writable paths stay writable). Nothing else of the host exists
 * inside.</li>
 * <li>In either view, each masked file is the host's {@code /dev/null} bound over it with
 * {@code --dev-bind} (it reads as empty; a plain {@code --ro-bind} is {@code nodev}, and
 * opening the file would fail with {@code EACCES}), as container runtimes mask paths;
 * each masked directory an empty tmpfs made read-only. Then the listed paths, after the
 * hidden directories (so that one inside them is visible), parents first
 * ({@link FilesystemView#listedPaths()}): readable ones {@code --ro-bind-fd}, writable
 * ones {@code --bind-fd}, each through the descriptor that {@code outer} opened without
 * following symbolic links ({@link Launcher#outer(Path, boolean, List)}), never by the
 * path: a component swapped for a link after the JVM resolved the path makes
 * {@code outer} refuse; bwrap mounts the descriptor's file ({@code /proc/self/fd/N}
 * resolved, where that file lies now, not the listed path) and compares the mount's
 * device and inode with the descriptor's, so one swapped after {@code outer} opened it
 * binds nothing else. bwrap creates each mount point by the descriptor's file type.</li>
 * <li>The whole command line runs behind {@link Launcher#outer(Path, boolean, List)}, and
 * the command behind the launcher's {@code init}.</li>
 * </ul>
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
		String directory = workingDirectory.toString();
		FilesystemView view = this.filesystem;
		List<FilesystemView.Listed> listedPaths = view.listedPaths();
		List<String> command = new ArrayList<>(this.launcher.outer(workingDirectory, true,
				listedPaths.stream().map(FilesystemView.Listed::path).toList()));
		command.addAll(List.of(this.bwrap.toString(), "--die-with-parent"));
		if (!this.launcher.hasCommandUser()) {
			command.add("--unshare-user");
		}
		command.addAll(List.of("--unshare-net", "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--cap-drop", "ALL"));
		if (this.launcher.hasCommandUser()) {
			// What the launcher's init needs to switch to the command user, empty the
			// bounding set and keep CAP_DAC_OVERRIDE and CAP_FOWNER; it drops the rest
			// before the command, but CAP_KILL, which PID 1 keeps to pass SIGTERM on to
			// the command's tree.
			for (String capability : COMMAND_USER_CAPABILITIES) {
				command.addAll(List.of("--cap-add", capability));
			}
		}
		if (view.isSystem()) {
			// An empty root of bwrap's own, read-only at the end: only what is bound into
			// it
			// exists for the command.
			command.addAll(List.of("--tmpfs", "/"));
			for (Path system : view.systemDirectories()) {
				command.addAll(List.of("--ro-bind", system.toString(), system.toString()));
			}
			new TreeMap<>(view.systemLinks())
				.forEach((link, target) -> command.addAll(List.of("--symlink", target.toString(), link.toString())));
		}
		else {
			command.addAll(List.of(view.readOnlyRoot() ? "--ro-bind" : "--bind", "/", "/"));
		}
		command.addAll(List.of("--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
				"--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"));
		// The kernel's key lists are not namespaced: /proc/keys would show the JVM's keys
		// (ids and descriptions) to the command. Masked as container runtimes do.
		for (String keys : Launcher.KEY_LISTS) {
			command.addAll(List.of("--dev-bind-try", "/dev/null", keys));
		}
		for (Path hidden : view.hiddenDirectories()) {
			if (limits.tmpfsSize() != null) {
				command.addAll(List.of("--size", limits.tmpfsSize().toString()));
			}
			command.addAll(List.of("--perms", "1777", "--tmpfs", hidden.toString()));
		}
		for (int i = 0; i < listedPaths.size(); i++) {
			FilesystemView.Listed listed = listedPaths.get(i);
			command.addAll(List.of(listed.writable() ? "--bind-fd" : "--ro-bind-fd",
					String.valueOf(Launcher.listedDescriptor(i)), listed.path().toString()));
		}
		// bwrap's /dev is a tmpfs of its own without a size: read-only, so that it holds
		// no file of the command's (the device nodes stay usable; /dev/shm, /dev/pts and
		// any hidden directory below it are mounts of their own).
		command.addAll(List.of("--remount-ro", "/dev"));
		command.addAll(List.of("--bind-fd", String.valueOf(LauncherContract.DIRECTORY_FD), directory));
		// After every bind, so that no listed path (such as /etc) covers them: a masked
		// file reads as empty, the host's /dev/null bound with its device access (a plain
		// --ro-bind is nodev, and opening it would fail with EACCES); a masked directory
		// is an empty read-only tmpfs.
		for (Path file : view.maskedFiles()) {
			command.addAll(List.of("--dev-bind", "/dev/null", file.toString()));
		}
		for (Path masked : view.maskedDirectories()) {
			command.addAll(List.of("--tmpfs", masked.toString(), "--remount-ro", masked.toString()));
		}
		if (view.isSystem()) {
			// Last, once every mount point exists: --remount-ro is not recursive.
			command.addAll(List.of("--remount-ro", "/"));
		}
		command.addAll(List.of("--chdir", directory, "--"));
		command.addAll(this.launcher.inside(LauncherContract.INIT, loopback, check, false, limits, argv));
		return command;
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
