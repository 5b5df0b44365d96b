package dev.cavesandbox.internal.launcher;

import dev.cavesandbox.internal.mechanism.FilesystemView;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.cavesandbox.ResourceLimits;

/**
 * The native launcher of the Linux mechanisms ({@code cave-sandbox-launcher}, built from
 * {@code src/main/c} of this module, whose {@code launcher.h} describes its protocol in
 * full) and the arguments that steer it. It runs twice per execution, as one binary:
 * <ul>
 * <li>{@code outer}, before the wrapper, in the host: it opens the working directory
 * without following any symbolic link (openat2(2) {@code RESOLVE_NO_SYMLINKS}) as
 * descriptor {@value #DIRECTORY_FD}, enters it, opens itself as descriptor
 * {@value #SELF_FD} and executes the wrapper, which binds the directory through that
 * descriptor and never resolves its path on the host again; the same for each listed path
 * of a filesystem view ({@code --listed PATH}, a directory or a regular file), the i-th
 * (from 0) as descriptor {@value #LISTED_FD} + i ({@link #listedDescriptor(int)}), which
 * the wrapper binds or checks its bind against;</li>
 * <li>{@code init} (PID 1 of bubblewrap's PID namespace) or {@code exec} (the last step
 * under unshare and the namespaces rung), inside, run as {@code /proc/self/fd/4}: it
 * closes every other descriptor, checks that the working directory is the one
 * {@code outer} opened, drops every capability, sets {@code no_new_privs}, joins a new
 * session keyring, loads its seccomp filter, resets signal dispositions and the signal
 * mask, and runs the command;</li>
 * <li>{@code contain} (the seccomp rung, no namespaces at all), run by {@code outer} as
 * its wrapper: it becomes a child subreaper (prctl(2) {@code PR_SET_CHILD_SUBREAPER}) and
 * non-dumpable, gets {@code SIGHUP} when {@code outer} dies, forks the command (which
 * does the set-up of {@code exec}) and, when the command exits or on {@code SIGHUP} or
 * {@code SIGINT}, kills the command's process group with one {@code SIGKILL} (no process
 * of the tree can leave it: {@code setsid} and {@code setpgid} are refused), reaps every
 * child until none is left (the orphans come to it), then exits with the command's
 * status.</li>
 * </ul>
 * Without a mount namespace ({@code --no-mount-namespace}) the filter also refuses
 * {@code socket(AF_UNIX)} ({@code socketpair(2)} stays allowed), and the command confines
 * itself with Landlock (landlock(7)) where the kernel has it: writes only beneath the
 * working directory and to {@code /dev/null}, {@code /dev/zero}, {@code /dev/full} and
 * {@code /dev/tty}; from ABI 4 and without a private loopback no TCP bind or connect;
 * from ABI 6 no signal and no abstract unix socket outside its own processes; and no
 * ptrace-mode access ({@code /proc/PID/mem}, {@code environ}) to processes outside them.
 * The same ruleset builds those rungs' {@linkplain FilesystemView filesystem view}
 * ({@link #viewOptions(FilesystemView)}): {@code --write PATH} is writable beneath, and
 * with any {@code --read PATH} (a system view) reading and executing are handled too, so
 * that the command reads only beneath its working directory, the read and write paths,
 * {@code /proc}, {@code /sys/fs/cgroup} and the device files above plus
 * {@code /dev/random} and {@code /dev/urandom}; a {@code --mask PATH} inside a read path
 * gets no rule. With {@code --check} the launcher then reports one more line:
 * {@code landlock=<ABI> writes=<workdir|workdir,listed> reads=<view|host> net=<refused|allowed|unhandled> scope=<signal,abstract-unix|none>}
 * or {@code landlock=unavailable <ERRNO>}.
 * <p>
 * The filter's list lives in the C sources ({@code REFUSALS},
 * {@code src/main/c/refusals.h}) and is mirrored by {@link #refusals(boolean, boolean)},
 * which the probe checks line by line.
 * <p>
 * A command user ({@code --command-user UID}, for a JVM running as the host's root, whose
 * commands the kernel would exempt from {@code RLIMIT_NPROC}): {@code outer}, still root
 * on the host, creates a user namespace that maps only uid and gid 0 and {@code UID} to
 * themselves, and joins it before it runs the wrapper, which creates no user namespace of
 * its own then; {@code init} and {@code exec} switch to {@code UID} and keep two
 * capabilities, {@code CAP_DAC_OVERRIDE} and {@code CAP_FOWNER} (ambient too), which in
 * that namespace apply only to files owned by root:root (the kernel's
 * capable_wrt_inode_uidgid): the command reads, writes and changes the mode of a root
 * JVM's working directory as its owner could, and its processes count against the process
 * limit as {@code UID}'s in a namespace of the execution's own. With {@code contain} (the
 * seccomp rung, no namespace at all) {@code outer} prepares nothing
 * ({@link #outer(Path, boolean)}); the command switches to {@code UID}, a uid of the
 * host, without any capability, and its working directory must be writable by its group
 * (the executor hands it over for the execution). There alone the command's gid may
 * differ from its uid ({@code --command-group GID}, {@link #withCommandUser(long)}): a
 * root JVM runs each execution as a uid of its own, all of them with the command user's
 * gid.
 *
 * @param path the launcher binary on the host, verified against the SHA-256 recorded at
 * build time
 * @param userNamespaces whether the command may create user namespaces of its own
 * @param commandUser the uid a root JVM's command runs as, or {@value #CALLER} for the
 * caller's
 * @param egress the egress bridge of one execution, or {@code null}
 * @param commandGroup the gid a root JVM's command runs as: the command user's own uid
 * except on the seccomp rung, where each execution runs as a uid of its own with this one
 * gid; {@value #CALLER} exactly where {@code commandUser} is
 */
