package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.cavesandbox.internal.egress.DestinationAddresses;
import dev.cavesandbox.egress.EgressAllowList;

/**
 * Executor-wide settings: the defaults of every request, the mechanism and its host
 * paths. Immutable; create it with {@link #builder()}. The Spring Boot starter binds them
 * from {@code cave.sandbox.*}; the defaults here are the same as those of the properties.
 *
 * @param mode what to do when isolation is unavailable (default
 * {@link SandboxMode#STRICT})
 * @param timeout the default timeout of an execution (default 30 s)
 * @param maxOutputBytes the default cap of each output stream, in bytes (default 1 MiB)
 * @param killGracePeriod how long a timed-out or cancelled process tree gets between
 * SIGTERM and SIGKILL (default 1 s)
 * @param probeTimeout the time limit of the isolation probe (default 10 s)
 * @param maxConcurrent how many executions may run at once (default 16)
 * @param queueTimeout how long an execution waits for a free slot before it fails with
 * {@link ConcurrencyLimitExceededException} (default 30 s)
 * @param workDirectory where the private working directories of executions are created
 * (default {@code java.io.tmpdir})
 * @param env the environment of every child
 * @param linux the host paths of the Linux mechanisms
 * @param mechanism which mechanism isolates the commands (default
 * {@link MechanismChoice#AUTO})
 * @param loopback whether commands get a private loopback interface that is up, unless a
 * request says otherwise (default {@code false})
 * @param readOnlyRoot whether the host's filesystem is read-only in the sandbox, except
 * the working directory and the hidden directories (default {@code true})
 * @param hiddenDirectories the host directories replaced by private, empty, writable
 * tmpfs mounts in the sandbox, so that the host's unix sockets in them cannot be reached
 * (default {@link #DEFAULT_HIDDEN_DIRECTORIES}); absolute paths other than {@code /}
 * @param macos the host paths of the macOS mechanism
 * @param limits the resource limits of every command, unless a request overrides them
 * (default {@link ResourceLimits#defaults()})
 * @param filesystem what of the host's filesystem every command sees (default: the
 * {@linkplain Filesystem.View#SYSTEM system} view, no listed paths)
 * @param egress which hosts commands may reach through the egress proxy (default
 * {@link Egress#NONE}: no egress at all)
 */
