package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

/**
 * Executor-wide settings. Immutable; create them with {@link #builder()}. The Spring Boot
 * starter binds them from {@code cave.sandbox.*} with the same defaults. Two kinds:
 * <ul>
 * <li>what the isolation probe verifies, {@link #probed()}: the mode, the mechanism and
 * its host paths, the loopback, the filesystem view, the work directory and the limits;
 * an executor must run with what its capability was probed with;</li>
 * <li>the defaults of every execution (timeout, output cap, environment, egress) and the
 * executor's own bounds (concurrency, queue, grace period, probe timeout).</li>
 * </ul>
 * Invalid values fail with {@link IllegalArgumentException} (a {@code null} with
 * {@link NullPointerException}) naming the value.
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
 * {@link MechanismChoice#AUTO}); {@link MechanismChoice#NONE} only with
 * {@link SandboxMode#FALLBACK}
 * @param loopback whether commands get a private loopback interface that is up, unless a
 * request says otherwise (default {@code false})
 * @param readOnlyRoot whether the host's filesystem is read-only in the sandbox, except
 * the working directory and the hidden directories (default {@code true})
 * @param hiddenDirectories host directories replaced by private, empty, writable tmpfs
 * mounts, so that the host's unix sockets in them cannot be reached: absolute paths other
 * than {@code /} (default {@link #DEFAULT_HIDDEN_DIRECTORIES})
 * @param macos the host paths of the macOS mechanism
 * @param limits the resource limits of every command, unless a request overrides them
 * (default {@link ResourceLimits#defaults()})
 * @param filesystem what of the host's filesystem every command sees (default
 * {@link Filesystem#DEFAULT})
 * @param egress which hosts commands may reach through the egress proxy (default
 * {@link Egress#NONE})
 * @param maxOutputFileBytes the default cap of an execution's output files, all together,
 * in bytes (default {@value #DEFAULT_MAX_OUTPUT_FILE_BYTES}, 16 MiB;
 * {@link ExecutionRequest.Builder#maxOutputFileBytes(long)})
 * @param warm the pool of warm sandboxes (the builder's default:
 * {@link WarmPoolSettings#DEFAULT}, {@linkplain WarmPoolSettings#fitting fitted} to
 * {@code maxConcurrent} and the command user range); its size is at most
 * {@code maxConcurrent}, and the command user range holds {@code maxConcurrent} plus its
 * size (a waiting sandbox on seccomp holds a uid of its own)
 */