public record Launcher(Path path, boolean userNamespaces, long commandUser, @Nullable Egress egress,
		long commandGroup) {

	/** No command user: the command keeps the caller's uid. */
	public static final long CALLER = -1;

	/** The descriptor of the working directory, for the wrapper. */
	public static final int DIRECTORY_FD = 3;

	/** The descriptor of the launcher itself, for the wrapper. */
	public static final int SELF_FD = 4;

	/**
	 * The descriptor of the first path that {@code outer} opens for {@code --listed}; the
	 * others follow it.
	 */
	public static final int LISTED_FD = 10;

	/** How the wrapper runs the launcher inside the sandbox. */
	public static final String INSIDE = "/proc/self/fd/" + SELF_FD;

	/**
	 * The mode of PID 1 of unshare's PID namespace, which its set-up script execs: forks
	 * the rest of its argv in a session of its own, keeps no descriptor above 2, reaps
	 * orphans, passes on the status.
	 */
	public static final String PID1 = "pid1";

	/** The mode of bubblewrap's PID 1: forks the command and reaps orphans. */
	public static final String INIT = "init";

	/** The mode that replaces itself with the command (unshare, namespaces rung). */
	public static final String EXEC = "exec";

	/**
	 * The mode of the seccomp rung: {@code outer}'s wrapper, a subreaper that kills what
	 * the command leaves behind.
	 */
	public static final String CONTAIN = "contain";

	/** The first line of {@code --check} about Landlock begins with this. */
	public static final String LANDLOCK_PREFIX = "landlock=";

	/** The first word of every line the launcher itself writes on stderr. */
	public static final String MESSAGE_PREFIX = "cave-sandbox-launcher:";

	/**
	 * The kernel's lists of keys and key users, which are not namespaced: each mechanism
	 * masks them with {@code /dev/null}.
	 */
	public static final List<String> KEY_LISTS = List.of("/proc/keys", "/proc/key-users");

	/**
	 * How the launcher's last line begins when the wrapper ended before the sandbox was
	 * set up; the wrapper's own message, if any, is on the lines before it.
	 */
	public static final String NOT_SET_UP = MESSAGE_PREFIX + " the sandbox could not be set up";

	/**
	 * The variable in which the executor gives {@code outer} a token of its own for one
	 * execution: {@code outer} takes it out of the wrapper's environment and ends each of
	 * its failure lines with {@code [launch TOKEN]}, which the command cannot know, so it
	 * cannot pass its own exit 125 off as a sandbox that was never set up.
	 */
	public static final String TOKEN_VARIABLE = "CAVE_SANDBOX_LAUNCH_TOKEN";

	private static final String COMMAND_USER = "--command-user";

	private static final String COMMAND_GROUP = "--command-group";

	/** The exit code of the launcher when it could not set the sandbox up. */
	public static final int SETUP_FAILED = 125;

	/**
	 * The descriptor of the egress directory ({@code outer --egress}), for the bridge.
	 */
	public static final int EGRESS_FD = 6;

	/** The name of the egress proxy's unix socket in the egress directory. */
	public static final String EGRESS_SOCKET = "egress.sock";

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
	 * ({@value #EGRESS_SOCKET}) without following links, at descriptor
	 * {@value #EGRESS_FD}, and the launcher inside ({@code --egress-port PORT}) listens
	 * on {@code 127.0.0.1:PORT} of the sandbox's own network namespace and relays each
	 * connection to that socket.
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
	 * {@value #INIT} and {@value #EXEC} start the bridge
	 */
	public Launcher withEgress(Egress egress) {
		return new Launcher(this.path, this.userNamespaces, this.commandUser,
				Objects.requireNonNull(egress, "egress must not be null"), this.commandGroup);
	}

	/**
	 * Return this launcher with another command user and the same group: on the seccomp
	 * rung a root JVM's executions each run as a uid of their own, all with the command
	 * user's gid ({@value #CONTAIN} alone takes {@code --command-group}).
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
	 * Return the argv prefix that runs the wrapper through {@code outer}.
	 * @param workingDirectory the working directory, absolute
	 * @return {@code [path, outer, --workdir, DIR, [--command-user, UID,] --]}; the
	 * wrapper's argv follows
	 */
	public List<String> outer(Path workingDirectory) {
		return outer(workingDirectory, true);
	}

	/**
	 * Return the argv prefix that runs the wrapper through {@code outer}.
	 * @param workingDirectory the working directory, absolute
	 * @param commandUserNamespace whether {@code outer} prepares the command user's user
	 * namespace (where there is a command user); not for {@value #CONTAIN}, whose command
	 * switches to the command user on the host
	 * @return {@code [path, outer, --workdir, DIR, [--command-user, UID,] --]}; the
	 * wrapper's argv follows
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
	 * @return {@value #LISTED_FD} + index
	 */
	public static int listedDescriptor(int index) {
		return LISTED_FD + index;
	}

	/**
	 * Return the argv that runs the command inside the sandbox through the launcher, in a
	 * mount namespace of its own.
	 * @param mode {@value #INIT} (PID 1) or {@value #EXEC}
	 * @param loopback whether the command has a private loopback (then it may create
	 * {@code AF_INET} and {@code AF_INET6} sockets)
	 * @param check whether the launcher reports each refusal on stdout before the command
	 * runs (the probe)
	 * @param argv the command
	 * @return the argv, starting with {@value #INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, List<String> argv) {
		return inside(mode, loopback, check, false, argv);
	}

	/**
	 * Return the argv that runs the command inside the sandbox through the launcher:
	 * {@code [/proc/self/fd/4, MODE, [--allow-inet], [--allow-userns], [--check],
	 * [--no-mount-namespace], --, CMD...]}.
	 * @param mode {@value #INIT} (PID 1), {@value #EXEC} or {@value #CONTAIN} (the
	 * wrapper that {@code outer} runs, without any namespace)
	 * @param loopback whether the command has a private loopback (then it may create
	 * {@code AF_INET} and {@code AF_INET6} sockets, and Landlock leaves TCP alone)
	 * @param check whether the launcher reports each refusal, and with
	 * {@code noMountNamespace} its Landlock line, on stdout before the command runs (the
	 * probe)
	 * @param noMountNamespace whether the command has no mount namespace that hides the
	 * host's sockets and files (then {@code socket(AF_UNIX)} is refused too and Landlock
	 * confines writes); not for {@value #INIT}
	 * @param argv the command
	 * @return the argv, starting with {@value #INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, boolean noMountNamespace,
			List<String> argv) {
		return inside(mode, loopback, check, noMountNamespace, ResourceLimits.NONE, argv);
	}

	/**
	 * Return the argv of {@link #inside(String, boolean, boolean, boolean, List)} with
	 * the command's resource limits, which the launcher sets in the process that becomes
	 * the command (never in {@value #INIT}'s PID 1 or {@value #CONTAIN}'s subreaper):
	 * {@code --limit-memory BYTES} ({@code RLIMIT_DATA}), {@code --limit-processes N}
	 * ({@code RLIMIT_NPROC}; with {@value #CONTAIN}, which has no user namespace, plus
	 * the tasks of the command's uid that the launcher sees at start, which
	 * {@code --check} reports as {@code nproc_others=N}), {@code --limit-cpu SECONDS}
	 * ({@code RLIMIT_CPU}, the hard limit one second higher),
	 * {@code --limit-file-size BYTES} ({@code RLIMIT_FSIZE}) and
	 * {@code --limit-open-files N} ({@code RLIMIT_NOFILE}), each only when set, before
	 * {@code --}. {@code RLIMIT_CORE} is always 0. The tmpfs size is the wrapper's.
	 * @param mode {@value #INIT}, {@value #EXEC} or {@value #CONTAIN}
	 * @param loopback whether the command has a private loopback
	 * @param check whether the launcher reports its refusals (the probe)
	 * @param noMountNamespace whether the command has no mount namespace of its own
	 * @param limits the limits; {@link ResourceLimits#NONE} for none
	 * @param argv the command
	 * @return the argv, starting with {@value #INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, boolean noMountNamespace,
			ResourceLimits limits, List<String> argv) {
		return inside(mode, loopback, check, noMountNamespace, null, limits, argv);
	}

	/**
	 * Return the argv of
	 * {@link #inside(String, boolean, boolean, boolean, ResourceLimits, List)} with the
	 * filesystem view of a rung without a mount namespace: its
	 * {@linkplain #viewOptions(FilesystemView) options} after the command user's.
	 * @param mode {@value #EXEC} or {@value #CONTAIN}
	 * @param loopback whether the command has a private loopback
	 * @param check whether the launcher reports its refusals (the probe)
	 * @param noMountNamespace whether the command has no mount namespace of its own; must
	 * be {@code true} with a view
	 * @param view the filesystem view that Landlock builds, or {@code null} for the
	 * host's
	 * @param limits the limits; {@link ResourceLimits#NONE} for none
	 * @param argv the command
	 * @return the argv, starting with {@value #INSIDE}
	 */
	public List<String> inside(String mode, boolean loopback, boolean check, boolean noMountNamespace,
			@Nullable FilesystemView view, ResourceLimits limits, List<String> argv) {
		Objects.requireNonNull(limits, "limits must not be null");
		if (view != null && !noMountNamespace) {
			throw new IllegalArgumentException(
					"the launcher builds a filesystem view only without a mount namespace: the mounts build it otherwise");
		}
		List<String> command = new ArrayList<>(List.of(INSIDE, mode));
		if (loopback) {
			command.add("--allow-inet");
		}
		if (this.egress != null) {
			if (!loopback || CONTAIN.equals(mode)) {
				throw new IllegalArgumentException("the egress bridge needs the command's private loopback in a "
						+ "network namespace of its own (init or exec with loopback)");
			}
			command.addAll(List.of("--egress-port", String.valueOf(this.egress.port())));
		}
		if (this.userNamespaces) {
			command.add("--allow-userns");
		}
		if (check) {
			command.add("--check");
		}
		if (noMountNamespace) {
			command.add("--no-mount-namespace");
		}
		if (hasCommandUser()) {
			command.addAll(List.of(COMMAND_USER, String.valueOf(this.commandUser)));
		}
		if (this.commandGroup != this.commandUser) {
			if (!CONTAIN.equals(mode)) {
				throw new IllegalArgumentException(
						"only " + CONTAIN + " runs its command with a gid other than its uid "
								+ "(the user namespace of the other modes maps the command user's own uid and gid)");
			}
			command.addAll(List.of(COMMAND_GROUP, String.valueOf(this.commandGroup)));
		}
		if (view != null) {
			command.addAll(viewOptions(view));
		}
		addLimit(command, "--limit-memory", limits.memory());
		addLimit(command, "--limit-processes", limits.processes());
		addLimit(command, "--limit-cpu", limits.cpuSeconds());
		addLimit(command, "--limit-file-size", limits.fileSize());
		addLimit(command, "--limit-open-files", limits.openFiles());
		command.add("--");
		command.addAll(argv);
		return command;
	}

	/**
	 * Return the options by which the launcher builds a filesystem view with Landlock:
	 * for a system view {@code --read PATH} for each system directory and readable path,
	 * {@code --mask PATH} for each masked file and directory, then {@code --write PATH}
	 * for each writable path; for a host view only the {@code --write} options (reads
	 * stay the host's). The system links need nothing: they resolve on the host, where
	 * Landlock judges their targets.
	 * @param view the view
	 * @return the options
	 * @throws IllegalArgumentException for a system view without any system directory or
	 * readable path, which the launcher could not tell from a host view
	 */
	public static List<String> viewOptions(FilesystemView view) {
		List<String> options = new ArrayList<>();
		if (view.isSystem()) {
			if (view.systemDirectories().isEmpty() && view.readablePaths().isEmpty()) {
				throw new IllegalArgumentException("a system view needs a system directory or a readable path: "
						+ "the launcher reads a view without any as the host's");
			}
			view.systemDirectories().forEach((path) -> options.addAll(List.of("--read", path.toString())));
			view.readablePaths().forEach((path) -> options.addAll(List.of("--read", path.toString())));
			view.maskedFiles().forEach((path) -> options.addAll(List.of("--mask", path.toString())));
			view.maskedDirectories().forEach((path) -> options.addAll(List.of("--mask", path.toString())));
		}
		view.writablePaths().forEach((path) -> options.addAll(List.of("--write", path.toString())));
		return options;
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
	 * (then {@code socket(AF_UNIX)} comes first)
	 * @return the names, in the launcher's order
	 */
	public List<String> refusals(boolean loopback, boolean noMountNamespace) {
		return refusals(loopback, noMountNamespace, false);
	}

	/**
	 * Return what the launcher's seccomp filter refuses, by the names its check reports.
	 * @param loopback whether the command has a private loopback
	 * @param noMountNamespace whether the launcher runs with {@code --no-mount-namespace}
	 * (then {@code socket(AF_UNIX)} comes first)
	 * @param noPidNamespace whether the command has no PID namespace ({@value #CONTAIN}):
	 * then {@code sched_setaffinity(pid)} is refused (the command would see the JVM) and
	 * {@code setpgid} too, so that the command's whole tree stays in its process group,
	 * which {@value #CONTAIN} kills at once ({@code setsid} is refused on every rung: the
	 * whole tree stays in one session, so in one scheduler autogroup)
	 * @return the names, in the launcher's order
	 */
	public List<String> refusals(boolean loopback, boolean noMountNamespace, boolean noPidNamespace) {
		List<String> names = new ArrayList<>();
		if (noMountNamespace) {
			names.add("socket(AF_UNIX)");
		}
		if (!loopback) {
			names.addAll(List.of("socket(AF_INET)", "socket(AF_INET6)"));
		}
		names.addAll(List.of("socket(AF_NETLINK)", "socket(AF_PACKET)", "socket(AF_VSOCK)", "socket(AF_VSOCK|1<<32)",
				"io_uring_setup", "ptrace", "process_vm_readv", "pidfd_getfd", "keyctl", "add_key", "bpf",
				"perf_event_open", "userfaultfd", "prlimit64(pid)", "setpriority(PRIO_USER)", "sched_setscheduler(pid)",
				"sched_setparam(pid)", "sched_setattr(pid)"));
		if (noPidNamespace) {
			names.add("sched_setaffinity(pid)");
		}
		names.add("setsid");
		if (noPidNamespace) {
			names.add("setpgid");
		}
		if (!this.userNamespaces) {
			names.addAll(List.of("unshare(CLONE_NEWUSER)", "clone(CLONE_NEWUSER)", "clone3"));
		}
		names.addAll(List.of("chmod(S_ISUID)", "fchmodat(S_ISGID)", "openat(O_CREAT, S_ISUID)", "mknodat(S_ISUID)",
				"openat2"));
		return names;
	}

}
