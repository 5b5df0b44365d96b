package dev.cavesandbox;

/**
 * Why OS-level network isolation is unavailable on a host, as detected by the
 * {@link NetworkIsolationProbe}. A closed set: each constant names the cause and the fix
 * that applies to it. Every cause also allows the general remedies: use a container or VM
 * as the boundary, or, where {@link #fallbackHelps()}, accept unisolated runs with
 * {@link SandboxMode#FALLBACK}. The texts name settings by their {@link SandboxSettings}
 * component; the Spring Boot starter has its own texts that name its properties.
 */
public enum UnavailabilityCause {

	/**
	 * The operating system has no primitive that cave-sandbox supports (Windows, BSD,
	 * ...), or the chosen mechanism is the other supported system's (sandbox-exec on
	 * Linux, a Linux mechanism on macOS); the detail says which.
	 */
	UNSUPPORTED_OS(
			"this operating system has no network-isolation primitive that cave-sandbox supports (Windows has no "
					+ "per-process network namespace that a process can create for its child), or the chosen "
					+ "mechanism is another system's (the detail says which)",
			"choose mechanism auto or a mechanism of this system (Linux: bwrap, unshare, namespaces, seccomp; "
					+ "macOS: sandbox-exec); on another system run on Linux or macOS: on Windows run the JVM in "
					+ "WSL2 or a Linux container; or use a container or VM as the network boundary"),

	/**
	 * The wrapper binary (bwrap, unshare, setpriv, sandbox-exec) does not exist at the
	 * configured path.
	 */
	BINARY_MISSING("the sandbox wrapper binary does not exist",
			"install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora/RHEL: dnf install bubblewrap) "
					+ "or util-linux (Debian/Ubuntu: apt-get install util-linux; Alpine: apk add util-linux-misc setpriv), "
					+ "or point the mechanism's binaries (bwrapPath, unsharePath, setprivPath; macOS: sandboxExecPath) "
					+ "at them"),

	/** The wrapper binary exists but cannot be executed (error=13, Permission denied). */
	BINARY_NOT_EXECUTABLE("the sandbox wrapper binary is not executable",
			"make the binary executable for the user that runs the JVM (chmod a+x), or point "
					+ "the mechanism's binaries (bwrapPath, unsharePath, setprivPath) at ones that are"),

	/**
	 * cave-sandbox's native launcher could not be installed, verified or executed: no
	 * build of it for this architecture in the jar, a copy whose SHA-256 is not the
	 * recorded one, or a work directory (or {@code launcherPath}) on a filesystem mounted
	 * {@code noexec}. The detail names the check that failed.
	 */
	LAUNCHER_UNAVAILABLE("cave-sandbox's native launcher could not be installed, verified or executed",
			"if the work directory (workDirectory) is mounted noexec or read-only, copy the launcher from the "
					+ "cave-sandbox-core jar (dev/cavesandbox/launcher/linux-<arch>/cave-sandbox-launcher; its SHA-256 is "
					+ "in launcher.properties beside it and in the detail) to an executable filesystem, make it "
					+ "executable and point launcherPath at it, or choose a work directory that is writable and "
					+ "executable; if launcherPath is set, point it at an unmodified copy of this jar's build; "
					+ "if the jar has no build for this architecture, build cave-sandbox-core on that architecture"),

	/**
	 * The work directory ({@link SandboxSettings#workDirectory()}) cannot hold the
	 * probe's and the executions' private directories, found before any wrapper runs: it
	 * is missing, not a directory, not writable, on a read-only file system, out of space
	 * or out of inodes, or mounted {@code noexec} while the launcher must be extracted to
	 * it and executed from it. The detail names the directory and which of these it is.
	 * Fallback does not help ({@link #fallbackHelps()}): an unisolated run needs its
	 * private directory too.
	 */
	WORK_DIRECTORY_UNUSABLE("the work directory (workDirectory) cannot hold the sandbox's private directories",
			"free space or inodes on its file system, or mount a writable volume (for example a Kubernetes "
					+ "emptyDir) at java.io.tmpdir, or point the work directory (workDirectory) at a writable "
					+ "directory; if it is mounted noexec, install an executable copy of the launcher and point "
					+ "launcherPath at it, or choose a work directory that allows execution",
			false),

	/**
	 * The kernel refused to create the namespaces with EPERM: Docker's default seccomp
	 * profile, a container without CAP_SYS_ADMIN, or
	 * {@code kernel.unprivileged_userns_clone=0} (Debian). bubblewrap says
	 * {@code No permissions to create new namespace, likely because the kernel does
	 * not allow non-privileged user namespaces} in each of these cases.
	 */
	KERNEL_REFUSED("the kernel refused to create the user or network namespace (EPERM): a seccomp filter "
			+ "(for example Docker's default profile), a missing capability, or unprivileged user namespaces disabled",
			"with mechanism auto the seccomp mechanism, which needs no namespace, is tried next; to get "
					+ "namespaces, enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1 on "
					+ "Debian), or run the container with a seccomp profile that allows unshare and clone with namespace "
					+ "flags"),