public record SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
		Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
		MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories, Macos macos,
		ResourceLimits limits, Filesystem filesystem, Egress egress, long maxOutputFileBytes, WarmPoolSettings warm) {

	/** The default cap of an execution's output files, all together: 16 MiB. */
	public static final long DEFAULT_MAX_OUTPUT_FILE_BYTES = 16 * 1024 * 1024;

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
		PositiveAmounts.require("timeout", timeout, IllegalArgumentException::new);
		PositiveAmounts.require("killGracePeriod", killGracePeriod, IllegalArgumentException::new);
		PositiveAmounts.require("probeTimeout", probeTimeout, IllegalArgumentException::new);
		PositiveAmounts.require("queueTimeout", queueTimeout, IllegalArgumentException::new);
		PositiveAmounts.require("maxOutputBytes", maxOutputBytes, IllegalArgumentException::new);
		PositiveAmounts.require("maxConcurrent", maxConcurrent, IllegalArgumentException::new);
		Objects.requireNonNull(workDirectory, "workDirectory must not be null");
		Objects.requireNonNull(env, "env must not be null");
		Objects.requireNonNull(linux, "linux must not be null");
		Objects.requireNonNull(warm, "warm must not be null");
		if (warm.size() > maxConcurrent) {
			throw new IllegalArgumentException(
					"warm.size (" + warm.size() + ") must not exceed maxConcurrent (" + maxConcurrent + ")");
		}
		CommandUserRange range = linux.commandUserRange();
		if (range.size() < (long) maxConcurrent + warm.size()) {
			String needed = (warm.size() == 0) ? "maxConcurrent (" + maxConcurrent + ")"
					: "maxConcurrent (" + maxConcurrent + ") plus warm.size (" + warm.size() + ")";
			throw new IllegalArgumentException("commandUserRange " + range + " holds " + range.size()
					+ " uids, fewer than " + needed + ": each execution "
					+ ((warm.size() == 0) ? "" : "and each warm sandbox ")
					+ "of a root JVM on the seccomp mechanism runs as a uid of its own; widen the range or lower "
					+ ((warm.size() == 0) ? "maxConcurrent" : "maxConcurrent or warm.size"));
		}
		Objects.requireNonNull(mechanism, "mechanism must not be null");
		if (mechanism == MechanismChoice.NONE && mode != SandboxMode.FALLBACK) {
			throw new IllegalArgumentException(
					"mechanism none runs commands without isolation and is only allowed with mode fallback");
		}
		hiddenDirectories = ListedPaths.requireAll("a hidden directory", hiddenDirectories);
		Objects.requireNonNull(macos, "macos must not be null");
		Objects.requireNonNull(limits, "limits must not be null");
		Objects.requireNonNull(filesystem, "filesystem must not be null");
		Objects.requireNonNull(egress, "egress must not be null");
		PositiveAmounts.require("maxOutputFileBytes", maxOutputFileBytes, IllegalArgumentException::new);
	}

	/**
	 * Create the settings without a pool of warm sandboxes
	 * ({@link WarmPoolSettings#OFF}); the parameters are the components of the same
	 * names.
	 */
	public SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
			Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
			MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories,
			Macos macos, ResourceLimits limits, Filesystem filesystem, Egress egress, long maxOutputFileBytes) {
		this(mode, timeout, maxOutputBytes, killGracePeriod, probeTimeout, maxConcurrent, queueTimeout, workDirectory,
				env, linux, mechanism, loopback, readOnlyRoot, hiddenDirectories, macos, limits, filesystem, egress,
				maxOutputFileBytes, WarmPoolSettings.OFF);
	}

	/**
	 * Create the settings with the default cap of output files
	 * ({@value #DEFAULT_MAX_OUTPUT_FILE_BYTES}); the parameters are the components of the
	 * same names.
	 */
	public SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
			Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
			MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories,
			Macos macos, ResourceLimits limits, Filesystem filesystem, Egress egress) {
		this(mode, timeout, maxOutputBytes, killGracePeriod, probeTimeout, maxConcurrent, queueTimeout, workDirectory,
				env, linux, mechanism, loopback, readOnlyRoot, hiddenDirectories, macos, limits, filesystem, egress,
				DEFAULT_MAX_OUTPUT_FILE_BYTES);
	}

	/**
	 * Create the settings without egress ({@link Egress#NONE}); the parameters are the
	 * components of the same names.
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
	 * Create the settings without egress and with {@link Filesystem#DEFAULT}; the
	 * parameters are the components of the same names.
	 */
	public SandboxSettings(SandboxMode mode, Duration timeout, long maxOutputBytes, Duration killGracePeriod,
			Duration probeTimeout, int maxConcurrent, Duration queueTimeout, Path workDirectory, Env env, Linux linux,
			MechanismChoice mechanism, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories,
			Macos macos, ResourceLimits limits) {
		this(mode, timeout, maxOutputBytes, killGracePeriod, probeTimeout, maxConcurrent, queueTimeout, workDirectory,
				env, linux, mechanism, loopback, readOnlyRoot, hiddenDirectories, macos, limits, Filesystem.DEFAULT);
	}

	/**
	 * Return what the isolation probe verifies of these settings.
	 * @return the probed settings
	 */
	public ProbedSettings probed() {
		return new ProbedSettings(this.mode, this.mechanism, this.linux, this.macos, this.loopback, this.readOnlyRoot,
				this.hiddenDirectories, this.filesystem, this.workDirectory, this.limits);
	}

	/**
	 * Return whether a process environment can hold a variable of this name (environ(7)):
	 * not empty, no {@code '='} and no NUL byte.
	 * @param name the name
	 * @return whether it is valid
	 */
	public static boolean isValidVariableName(String name) {
		return ProcessStrings.isVariableName(name);
	}

	/**
	 * Return a builder with every value at its default.
	 * @return the builder
	 */
	public static Builder builder() {
		return new SandboxSettingsBuilder();
	}

	/**
	 * Return the default settings.
	 * @return the settings
	 */
	public static SandboxSettings defaults() {
		return builder().build();
	}

	/**
	 * Which hosts commands may reach through the egress proxy. Where the list is not
	 * empty, each execution's network namespace gets a bridge on
	 * {@code 127.0.0.1:}{@value #PROXY_PORT} to a proxy in the JVM, {@code HTTP_PROXY}
	 * and the others point at it, and the proxy resolves and checks every destination.
	 * Only the mechanisms with a network namespace of their own (bwrap, unshare,
	 * namespaces) offer it; elsewhere an execution with an allow-list fails with
	 * {@link EgressUnavailableException} ({@code cave_sandbox_egress_unavailable}).
	 *
	 * @param allowedHosts {@code host}, {@code *.domain} or {@code host:port} entries
	 * ({@link EgressAllowList#of(List)}); empty (the default): no egress at all
	 * @param allowPrivateDestinations whether the proxy may connect to loopback, private,
	 * link-local, CGNAT, multicast and other non-global addresses (default {@code false})
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
			readablePaths = ListedPaths.requireAll("a readable path", readablePaths);
			writablePaths = ListedPaths.requireAll("a writable path", writablePaths);
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
			 * On the mechanisms with a mount namespace nothing else exists inside; on
			 * those without one (Landlock) nothing else can be read, listed or executed.
			 */
			SYSTEM,

			/**
			 * The host's whole filesystem without the hidden directories, read-only
			 * unless {@link SandboxSettings#readOnlyRoot()} is false.
			 */
			HOST

		}

	}

	/**
	 * The environment of every child, on top of the baseline.
	 *
	 * @param pass names of parent variables passed to every child (default none)
	 * @param set variables set in every child (default none): names not empty, without
	 * {@code '='}; no NUL byte in names or values
	 */
	public record Env(Set<String> pass, Map<String, String> set) {

		public Env {
			pass = Set.copyOf(pass);
			set = Map.copyOf(set);
			ProcessStrings.requireEnvironment(pass, set);
		}

	}

	/**
	 * The host paths and users of the Linux mechanisms.
	 *
	 * @param unsharePath the util-linux {@code unshare} binary (default
	 * {@code /usr/bin/unshare})
	 * @param setprivPath the util-linux {@code setpriv} binary that ties the sandbox to
	 * the life of the JVM with a parent-death signal (default {@code /usr/bin/setpriv})
	 * @param bwrapPath the bubblewrap binary (default {@code /usr/bin/bwrap})
	 * @param launcherPath an installed copy of the native launcher, used instead of the
	 * copy extracted into the work directory (for a work directory mounted {@code noexec}
	 * or read-only); it must be the very build of this jar (its SHA-256 is checked).
	 * Default {@code null}: the extracted copy
	 * @param userNamespaces whether the command may create user namespaces of its own
	 * (nested containers, {@code unshare --user}, a browser's sandbox); otherwise the
	 * launcher's seccomp filter refuses {@code unshare(2)} and {@code clone(2)} with
	 * {@code CLONE_NEWUSER}, and {@code clone3(2)} (default {@code false}: new namespaces
	 * are kernel attack surface)
	 * @param commandUser the uid (and gid) that the commands of a JVM running as the
	 * host's root run as on the mechanisms with a user namespace (bwrap, unshare,
	 * namespaces), so that the process limit holds: the kernel never applies
	 * {@code RLIMIT_NPROC} to that root (kernel/fork.c). On the seccomp mechanism only
	 * its gid is used: every execution's, given the working directory's group; the uids
	 * come from {@code commandUserRange}. {@code 0} keeps a root JVM's commands root on
	 * every mechanism, without a process limit. Default {@value #DEFAULT_COMMAND_USER}
	 * ({@code nobody}); ignored for a JVM of another user
	 * @param commandUserRange the uids that a root JVM's commands run as on the seccomp
	 * mechanism, which has no user namespace: each running execution holds one of its own
	 * until its process tree has ended, so that executions neither share one
	 * {@code RLIMIT_NPROC} count nor signal or ptrace each other. Their gid,
	 * {@code commandUser}'s, is shared: what one makes group-accessible the others reach.
	 * At least {@code maxConcurrent} uids (default {@link CommandUserRange#DEFAULT});
	 * unused where {@code commandUser} is {@code 0} and for a JVM of another user
	 */
	public record Linux(Path unsharePath, Path setprivPath, Path bwrapPath, @Nullable Path launcherPath,
			boolean userNamespaces, int commandUser, CommandUserRange commandUserRange) {

		/** The default command user of a root JVM: {@code nobody}. */
		public static final int DEFAULT_COMMAND_USER = 65534;

		/**
		 * Check the settings.
		 * @throws IllegalArgumentException if {@code commandUser} is negative
		 */
		public Linux {
			Objects.requireNonNull(unsharePath, "unsharePath must not be null");
			Objects.requireNonNull(setprivPath, "setprivPath must not be null");
			Objects.requireNonNull(bwrapPath, "bwrapPath must not be null");
			if (commandUser < 0) {
				throw new IllegalArgumentException(
						"commandUser must be a uid (0 keeps a root JVM's commands root), not " + commandUser);
			}
			Objects.requireNonNull(commandUserRange, "commandUserRange must not be null");
		}

		/**
		 * Create the Linux settings with {@link CommandUserRange#DEFAULT}; the parameters
		 * are the components of the same names.
		 */
		public Linux(Path unsharePath, Path setprivPath, Path bwrapPath, @Nullable Path launcherPath,
				boolean userNamespaces, int commandUser) {
			this(unsharePath, setprivPath, bwrapPath, launcherPath, userNamespaces, commandUser,
					CommandUserRange.DEFAULT);
		}

		/**
		 * Create the Linux settings with {@link #DEFAULT_COMMAND_USER} and
		 * {@link CommandUserRange#DEFAULT}; the parameters are the components of the same
		 * names.
		 */
		public Linux(Path unsharePath, Path setprivPath, Path bwrapPath, @Nullable Path launcherPath,
				boolean userNamespaces) {
			this(unsharePath, setprivPath, bwrapPath, launcherPath, userNamespaces, DEFAULT_COMMAND_USER);
		}

	}

	/**
	 * A range of uids from which a root JVM's executions on the seccomp mechanism each
	 * take a command user of their own ({@link Linux#commandUserRange()}).
	 * <p>
	 * The default, {@value #DEFAULT_TEXT}, lies in 65536…524287, which systemd's "Users,
	 * Groups, UIDs and GIDs on systemd Systems" (systemd.io/UIDS-GIDS) lists as unused:
	 * above the regular, systemd's dynamic and {@code nobody} users, below the
	 * subordinate ids of {@code useradd} (from 100000, {@code SUB_UID_MIN} in
	 * login.defs(5)) and systemd's container ranges. Unused is no guarantee: choose a
	 * range that no account, {@code /etc/subuid} entry or container runtime on the host
	 * uses, since each uid's processes count against, and may signal, the execution that
	 * holds it.
	 *
	 * @param first the first uid, at least 1
	 * @param last the last uid, at least {@code first} and at most {@value #MAX_UID}
	 * (from 2^31 on some kernel interfaces and programs read uids as negative)
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
	 * Builder of {@link SandboxSettings}, from {@link #builder()} with every value at its
	 * default. Each setter sets the component of its name (of the record or of
	 * {@link Linux}, {@link Macos}, {@link Filesystem} or {@link Egress}; the default is
	 * documented there). The setters of lists replace what was set before;
	 * {@link #passEnvironment(Iterable)} and {@link #environment(Map)} add to it. Values
	 * are checked by {@link #build()}.
	 */
	public interface Builder {

		Builder mode(SandboxMode mode);

		Builder timeout(Duration timeout);

		Builder maxOutputBytes(long maxOutputBytes);

		Builder killGracePeriod(Duration killGracePeriod);

		Builder probeTimeout(Duration probeTimeout);

		Builder maxConcurrent(int maxConcurrent);

		Builder queueTimeout(Duration queueTimeout);

		Builder workDirectory(Path workDirectory);

		Builder passEnvironment(Iterable<String> names);

		Builder environment(Map<String, String> variables);

		Builder unsharePath(Path unsharePath);

		Builder setprivPath(Path setprivPath);

		Builder mechanism(MechanismChoice mechanism);

		Builder loopback(boolean loopback);

		Builder readOnlyRoot(boolean readOnlyRoot);

		Builder hiddenDirectories(Iterable<Path> directories);

		Builder bwrapPath(Path bwrapPath);

		Builder launcherPath(@Nullable Path launcherPath);

		Builder userNamespaces(boolean userNamespaces);

		Builder commandUser(int commandUser);

		Builder commandUserRange(CommandUserRange commandUserRange);

		Builder sandboxExecPath(Path sandboxExecPath);

		/**
		 * Set the resource limits of every command; a request's set values override them.
		 * They replace the defaults as a whole (a value left unset is no limit): to
		 * change one, start from {@code ResourceLimits.defaults().toBuilder()}.
		 * @param limits the limits (default {@link ResourceLimits#defaults()})
		 * @return this builder
		 */
		Builder limits(ResourceLimits limits);

		Builder filesystemView(Filesystem.View view);

		Builder readablePaths(Iterable<Path> paths);

		Builder writablePaths(Iterable<Path> paths);

		Builder allowedHosts(Iterable<String> entries);

		Builder allowPrivateDestinations(boolean allow);

		Builder maxOutputFileBytes(long maxOutputFileBytes);

		/**
		 * Set the pool of warm sandboxes; a size set here is not fitted to the other
		 * settings (one larger than they allow is refused by {@link #build()}).
		 * @param warm the pool's size and the longest wait of a sandbox (default
		 * {@link WarmPoolSettings#DEFAULT}, fitted: at most {@code maxConcurrent}, and no
		 * more than the command user range holds beside {@code maxConcurrent};
		 * {@link WarmPoolSettings#OFF} turns the pool off)
		 * @return this builder
		 */
		Builder warm(WarmPoolSettings warm);

		/**
		 * Build the settings.
		 * @return the settings
		 * @throws IllegalArgumentException if a value is invalid: a duration, the cap or
		 * the concurrency not positive, the range of command users holding fewer uids
		 * than {@code maxConcurrent}, a listed path or a variable not valid
		 */
		SandboxSettings build();

	}

}
