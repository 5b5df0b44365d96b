package dev.cavesandbox.internal.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.jspecify.annotations.Nullable;

/**
 * The command line of the native launcher ({@code cave-sandbox-launcher}, built from
 * {@code src/main/c} of this module, whose {@code launcher.h} describes its protocol in
 * full): the argv prefix that runs the wrapper through {@code outer} in the host
 * ({@link #outer(Path, boolean, List)}), and the argv that runs the command inside
 * through {@value LauncherContract#INIT} (bubblewrap's PID 1),
 * {@value LauncherContract#EXEC} (unshare, the namespaces mechanism) or
 * {@value LauncherContract#CONTAIN} (the seccomp mechanism's subreaper, no namespace at
 * all) ({@link #inside}). Without a mount namespace the launcher builds the
 * {@linkplain FilesystemView filesystem view} with Landlock
 * ({@link LandlockView#options(FilesystemView)}). The descriptors, modes, exit code and
 * names it shares with the C sources are {@link LauncherContract}'s; what its seccomp
 * filter refuses is {@link #refusals(boolean, boolean, boolean)}.
 * <p>
 * A root JVM's command runs as a command user ({@code --command-user UID}, since the
 * kernel exempts root from {@code RLIMIT_NPROC}): in a user namespace that {@code outer}
 * prepares (the wrapper then creates none), or, with {@value LauncherContract#CONTAIN},
 * as a uid of the host whose gid may differ ({@code --command-group GID},
 * {@link #withCommandUser(long)}).
 *
 * @param path the launcher binary on the host, verified against the SHA-256 recorded at
 * build time
 * @param userNamespaces whether the command may create user namespaces of its own
 * @param commandUser the uid a root JVM's command runs as, or {@value #CALLER} for the
 * caller's
 * @param egress the egress bridge of one execution, or {@code null}
 * @param commandGroup the gid a root JVM's command runs as: the command user's own uid
 * except on the seccomp mechanism, where each execution runs as a uid of its own with
 * this one gid; {@value #CALLER} exactly where {@code commandUser} is
 */