	/**
	 * The user namespace limit is reached or zero ({@code user.max_user_namespaces=0},
	 * ENOSPC).
	 */
	NAMESPACE_LIMIT("the user namespace limit is zero or exhausted (ENOSPC, user.max_user_namespaces)",
			"raise the limit (sysctl -w user.max_user_namespaces=15000, and persist it in /etc/sysctl.d)"),

	/**
	 * The kernel has no user namespace support (EINVAL), as on WSL1 or kernels without
	 * CONFIG_USER_NS.
	 */
	USER_NAMESPACES_UNSUPPORTED(
			"the kernel does not support user namespaces (EINVAL, for example WSL1 or "
					+ "a kernel built without CONFIG_USER_NS)",
			"run on a kernel with user and network namespaces (WSL2, a current distribution kernel) or use a VM"),

	/**
	 * The namespace was created but it got no privileges inside: writing the uid map, or
	 * configuring its loopback, was refused. Ubuntu 23.10+ does this with its AppArmor
	 * restriction of unprivileged user namespaces
	 * ({@code write failed /proc/self/uid_map}; bubblewrap:
	 * {@code setting up uid map: Permission denied} or
	 * {@code loopback: Failed RTM_NEWADDR}); so does a process whose capability bounding
	 * set was cleared.
	 */
	UID_MAP_REFUSED(
			"the user namespace was created but got no privileges inside: its uid map or its loopback "
					+ "setup was refused (Ubuntu's AppArmor restriction of unprivileged user namespaces, or a process "
					+ "without capabilities)",
			"allow user namespaces for this program with an AppArmor profile (see Ubuntu's apparmor userns "
					+ "documentation), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; in a container, "
					+ "do not drop the capability bounding set of the JVM"),

	/**
	 * The namespaces were created, but mounts in them were refused: the private mounts
	 * that hide the host's unix sockets, {@code /proc}, or the change of the root's
	 * propagation that comes first (bubblewrap: {@code Failed to make / slave},
	 * {@code Can't mount proc}; unshare:
	 * {@code cannot change root filesystem propagation}; mount(8): {@code mount: ...}).
	 * containerd's AppArmor profile under Kubernetes refuses every mount this way; so
	 * does a seccomp filter that refuses the mount calls.
	 */
	MOUNT_REFUSED(
			"the kernel or a security module refused the mounts of the sandbox's mount namespace (the private "
					+ "mounts that hide the host's unix sockets, /proc, or the root's propagation)",
			"with mechanism auto the mechanisms without a mount namespace (namespaces, seccomp) are tried next; to keep "
					+ "the mount namespace, allow mounts in user namespaces (containerd/Kubernetes: an AppArmor profile "
					+ "that allows mount, or the container's securityContext.appArmorProfile type Unconfined), and check "
					+ "that every hidden directory (hiddenDirectories) exists and is a plain directory"),

	/**
	 * An outer sandbox forbids nested user namespaces: the JVM runs in a user namespace
	 * other than the initial one and creating another one failed with ENOSPC (nesting
	 * depth, or the outer sandbox's limit: {@code bwrap --disable-userns} sets it so).
	 * The host's {@code user.max_user_namespaces} is not the cause, so raising it does
	 * not help.
	 */
	NESTING_FORBIDDEN(
			"this JVM already runs in a sandbox's user namespace, and that sandbox forbids nested user namespaces "
					+ "(ENOSPC: for example bubblewrap --disable-userns, or a container runtime's limit)",
			"with mechanism auto the seccomp mechanism, which needs no namespace, is tried next; or let the outer "
					+ "sandbox allow nested user namespaces (drop --disable-userns; raise user.max_user_namespaces "
					+ "inside it)"),

	/**
	 * The launcher could not set {@code no_new_privs} or load its seccomp filter
	 * ({@code cave-sandbox-launcher: cannot load the seccomp filter}): a kernel without
	 * {@code CONFIG_SECCOMP_FILTER}, or an outer filter that refuses {@code seccomp(2)}
	 * and {@code prctl(PR_SET_SECCOMP)}. Every mechanism needs the filter.
	 */
	SECCOMP_UNAVAILABLE(
			"cave-sandbox's launcher could not set no_new_privs or load its seccomp filter (a kernel without "
					+ "CONFIG_SECCOMP_FILTER, or an outer seccomp profile that refuses seccomp(2) or prctl)",
			"run on a kernel with seccomp filters (every current distribution kernel), and let the container's "
					+ "seccomp profile allow seccomp(2) and prctl(2), as Docker's and containerd's defaults do"),