public record SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
		Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
		MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories, Macos macos,
		ResourceLimits limits, Filesystem filesystem, Egress egress) {

	/**
	 * The directories hidden by default: where host services put their unix sockets
	 * ({@code /run}, {@code /var/run}, {@code /tmp}: {@code docker.sock}, D-Bus, X11,
	 * systemd-resolved, nscd), and the other host-wide writable places ({@code /var/tmp},
	 * {@code /dev/shm}).
	 */
	public static final List<Path> DEFAULT_HIDDEN_DIRECTORIES = List.of(Path.of("/tmp"), Path.of("/var/tmp"),
			Path.of("/run"), Path.of("/var/run"), Path.of("/dev/shm"));

	/** The {@code PATH} of the baseline environment. */
	public static final String BASELINE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

	public SandboxSettings {
		Objects.requireNonNull(mode, "mode must not be null");
		requirePositive("timeout", timeout);
		requirePositive("killGracePeriod", killGracePeriod);
		requirePositive("probeTimeout", probeTimeout);
		requirePositive("queueTimeout", queueTimeout);
		if (maxOutputBytes <= 0) {
			throw new IllegalArgumentException("maxOutputBytes must be positive, but was " + maxOutputBytes);
		}
		if (maxConcurrent <= 0) {
			throw new IllegalArgumentException("maxConcurrent must be positive, but was " + maxConcurrent);
		}
		Objects.requireNonNull(workDirectory, "workDirectory must not be null");
		Objects.requireNonNull(env, "env must not be null");
		Objects.requireNonNull(linux, "linux must not be null");
		if (linux.commandUserRange().size() < maxConcurrent) {
			throw new IllegalArgumentException("commandUserRange " + linux.commandUserRange() + " holds "
					+ linux.commandUserRange().size() + " uids, fewer than maxConcurrent (" + maxConcurrent
					+ "): each execution of a root JVM on the seccomp rung runs as a uid of its own; widen the range "
					+ "or lower maxConcurrent");
		}
		Objects.requireNonNull(mechanism, "mechanism must not be null");
		if (mechanism == MechanismChoice.NONE && mode != SandboxMode.FALLBACK) {
			throw new IllegalArgumentException(
					"mechanism NONE runs commands without isolation and is only allowed with " + "mode FALLBACK");
		}
		hiddenDirectories = List.copyOf(hiddenDirectories);
		for (Path directory : hiddenDirectories) {
			if (!directory.isAbsolute() || directory.getParent() == null) {
				throw new IllegalArgumentException(
						"a hidden directory must be an absolute path other than /, but was " + directory);
			}
		}
		Objects.requireNonNull(macos, "macos must not be null");
		Objects.requireNonNull(limits, "limits must not be null");
		Objects.requireNonNull(filesystem, "filesystem must not be null");
		Objects.requireNonNull(egress, "egress must not be null");
	}

	/**
	 * Create the settings without egress.
	 * @param mode what to do when isolation is unavailable
	 * @param timeout the default timeout of an execution
	 * @param maxOutputBytes the default cap of each output stream, in bytes
	 * @param killGracePeriod the grace period between SIGTERM and SIGKILL
	 * @param probeTimeout the time limit of the isolation probe
	 * @param maxConcurrent how many executions may run at once
	 * @param queueTimeout how long an execution waits for a free slot
	 * @param workDirectory where the private working directories are created
	 * @param env the environment of every child
	 * @param linux the host paths of the Linux mechanisms
	 * @param mechanism which mechanism isolates the commands
	 * @param loopback whether commands get a private loopback interface
	 * @param readOnlyRoot whether the host's filesystem is read-only in the sandbox
	 * @param hiddenDirectories the host directories replaced by private tmpfs mounts
	 * @param macos the host paths of the macOS mechanism
	 * @param limits the resource limits of every command
	 * @param filesystem what of the host's filesystem every command sees
	 */
	public SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
			Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
			MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories,
			Macos macos, ResourceLimits limits, Filesystem filesystem) {
		this(mode, timeout, maxOutputBytes, killGracePeriod, probeTimeout, maxConcurrent, queueTimeout, workDirectory,
				env, linux, mechanism, loopback, readOnlyRoot, hiddenDirectories, macos, limits, filesystem,
				Egress.NONE);
	}

	/**
	 * Create the settings with the default filesystem view.
	 * @param mode what to do when isolation is unavailable
	 * @param timeout the default timeout of an execution
	 * @param maxOutputBytes the default cap of each output stream, in bytes
	 * @param killGracePeriod the grace period between SIGTERM and SIGKILL
	 * @param probeTimeout the time limit of the isolation probe
	 * @param maxConcurrent how many executions may run at once
	 * @param queueTimeout how long an execution waits for a free slot
	 * @param workDirectory where the private working directories are created
	 * @param env the environment of every child
	 * @param linux the host paths of the Linux mechanisms
	 * @param mechanism which mechanism isolates the commands
	 * @param loopback whether commands get a private loopback interface
	 * @param readOnlyRoot whether the host's filesystem is read-only in the sandbox
	 * @param hiddenDirectories the host directories replaced by private tmpfs mounts
	 * @param macos the host paths of the macOS mechanism
	 * @param limits the resource limits of every command
	 */
	public SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
			Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
			MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories,
			Macos macos, ResourceLimits limits) {
		this(mode, timeout, maxOutputBytes, killGracePeriod, probeTimeout, maxConcurrent, queueTimeout, workDirectory,
				env, linux, mechanism, loopback, readOnlyRoot, hiddenDirectories, macos, limits, Filesystem.DEFAULT);
	}

	/**
	 * Which hosts commands may reach through the egress proxy: where the list is not
	 * empty, each execution's network namespace gets a bridge on
	 * {@code 127.0.0.1:}{@value #PROXY_PORT} to a proxy that the JVM serves on a unix
	 * socket, the command's environment points {@code HTTP_PROXY} and the others at it,
	 * and the proxy resolves and checks every destination ({@link EgressAllowList}). Only
	 * the rungs with a network namespace of their own (bwrap, unshare, namespaces) can
	 * offer it; elsewhere an execution with an allow-list fails with
	 * {@link EgressUnavailableException} ({@code cave_sandbox_egress_unavailable}).
	 *
	 * @param allowedHosts {@code host}, {@code *.domain} or {@code host:port} entries
	 * ({@link EgressAllowList#of(List)}); empty (the default): no egress at all
	 * @param allowPrivateDestinations whether the proxy may connect to loopback, private,
	 * link-local, CGNAT, multicast and other non-global addresses
	 * ({@link DestinationAddresses}; default {@code false})
	 */
	public record Egress(List<String> allowedHosts, boolean allowPrivateDestinations) {

		/** The port of the egress bridge on each command's private loopback. */
		public static final int PROXY_PORT = 3128;

		/** No egress at all. */
		public static final Egress NONE = new Egress(List.of(), false);

		public Egress {
			allowedHosts = List.copyOf(EgressAllowList.of(allowedHosts).entries());
		}

		/**
		 * Return the allow-list.
		 * @return the allow-list of {@link #allowedHosts()}
		 */
		public EgressAllowList allowList() {
			return EgressAllowList.of(this.allowedHosts);
		}

	}

	/**
	 * What of the host's filesystem the commands see.
	 *
	 * @param view the view (default {@link View#SYSTEM})
	 * @param readablePaths host paths (directories or files) every command sees read-only
	 * besides the view (default none): absolute, without symbolic links; one that does
	 * not exist is left out of the view, and the probe's facts say so
	 * @param writablePaths host paths every command sees and may write (default none):
	 * absolute, without symbolic links; one that does not exist is left out of the view
	 */
	public record Filesystem(View view, List<Path> readablePaths, List<Path> writablePaths) {

		/** The system view without listed paths. */
		public static final Filesystem DEFAULT = new Filesystem(View.SYSTEM, List.of(), List.of());

		public Filesystem {
			Objects.requireNonNull(view, "view must not be null");
			readablePaths = List.copyOf(readablePaths);
			writablePaths = List.copyOf(writablePaths);
			for (Path path : readablePaths) {
				requireListable("a readable path", path);
			}
			for (Path path : writablePaths) {
				requireListable("a writable path", path);
			}
		}

		private static void requireListable(String what, Path path) {
			if (!path.isAbsolute() || path.getParent() == null) {
				throw new IllegalArgumentException(what + " must be an absolute path other than /, but was " + path);
			}
		}

		/**
		 * The view of the host's filesystem that a command gets.
		 */
		public enum View {

			/**
			 * Only what programs need to run: the system directories ({@code /usr},
			 * {@code /bin}, {@code /sbin}, {@code /lib*}, {@code /etc} without its secret
			 * files, the JVM's {@code java.home}), a new {@code /dev} and {@code /proc},
			 * the hidden directories (empty), the working directory and the listed paths.
			 * On the rungs with a mount namespace everything else does not exist inside;
			 * on those without one (Landlock) it cannot be read, listed or executed.
			 */
			SYSTEM,

			/**
			 * The host's whole filesystem, read-only unless
			 * {@link SandboxSettings#readOnlyRoot()} is false, without the hidden
			 * directories.
			 */
			HOST

		}

	}

	/**
	 * The environment of every child, on top of the baseline.
	 *
	 * @param pass names of parent variables passed to every child (default none); the
	 * builder sets them with {@link Builder#passEnvironment(Iterable)}
	 * @param set variables set in every child, on top of the baseline (default none); the
	 * builder sets them with {@link Builder#environment(Map)}
	 */
	public record Env(Set<String> pass, Map<String, String> set) {

		public Env {
			pass = Set.copyOf(pass);
			set = Map.copyOf(set);
			set.forEach((name, value) -> {
				if (!isValidVariableName(name) || value.indexOf('\0') >= 0) {
					throw new IllegalArgumentException("environment variable '" + name.replace('\0', '?')
							+ "' must have a non-empty name without '=' and no NUL byte in its name or value");
				}
			});
			pass.forEach((name) -> {
				if (!isValidVariableName(name)) {
					throw new IllegalArgumentException(
							"variable name '" + name.replace('\0', '?') + "' to pass is not valid");
				}
			});
		}

	}

	/**
	 * The host paths of the Linux mechanisms.
	 *
	 * @param unsharePath the util-linux {@code unshare} binary (default
	 * {@code /usr/bin/unshare})
	 * @param setprivPath the util-linux {@code setpriv} binary that ties the sandbox to
	 * the life of the JVM with a parent-death signal (default {@code /usr/bin/setpriv})
	 * @param bwrapPath the bubblewrap binary (default {@code /usr/bin/bwrap})
	 * @param ipPath the iproute2 {@code ip} binary with which the unshare mechanism
	 * brings up a private loopback (default {@code /sbin/ip})
	 * @param launcherPath an installed copy of cave-sandbox's native launcher, used
	 * instead of the copy extracted from the jar into the work directory (for a work
	 * directory mounted {@code noexec} or read-only); it must be the very build of this
	 * jar (its SHA-256 is checked). Default {@code null}: the extracted copy
	 * @param userNamespaces whether the command may create user namespaces of its own
	 * (nested containers, {@code unshare --user}, a browser's own sandbox); the
	 * launcher's seccomp filter refuses {@code unshare(2)} and {@code clone(2)} with
	 * {@code CLONE_NEWUSER}, and {@code clone3(2)}, unless this is set (default
	 * {@code false}: a new user namespace would give the command every capability over
	 * new namespaces of its own, which is kernel attack surface)
	 * @param commandUser the uid (and gid) that the commands of a JVM running as the
	 * host's root (uid 0 of the initial user namespace) run as on the rungs with a user
	 * namespace (bwrap, unshare, namespaces), so that the process limit holds (the kernel
	 * never applies {@code RLIMIT_NPROC} to that root, kernel/fork.c): each sandbox's
	 * namespace counts it apart (the kernel's ucounts are per user namespace). On the
	 * seccomp rung its gid is the gid of every execution, whose uid comes from
	 * {@code commandUserRange}; the working directory's group is given to it for the
	 * execution. {@code 0} keeps a root JVM's commands root on every rung, the seccomp
	 * rung included, without a process limit. Default {@value #DEFAULT_COMMAND_USER}
	 * ({@code nobody}). Ignored for a JVM of another user
	 * @param commandUserRange the uids that the commands of a JVM running as the host's
	 * root run as on the seccomp rung, which has no user namespace: each running
	 * execution holds one of its own, as a uid of the host without capabilities, from its
	 * spawn until its process tree has ended, so that executions do not share one
	 * {@code RLIMIT_NPROC} count and cannot signal or ptrace each other. Their gid is
	 * {@code commandUser}'s, shared by all of them (files and IPC objects made
	 * group-accessible stay reachable to the others). At least {@code maxConcurrent}
	 * uids. Default {@link CommandUserRange#DEFAULT}. Unused where {@code commandUser} is
	 * {@code 0} and for a JVM of another user
	 * @throws IllegalArgumentException if {@code commandUser} is negative
	 */
	public record Linux(Path unsharePath, Path setprivPath, Path bwrapPath, Path ipPath, @Nullable Path launcherPath,
			boolean userNamespaces, int commandUser, CommandUserRange commandUserRange) {

		/** The default command user of a root JVM: {@code nobody}. */
		public static final int DEFAULT_COMMAND_USER = 65534;

		public Linux {
			Objects.requireNonNull(unsharePath, "unsharePath must not be null");
			Objects.requireNonNull(setprivPath, "setprivPath must not be null");
			Objects.requireNonNull(bwrapPath, "bwrapPath must not be null");
			Objects.requireNonNull(ipPath, "ipPath must not be null");
			if (commandUser < 0) {
				throw new IllegalArgumentException(
						"commandUser must be a uid (0 keeps a root JVM's commands root), not " + commandUser);
			}
			Objects.requireNonNull(commandUserRange, "commandUserRange must not be null");
		}

		/**
		 * Create the Linux settings with the default range of command users.
		 * @param unsharePath the util-linux {@code unshare} binary
		 * @param setprivPath the util-linux {@code setpriv} binary
		 * @param bwrapPath the bubblewrap binary
		 * @param ipPath the iproute2 {@code ip} binary
		 * @param launcherPath an installed copy of the native launcher, or {@code null}
		 * @param userNamespaces whether the command may create user namespaces of its own
		 * @param commandUser the command user of the rungs with a user namespace
		 */
		public Linux(Path unsharePath, Path setprivPath, Path bwrapPath, Path ipPath, @Nullable Path launcherPath,
				boolean userNamespaces, int commandUser) {
			this(unsharePath, setprivPath, bwrapPath, ipPath, launcherPath, userNamespaces, commandUser,
					CommandUserRange.DEFAULT);
		}

		/**
		 * Create the Linux settings with the default command user.
		 * @param unsharePath the util-linux {@code unshare} binary
		 * @param setprivPath the util-linux {@code setpriv} binary
		 * @param bwrapPath the bubblewrap binary
		 * @param ipPath the iproute2 {@code ip} binary
		 * @param launcherPath an installed copy of the native launcher, or {@code null}
		 * @param userNamespaces whether the command may create user namespaces of its own
		 */
		public Linux(Path unsharePath, Path setprivPath, Path bwrapPath, Path ipPath, @Nullable Path launcherPath,
				boolean userNamespaces) {
			this(unsharePath, setprivPath, bwrapPath, ipPath, launcherPath, userNamespaces, DEFAULT_COMMAND_USER);
		}

	}

	/**
	 * A range of uids from which a root JVM's executions on the seccomp rung each take a
	 * command user of their own ({@link Linux#commandUserRange()}); their gid is the
	 * command user's ({@link Linux#commandUser()}).
	 * <p>
	 * The default, {@value #DEFAULT_TEXT}, lies in the range 65536…524287 that "Users,
	 * Groups, UIDs and GIDs on systemd Systems" (systemd.io/UIDS-GIDS, its summary table)
	 * lists as unused: above the regular users (1000…60000), systemd's homed, nspawn and
	 * dynamic service users (60001…65519) and {@code nobody} (65534), and below both the
	 * subordinate ids that shadow's {@code useradd} hands out from 100000
	 * ({@code SUB_UID_MIN}, login.defs(5)) and systemd's container ranges (from 524288).
	 * "Unused" there means no pre-defined purpose, not a guarantee: choose a range that
	 * no account, {@code /etc/subuid} entry, container runtime or other program on the
	 * host uses, since each uid's processes count against, and may signal, the execution
	 * that holds it.
	 *
	 * @param first the first uid, at least 1
	 * @param last the last uid, at least {@code first} and at most 2147483647 (systemd's
	 * page advises against uids from 2^31 on, which some kernel interfaces and programs
	 * read as negative)
	 */
	public record CommandUserRange(long first, long last) {

		/** The default range as a property value. */
		public static final String DEFAULT_TEXT = "65536-66559";

		/** The default range: 1024 uids from 65536. */
		public static final CommandUserRange DEFAULT = parse(DEFAULT_TEXT);

		/** The highest uid a range may hold: 2^31 - 1. */
		public static final long MAX_UID = Integer.MAX_VALUE;

		public CommandUserRange {
			if (first < 1 || last < first || last > MAX_UID) {
				throw new IllegalArgumentException("a command user range must go from a uid of at least 1 to one of "
						+ "at most " + MAX_UID + " that is not lower, not " + first + "-" + last
						+ " (0 is root; from 2^31 on uids are read as negative by some programs)");
			}
		}

		/**
		 * Parse a range written {@code FIRST-LAST}, both decimal uids.
		 * @param text the range, for example {@value #DEFAULT_TEXT}
		 * @return the range
		 * @throws IllegalArgumentException if it is not of that form or not a valid range
		 */
		public static CommandUserRange parse(String text) {
			int dash = text.indexOf('-');
			String first = (dash > 0) ? text.substring(0, dash).strip() : "";
			String last = (dash > 0) ? text.substring(dash + 1).strip() : "";
			if (!isUid(first) || !isUid(last)) {
				throw new IllegalArgumentException("a command user range must be written FIRST-LAST with two decimal "
						+ "uids, for example " + DEFAULT_TEXT + ", not '" + text + "'");
			}
			return new CommandUserRange(Long.parseLong(first), Long.parseLong(last));
		}

		private static boolean isUid(String text) {
			return !text.isEmpty() && text.length() <= 10 && text.chars().allMatch((c) -> c >= '0' && c <= '9');
		}

		/**
		 * Return how many uids the range holds.
		 * @return {@code last - first + 1}
		 */
		public long size() {
			return this.last - this.first + 1;
		}

		/**
		 * Return whether the range holds a uid.
		 * @param uid the uid
		 * @return whether {@code first <= uid <= last}
		 */
		public boolean contains(long uid) {
			return uid >= this.first && uid <= this.last;
		}

		/**
		 * Return the range as it is written in a property.
		 * @return {@code FIRST-LAST}
		 */
		@Override
		public String toString() {
			return this.first + "-" + this.last;
		}

	}

	/**
	 * The host paths of the macOS mechanism.
	 *
	 * @param sandboxExecPath the macOS {@code sandbox-exec} binary (default
	 * {@code /usr/bin/sandbox-exec})
	 */
	public record Macos(Path sandboxExecPath) {

		public Macos {
			Objects.requireNonNull(sandboxExecPath, "sandboxExecPath must not be null");
		}

	}

	/**
	 * Return whether a process environment can hold a variable of this name (environ(7)):
	 * not empty, no {@code '='} and no NUL byte.
	 * @param name the name
	 * @return whether it is valid
	 */
	public static boolean isValidVariableName(String name) {
		return !name.isEmpty() && name.indexOf('=') < 0 && name.indexOf('\0') < 0;
	}

	private static void requirePositive(String name, @Nullable Duration value) {
		if (value == null || value.isZero() || value.isNegative()) {
			throw new IllegalArgumentException(name + " must be positive, but was " + value);
		}
	}

	/**
	 * Return a builder with every value at its default.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Return the default settings.
	 * @return the settings
	 */
	public static SandboxSettings defaults() {
		return builder().build();
	}

	/**
	 * Builder of {@link SandboxSettings}.
	 */
	public static final class Builder {

		private SandboxMode mode = SandboxMode.STRICT;

		private Duration timeout = Duration.ofSeconds(30);

		private long maxOutputBytes = 1024 * 1024;

		private Duration killGracePeriod = Duration.ofSeconds(1);

		private Duration probeTimeout = Duration.ofSeconds(10);

		private int maxConcurrent = 16;

		private Duration queueTimeout = Duration.ofSeconds(30);

		private Path workDirectory = Path.of(System.getProperty("java.io.tmpdir"));

		private final Set<String> passEnvironment = new LinkedHashSet<>();

		private final Map<String, String> environment = new LinkedHashMap<>();

		private Path unsharePath = Path.of("/usr/bin/unshare");

		private Path setprivPath = Path.of("/usr/bin/setpriv");

		private MechanismChoice mechanism = MechanismChoice.AUTO;

		private boolean loopback;

		private boolean readOnlyRoot = true;

		private List<Path> hiddenDirectories = new ArrayList<>(DEFAULT_HIDDEN_DIRECTORIES);

		private Path bwrapPath = Path.of("/usr/bin/bwrap");

		private Path ipPath = Path.of("/sbin/ip");

		private @Nullable Path launcherPath;

		private boolean userNamespaces;

		private int commandUser = Linux.DEFAULT_COMMAND_USER;

		private CommandUserRange commandUserRange = CommandUserRange.DEFAULT;

		private Path sandboxExecPath = Path.of("/usr/bin/sandbox-exec");

		private ResourceLimits limits = ResourceLimits.defaults();

		private Filesystem.View filesystemView = Filesystem.View.SYSTEM;

		private List<Path> readablePaths = new ArrayList<>();

		private List<Path> writablePaths = new ArrayList<>();

		private List<String> allowedHosts = new ArrayList<>();

		private boolean allowPrivateDestinations;

		private Builder() {
		}

		public Builder mode(SandboxMode mode) {
			this.mode = mode;
			return this;
		}

		public Builder timeout(Duration timeout) {
			this.timeout = timeout;
			return this;
		}

		public Builder maxOutputBytes(long maxOutputBytes) {
			this.maxOutputBytes = maxOutputBytes;
			return this;
		}

		public Builder killGracePeriod(Duration killGracePeriod) {
			this.killGracePeriod = killGracePeriod;
			return this;
		}

		public Builder probeTimeout(Duration probeTimeout) {
			this.probeTimeout = probeTimeout;
			return this;
		}

		public Builder maxConcurrent(int maxConcurrent) {
			this.maxConcurrent = maxConcurrent;
			return this;
		}

		public Builder queueTimeout(Duration queueTimeout) {
			this.queueTimeout = queueTimeout;
			return this;
		}

		public Builder workDirectory(Path workDirectory) {
			this.workDirectory = workDirectory;
			return this;
		}

		public Builder passEnvironment(Iterable<String> names) {
			names.forEach(this.passEnvironment::add);
			return this;
		}

		public Builder environment(Map<String, String> variables) {
			this.environment.putAll(variables);
			return this;
		}

		public Builder unsharePath(Path unsharePath) {
			this.unsharePath = unsharePath;
			return this;
		}

		public Builder setprivPath(Path setprivPath) {
			this.setprivPath = setprivPath;
			return this;
		}

		public Builder mechanism(MechanismChoice mechanism) {
			this.mechanism = mechanism;
			return this;
		}

		public Builder loopback(boolean loopback) {
			this.loopback = loopback;
			return this;
		}

		public Builder readOnlyRoot(boolean readOnlyRoot) {
			this.readOnlyRoot = readOnlyRoot;
			return this;
		}

		/**
		 * Replace the hidden directories (by default
		 * {@link #DEFAULT_HIDDEN_DIRECTORIES}).
		 * @param directories the directories to hide
		 * @return this builder
		 */
		public Builder hiddenDirectories(Iterable<Path> directories) {
			this.hiddenDirectories = new ArrayList<>();
			directories.forEach(this.hiddenDirectories::add);
			return this;
		}

		public Builder bwrapPath(Path bwrapPath) {
			this.bwrapPath = bwrapPath;
			return this;
		}

		public Builder ipPath(Path ipPath) {
			this.ipPath = ipPath;
			return this;
		}

		/**
		 * Use an installed copy of the native launcher instead of extracting it into the
		 * work directory.
		 * @param launcherPath the copy, or {@code null} to extract it (the default)
		 * @return this builder
		 */
		public Builder launcherPath(@Nullable Path launcherPath) {
			this.launcherPath = launcherPath;
			return this;
		}

		/**
		 * Let the command create user namespaces of its own.
		 * @param userNamespaces whether the launcher's filter allows new user namespaces
		 * (default {@code false})
		 * @return this builder
		 */
		public Builder userNamespaces(boolean userNamespaces) {
			this.userNamespaces = userNamespaces;
			return this;
		}

		/**
		 * Set the uid (and gid) that a root JVM's commands run as, so that the process
		 * limit holds; see {@link Linux#commandUser()}.
		 * @param commandUser the uid, or {@code 0} to keep them root (default
		 * {@value Linux#DEFAULT_COMMAND_USER})
		 * @return this builder
		 */
		public Builder commandUser(int commandUser) {
			this.commandUser = commandUser;
			return this;
		}

		/**
		 * Set the uids that a root JVM's executions on the seccomp rung each take one of;
		 * see {@link Linux#commandUserRange()}.
		 * @param commandUserRange the range (default {@link CommandUserRange#DEFAULT})
		 * @return this builder
		 */
		public Builder commandUserRange(CommandUserRange commandUserRange) {
			this.commandUserRange = Objects.requireNonNull(commandUserRange, "commandUserRange must not be null");
			return this;
		}

		public Builder sandboxExecPath(Path sandboxExecPath) {
			this.sandboxExecPath = sandboxExecPath;
			return this;
		}

		/**
		 * Set the resource limits of every command (default
		 * {@link ResourceLimits#defaults()}); a request's set values override them. These
		 * replace the defaults as a whole (a value left unset is no limit): to change
		 * one, start from {@code ResourceLimits.defaults().toBuilder()}.
		 * @param limits the limits
		 * @return this builder
		 */
		public Builder limits(ResourceLimits limits) {
			this.limits = Objects.requireNonNull(limits, "limits must not be null");
			return this;
		}

		/**
		 * Set the view of the host's filesystem that commands get.
		 * @param view the view (default {@link Filesystem.View#SYSTEM})
		 * @return this builder
		 */
		public Builder filesystemView(Filesystem.View view) {
			this.filesystemView = Objects.requireNonNull(view, "view must not be null");
			return this;
		}

		/**
		 * Replace the host paths every command sees read-only besides the view.
		 * @param paths absolute paths without symbolic links (default none)
		 * @return this builder
		 */
		public Builder readablePaths(Iterable<Path> paths) {
			this.readablePaths = new ArrayList<>();
			paths.forEach(this.readablePaths::add);
			return this;
		}

		/**
		 * Replace the host paths every command sees and may write.
		 * @param paths absolute paths without symbolic links (default none)
		 * @return this builder
		 */
		public Builder writablePaths(Iterable<Path> paths) {
			this.writablePaths = new ArrayList<>();
			paths.forEach(this.writablePaths::add);
			return this;
		}

		/**
		 * Replace the hosts commands may reach through the egress proxy.
		 * @param entries {@code host}, {@code *.domain} or {@code host:port} (default
		 * none: no egress)
		 * @return this builder
		 */
		public Builder allowedHosts(Iterable<String> entries) {
			this.allowedHosts = new ArrayList<>();
			entries.forEach(this.allowedHosts::add);
			return this;
		}

		/**
		 * Set whether the egress proxy may connect to non-global addresses.
		 * @param allow whether it may (default {@code false})
		 * @return this builder
		 */
		public Builder allowPrivateDestinations(boolean allow) {
			this.allowPrivateDestinations = allow;
			return this;
		}

		/**
		 * Build the settings.
		 * @return the settings
		 * @throws IllegalArgumentException if a duration, the cap or the concurrency is
		 * not positive, or the range of command users holds fewer uids than
		 * {@code maxConcurrent}
		 */
		public SandboxSettings build() {
			return new SandboxSettings(this.mode, this.timeout, this.maxOutputBytes, this.killGracePeriod,
					this.probeTimeout, this.maxConcurrent, this.queueTimeout, this.workDirectory,
					new Env(this.passEnvironment, this.environment),
					new Linux(this.unsharePath, this.setprivPath, this.bwrapPath, this.ipPath, this.launcherPath,
							this.userNamespaces, this.commandUser, this.commandUserRange),
					this.mechanism, this.loopback, this.readOnlyRoot, this.hiddenDirectories,
					new Macos(this.sandboxExecPath), this.limits,
					new Filesystem(this.filesystemView, this.readablePaths, this.writablePaths),
					new Egress(this.allowedHosts, this.allowPrivateDestinations));
		}

	}

}