public record Launcher(Path path, boolean userNamespaces, long commandUser, @Nullable Egress egress,
		long commandGroup) {

	/** No command user: the command keeps the caller's uid. */
	public static final long CALLER = -1;

	/**
	 * The kernel's lists of keys and key users, which are not namespaced: each mechanism
	 * masks them with {@code /dev/null}.
	 */
	public static final List<String> KEY_LISTS = List.of("/proc/keys", "/proc/key-users");

	/**
	 * The argv of {@link #inside} that hands the command over after the set-up
	 * ({@code --handover}, no command after {@code --}): the launcher writes
	 * {@value LauncherContract#HANDOVER_READY} on stdout and reads the command's argv and
	 * environment from a {@link HandoverFrame} on stdin. The same empty list given to a
	 * mechanism's command line.
	 */
	public static final List<String> HANDOVER = List.of();

	private static final String HANDOVER_OPTION = "--handover";

	private static final String COMMAND_USER = "--command-user";

	private static final String COMMAND_GROUP = "--command-group";

	public Launcher {
		Objects.requireNonNull(path, "path must not be null");
		if (commandUser != CALLER && (commandUser <= 0 || commandUser > Integer.MAX_VALUE)) {
			throw new IllegalArgumentException("commandUser must be a uid from 1 to " + Integer.MAX_VALUE + " or "
					+ CALLER + ", not " + commandUser);
		}
		if ((commandUser == CALLER) != (commandGroup == CALLER)
				|| (commandGroup != CALLER && (commandGroup <= 0 || commandGroup > Integer.MAX_VALUE))) {
			throw new IllegalArgumentException(
					"commandGroup must be a gid from 1 to " + Integer.MAX_VALUE + " with a command user and " + CALLER
							+ " without one, not " + commandGroup + " for the user " + commandUser);
		}
	}

	/**
	 * Create a launcher whose command user, if any, is also its group.
	 * @param path the launcher binary
	 * @param userNamespaces whether the command may create user namespaces of its own
	 * @param commandUser the command user's uid (and gid), or {@link #CALLER}
	 * @param egress the egress bridge of one execution, or {@code null}
	 */
	public Launcher(Path path, boolean userNamespaces, long commandUser, @Nullable Egress egress) {
		this(path, userNamespaces, commandUser, egress, commandUser);
	}

	/**
	 * Create a launcher whose command keeps the caller's uid.
	 * @param path the launcher binary
	 * @param userNamespaces whether the command may create user namespaces of its own
	 */
	public Launcher(Path path, boolean userNamespaces) {
		this(path, userNamespaces, CALLER);
	}

	/**
	 * Create a launcher without an egress bridge.
	 * @param path the launcher binary
	 * @param userNamespaces whether the command may create user namespaces of its own
	 * @param commandUser the command user's uid, or {@link #CALLER}
	 */
	public Launcher(Path path, boolean userNamespaces, long commandUser) {
		this(path, userNamespaces, commandUser, null);
	}

	/**
	 * The egress bridge of one execution with an allow-list: {@code outer --egress DIR}
	 * opens the directory that holds the JVM's egress proxy socket
	 * ({@value LauncherContract#EGRESS_SOCKET}) without following links, at descriptor
	 * {@value LauncherContract#EGRESS_FD}, and the launcher inside
	 * ({@code --egress-port PORT}) listens on {@code 127.0.0.1:PORT} of the sandbox's own
	 * network namespace and relays each connection to that socket.
	 *
	 * @param directory the egress directory, absolute and normalized
	 * @param port the bridge's port on the command's loopback, 1 to 65535
	 */
	public record Egress(Path directory, int port) {

		public Egress {
			Objects.requireNonNull(directory, "directory must not be null");
			if (!directory.isAbsolute() || !directory.normalize().equals(directory)) {
				throw new IllegalArgumentException(
						"the egress directory must be absolute and normalized: " + directory);
			}
			if (port < 1 || port > 65535) {
				throw new IllegalArgumentException("the egress port must be from 1 to 65535, not " + port);
			}
		}

	}

	/**
	 * Return this launcher with the egress bridge of one execution.
	 * @param egress the bridge
	 * @return a launcher whose {@code outer} opens the egress directory and whose
	 * {@value LauncherContract#INIT} and {@value LauncherContract#EXEC} start the bridge
	 */
	public Launcher withEgress(Egress egress) {
		return new Launcher(this.path, this.userNamespaces, this.commandUser,
				Objects.requireNonNull(egress, "egress must not be null"), this.commandGroup);
	}

	/**
	 * Return this launcher with another command user and the same group: on the seccomp
	 * mechanism a root JVM's executions each run as a uid of their own, all with the
	 * command user's gid ({@value LauncherContract#CONTAIN} alone takes
	 * {@code --command-group}).
	 * @param commandUser the uid, from 1 to {@value Integer#MAX_VALUE}
	 * @return a launcher whose command runs as that uid and as {@link #commandGroup()}
	 * @throws IllegalArgumentException if this launcher has no command user (the command
	 * keeps the caller's uid, which no execution may change) or the uid is out of range
	 */
	public Launcher withCommandUser(long commandUser) {
		if (!hasCommandUser() || commandUser == CALLER) {
			throw new IllegalArgumentException("only a launcher with a command user (a root JVM's) runs its "
					+ "command as another one, and only as a uid of 1 or more");
		}
		return new Launcher(this.path, this.userNamespaces, commandUser, this.egress, this.commandGroup);
	}

	/**
	 * Whether the command runs as a command user in a user namespace that {@code outer}
	 * prepared (then the wrapper must not create one).
	 * @return whether {@link #commandUser()} is set
	 */
	public boolean hasCommandUser() {
		return this.commandUser != CALLER;
	}

	/**
	 * Return {@link #outer(Path, boolean) outer(workingDirectory, true)}.
	 * @param workingDirectory the working directory, absolute
	 * @return the argv prefix; the wrapper's argv follows
	 */
	public List<String> outer(Path workingDirectory) {
		return outer(workingDirectory, true);
	}

	/**
	 * Return the argv prefix that runs the wrapper through {@code outer}.
	 * @param workingDirectory the working directory, absolute
	 * @param commandUserNamespace whether {@code outer} prepares the command user's user
	 * namespace (where there is a command user); not for
	 * {@value LauncherContract#CONTAIN}, whose command switches to the command user on
	 * the host
	 * @return {@code [path, outer, --workdir, DIR, [--egress, DIR,] [--command-user,
	 * UID,] --]}; the wrapper's argv follows
	 */
	public List<String> outer(Path workingDirectory, boolean commandUserNamespace) {
		return outer(workingDirectory, commandUserNamespace, List.of());
	}

	/**
	 * Return the argv prefix that runs the wrapper through {@code outer}, which also
	 * opens each listed path without following symbolic links, as descriptor
	 * {@link #listedDescriptor(int) listedDescriptor(i)} for the i-th, and refuses one
	 * that goes through a symbolic link or is neither a directory nor a regular file.
	 * @param workingDirectory the working directory, absolute
	 * @param commandUserNamespace whether {@code outer} prepares the command user's user
	 * namespace (where there is a command user)
	 * @param listed the paths the wrapper binds, in the order it binds them
	 * @return {@code [path, outer, --workdir, DIR, [--listed, PATH]..., [--command-user,
	 * UID,] --]}; the wrapper's argv follows
	 */
	public List<String> outer(Path workingDirectory, boolean commandUserNamespace, List<Path> listed) {
		List<String> command = new ArrayList<>(
				List.of(this.path.toString(), "outer", "--workdir", workingDirectory.toString()));
		for (Path path : listed) {
			command.addAll(List.of("--listed", path.toString()));
		}
		if (this.egress != null) {
			command.addAll(List.of("--egress", this.egress.directory().toString()));
		}
		if (hasCommandUser() && commandUserNamespace) {
			command.addAll(List.of(COMMAND_USER, String.valueOf(this.commandUser)));
		}
		command.add("--");
		return List.copyOf(command);
	}

	/**
	 * Return the descriptor at which {@code outer} places a listed path.
	 * @param index the path's index in the {@code listed} of
	 * {@link #outer(Path, boolean, List)}, from 0
	 * @return {@value LauncherContract#LISTED_FD} + index
	 */
	public static int listedDescriptor(int index) {
		return LauncherContract.LISTED_FD + index;
	}

	/**
	 * Return the argv that runs the command inside the sandbox through the launcher, in a
	 * mount namespace of its own: {@link #inside(String, boolean, boolean, boolean, List)
	 * inside(mode, loopback, check, false, argv)}.
	 * @param mode {@value LauncherContract#INIT} (PID 1) or
	 * {@value LauncherContract#EXEC}
	 * @param loopback whether the command has a private loopback
	 * @param check whether the launcher reports each refusal (the probe)
	 * @param argv the command
	 * @return the argv, starting with {@value LauncherContract#INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, List<String> argv) {
		return inside(mode, loopback, check, false, argv);
	}

	/**
	 * Return the argv that runs the command inside the sandbox through the launcher:
	 * {@code [/proc/self/fd/4, MODE, [--allow-inet], [--allow-userns], [--check],
	 * [--no-mount-namespace], --, CMD...]}.
	 * @param mode {@value LauncherContract#INIT} (PID 1), {@value LauncherContract#EXEC}
	 * or {@value LauncherContract#CONTAIN} (the wrapper that {@code outer} runs, without
	 * any namespace)
	 * @param loopback whether the command has a private loopback (then it may create
	 * {@code AF_INET} and {@code AF_INET6} sockets, and Landlock leaves TCP alone)
	 * @param check whether the launcher reports each refusal, and with
	 * {@code noMountNamespace} its Landlock line, on stdout before the command runs (the
	 * probe)
	 * @param noMountNamespace whether the command has no mount namespace that hides the
	 * host's sockets and files (then unix datagram sockets are refused too, the launcher
	 * supervises {@code connect(2)} and {@code bind(2)}, and Landlock confines writes);
	 * not for {@value LauncherContract#INIT}
	 * @param argv the command
	 * @return the argv, starting with {@value LauncherContract#INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, boolean noMountNamespace,
			List<String> argv) {
		return inside(mode, loopback, check, noMountNamespace, ResourceLimits.NONE, argv);
	}

	/**
	 * Return the argv of {@link #inside(String, boolean, boolean, boolean, List)} with
	 * the command's resource limits, which the launcher sets in the process that becomes
	 * the command (never in {@value LauncherContract#INIT}'s PID 1 or
	 * {@value LauncherContract#CONTAIN}'s subreaper): {@code --limit-memory BYTES}
	 * ({@code RLIMIT_DATA}), {@code --limit-processes N} ({@code RLIMIT_NPROC}; with
	 * {@value LauncherContract#CONTAIN}, which has no user namespace, plus the tasks of
	 * the command's uid that the launcher sees at start, which {@code --check} reports as
	 * {@code nproc_others=N}), {@code --limit-cpu SECONDS} ({@code RLIMIT_CPU}, the hard
	 * limit one second higher), {@code --limit-file-size BYTES} ({@code RLIMIT_FSIZE})
	 * and {@code --limit-open-files N} ({@code RLIMIT_NOFILE}), each only when set,
	 * before {@code --}. {@code RLIMIT_CORE} is always 0. The tmpfs size is the
	 * wrapper's.
	 * @param mode {@value LauncherContract#INIT}, {@value LauncherContract#EXEC} or
	 * {@value LauncherContract#CONTAIN}
	 * @param loopback whether the command has a private loopback
	 * @param check whether the launcher reports its refusals (the probe)
	 * @param noMountNamespace whether the command has no mount namespace of its own
	 * @param limits the limits; {@link ResourceLimits#NONE} for none
	 * @param argv the command
	 * @return the argv, starting with {@value LauncherContract#INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, boolean noMountNamespace,
			ResourceLimits limits, List<String> argv) {
		return inside(mode, loopback, check, noMountNamespace, null, limits, argv);
	}

	/**
	 * Return the argv of
	 * {@link #inside(String, boolean, boolean, boolean, ResourceLimits, List)} with the
	 * filesystem view of a mechanism without a mount namespace: its
	 * {@linkplain LandlockView#options(FilesystemView) options} after the command user's.
	 * @param mode {@value LauncherContract#EXEC} or {@value LauncherContract#CONTAIN}
	 * @param loopback whether the command has a private loopback
	 * @param check whether the launcher reports its refusals (the probe)
	 * @param noMountNamespace whether the command has no mount namespace of its own; must
	 * be {@code true} with a view
	 * @param view the filesystem view that Landlock builds, or {@code null} for the
	 * host's
	 * @param limits the limits; {@link ResourceLimits#NONE} for none
	 * @param argv the command, or {@link #HANDOVER} (empty) for {@code --handover} in its
	 * place
	 * @return the argv, starting with {@value LauncherContract#INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, boolean noMountNamespace,
			@Nullable FilesystemView view, ResourceLimits limits, List<String> argv) {
		Objects.requireNonNull(limits, "limits must not be null");
		if (view != null && !noMountNamespace) {
			throw new IllegalArgumentException(
					"the launcher builds a filesystem view only without a mount namespace: the mounts build it otherwise");
		}
		List<String> command = new ArrayList<>(List.of(LauncherContract.INSIDE, mode));
		if (loopback) {
			command.add("--allow-inet");
		}
		addEgressPort(command, mode, loopback);
		if (this.userNamespaces) {
			command.add("--allow-userns");
		}
		if (check) {
			command.add("--check");
		}
		if (noMountNamespace) {
			command.add("--no-mount-namespace");
		}
		addCommandUser(command, mode);
		if (view != null) {
			command.addAll(LandlockView.options(view));
		}
		addLimit(command, "--limit-memory", limits.memory());
		addLimit(command, "--limit-processes", limits.processes());
		addLimit(command, "--limit-cpu", limits.cpuSeconds());
		addLimit(command, "--limit-file-size", limits.fileSize());
		addLimit(command, "--limit-open-files", limits.openFiles());
		if (argv.isEmpty()) {
			command.add(HANDOVER_OPTION);
			return command;
		}
		command.add("--");
		command.addAll(argv);
		return command;
	}

	private void addEgressPort(List<String> command, String mode, boolean loopback) {
		if (this.egress != null) {
			if (!loopback || LauncherContract.CONTAIN.equals(mode)) {
				throw new IllegalArgumentException("the egress bridge needs the command's private loopback in a "
						+ "network namespace of its own (init or exec with loopback)");
			}
			command.addAll(List.of("--egress-port", String.valueOf(this.egress.port())));
		}
	}

	private void addCommandUser(List<String> command, String mode) {
		if (hasCommandUser()) {
			command.addAll(List.of(COMMAND_USER, String.valueOf(this.commandUser)));
		}
		if (this.commandGroup != this.commandUser) {
			if (!LauncherContract.CONTAIN.equals(mode)) {
				throw new IllegalArgumentException(
						"only " + LauncherContract.CONTAIN + " runs its command with a gid other than its uid "
								+ "(the user namespace of the other modes maps the command user's own uid and gid)");
			}
			command.addAll(List.of(COMMAND_GROUP, String.valueOf(this.commandGroup)));
		}
	}

	private static void addLimit(List<String> command, String option, @Nullable Number value) {
		if (value != null) {
			command.addAll(List.of(option, value.toString()));
		}
	}

	/**
	 * Return what the launcher's seccomp filter refuses in a mount namespace of the
	 * command's own, by the names its check reports.
	 * @param loopback whether the command has a private loopback
	 * @return the names, in the launcher's order
	 */
	public List<String> refusals(boolean loopback) {
		return refusals(loopback, false);
	}

	/**
	 * Return what the launcher's seccomp filter refuses, by the names its check reports.
	 * @param loopback whether the command has a private loopback
	 * @param noMountNamespace whether the launcher runs with {@code --no-mount-namespace}
	 * (then the unix datagram sockets come first)
	 * @return the names, in the launcher's order
	 */
	public List<String> refusals(boolean loopback, boolean noMountNamespace) {
		return refusals(loopback, noMountNamespace, false);
	}

	/**
	 * Return what the launcher's seccomp filter refuses, by the names its check reports
	 * ({@link Refusals#names}).
	 * @param loopback whether the command has a private loopback
	 * @param noMountNamespace whether the launcher runs with {@code --no-mount-namespace}
	 * @param noPidNamespace whether the command has no PID namespace
	 * ({@value LauncherContract#CONTAIN})
	 * @return the names, in the launcher's order
	 */
	public List<String> refusals(boolean loopback, boolean noMountNamespace, boolean noPidNamespace) {
		return Refusals.names(loopback, noMountNamespace, noPidNamespace, this.userNamespaces);
	}

}