	/**
	 * The mechanisms without a mount namespace need Landlock (landlock(7), Linux 5.13+,
	 * listed in the kernel's {@code lsm=}): without it the command could write the host's
	 * files (as root, {@code /proc/sys} too) and, where Yama does not stop it, the JVM's
	 * memory through {@code /proc/PID/mem}, which is a way out of the sandbox.
	 */
	LANDLOCK_UNAVAILABLE(
			"the mechanisms without a mount namespace (namespaces, seccomp) need Landlock to keep the command from writing "
					+ "the host's files and the JVM's memory, and this kernel has no Landlock (Linux 5.13+, enabled in "
					+ "the kernel's lsm= list)",
			"run on a kernel with Landlock enabled (CONFIG_SECURITY_LANDLOCK=y and landlock in lsm=, the default of "
					+ "current Ubuntu, Debian 12 backports, Fedora and RHEL 9 kernels), or where bubblewrap or unshare "
					+ "works (user namespaces and mounts allowed), or use a container or VM as the network boundary"),

	/**
	 * A private loopback is required ({@link SandboxSettings#loopback()}) but the
	 * mechanism cannot provide one: the seccomp mechanism and macOS have no network
	 * namespace (bwrap, unshare and namespaces bring {@code lo} up in theirs).
	 */
	PRIVATE_LOOPBACK_UNAVAILABLE(
			"a private loopback is required (loopback), but the mechanism cannot give the command a "
					+ "private loopback on this host",
			"choose a mechanism with a network namespace (bwrap, unshare or namespaces: install bubblewrap, or "
					+ "allow user namespaces), or switch the private loopback off (loopback); the seccomp mechanism "
					+ "and macOS cannot isolate a loopback"),

	/** Isolation was switched off with {@link MechanismChoice#NONE}. */
	MECHANISM_DISABLED("isolation is switched off by mechanism none",
			"choose mechanism auto (or bwrap, unshare, namespaces, seccomp, sandbox-exec) to isolate commands"),

	/**
	 * macOS refused to apply a Seatbelt profile because the process is already sandboxed
	 * ({@code sandbox-exec: sandbox_apply: Operation not permitted}, exit 71; the kernel
	 * logs {@code forbidden-sandbox-reinit}): Seatbelt sandboxes do not nest.
	 */
	NESTED_SANDBOX_REFUSED("sandbox-exec refused to apply the Seatbelt profile (sandbox_apply: Operation not "
			+ "permitted): this process already runs inside a Seatbelt sandbox, and Seatbelt sandboxes do not nest",
			"run the JVM outside the App Sandbox and outside any tool that wraps its children in sandbox-exec; "
					+ "or, if that outer sandbox already denies the network, use mode fallback"),

	/** The probe did not finish within its time limit. */
	PROBE_TIMEOUT("the isolation probe did not finish in time",
			"check that the host is not overloaded, or raise the probe timeout (probeTimeout)"),

	/**
	 * The sandbox started, but the probe could not verify what it must: that the child
	 * sees no network, its own PID and IPC namespaces, the hidden directories and no
	 * capabilities.
	 */
	NOT_VERIFIED(
			"the sandbox started but the probe could not verify that the child is isolated "
					+ "(no network, hidden host sockets)",
			"report this with the probe detail; use a container or VM as the network boundary meanwhile"),

	/** Anything else the wrapper reported; the probe detail carries its message. */
	UNKNOWN("the sandbox wrapper failed for an unrecognised reason",
			"run the wrapper by hand with the probe detail to see the failure, "
					+ "or use a container or VM as the network boundary");

	private final String description;

	private final String fix;

	private final boolean fallbackHelps;

	UnavailabilityCause(String description, String fix) {
		this(description, fix, true);
	}

	UnavailabilityCause(String description, String fix, boolean fallbackHelps) {
		this.description = description;
		this.fix = fix;
		this.fallbackHelps = fallbackHelps;
	}

	/**
	 * Return a sentence fragment that describes the cause.
	 * @return the description
	 */
	public String description() {
		return this.description;
	}

	/**
	 * Return what an operator can do about the cause.
	 * @return the fix
	 */
	public String fix() {
		return this.fix;
	}

	/**
	 * Return whether running commands unisolated ({@link SandboxMode#FALLBACK}) is a way
	 * out of this cause on a host whose other boundary (a container or VM without
	 * network) already blocks egress. {@code false} where the cause would stop an
	 * unisolated run as well, as an unusable work directory does: advice to fall back
	 * would only give up the isolation.
	 * @return whether fallback can help
	 */
	public boolean fallbackHelps() {
		return this.fallbackHelps;
	}

}
