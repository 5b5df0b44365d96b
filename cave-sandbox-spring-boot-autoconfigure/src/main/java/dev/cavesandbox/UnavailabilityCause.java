package dev.cavesandbox;

/**
 * Why OS-level network isolation is unavailable on a host, as detected by the
 * {@link NetworkIsolationProbe}. A closed set: each constant names the cause and the fix that
 * applies to it. Every cause also allows the general remedies: use a container or VM as the
 * boundary, or accept unisolated runs with {@code cave.sandbox.mode=fallback}.
 */
public enum UnavailabilityCause {

	/** The operating system has no primitive that cave-sandbox supports (Windows, BSD, ...). */
	UNSUPPORTED_OS("this operating system has no network-isolation primitive that cave-sandbox supports",
			"run on Linux (network namespaces through util-linux unshare) or macOS (sandbox-exec), "
					+ "or use a container or VM as the network boundary"),

	/** The wrapper binary (unshare, setpriv) does not exist at the configured path. */
	BINARY_MISSING("the sandbox wrapper binary does not exist",
			"install util-linux (Debian/Ubuntu: apt-get install util-linux; Alpine: apk add util-linux-misc setpriv) "
					+ "or point cave.sandbox.linux.unshare-path / cave.sandbox.linux.setpriv-path at the binaries"),

	/** The wrapper binary exists but cannot be executed (error=13, Permission denied). */
	BINARY_NOT_EXECUTABLE("the sandbox wrapper binary is not executable",
			"make the binary executable for the user that runs the JVM (chmod a+x), or point "
					+ "cave.sandbox.linux.unshare-path at one that is"),

	/**
	 * The kernel refused to create the namespaces with EPERM: Docker's default seccomp profile, a
	 * container without CAP_SYS_ADMIN, or {@code kernel.unprivileged_userns_clone=0} (Debian).
	 */
	KERNEL_REFUSED("the kernel refused to create the user or network namespace (EPERM): a seccomp filter "
			+ "(for example Docker's default profile), a missing capability, or unprivileged user namespaces disabled",
			"enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1 on Debian), "
					+ "or run the container with a seccomp profile that allows unshare and clone with namespace flags, "
					+ "or use the container or VM itself as the network boundary"),

	/** The user namespace limit is reached or zero ({@code user.max_user_namespaces=0}, ENOSPC). */
	NAMESPACE_LIMIT("the user namespace limit is zero or exhausted (ENOSPC, user.max_user_namespaces)",
			"raise the limit (sysctl -w user.max_user_namespaces=15000, and persist it in /etc/sysctl.d)"),

	/** The kernel has no user namespace support (EINVAL), as on WSL1 or kernels without CONFIG_USER_NS. */
	USER_NAMESPACES_UNSUPPORTED("the kernel does not support user namespaces (EINVAL, for example WSL1 or "
			+ "a kernel built without CONFIG_USER_NS)",
			"run on a kernel with user and network namespaces (WSL2, a current distribution kernel) or use a VM"),

	/**
	 * The namespace was created but writing the uid map was refused, as Ubuntu 23.10+ does with its
	 * AppArmor restriction of unprivileged user namespaces.
	 */
	UID_MAP_REFUSED("the user namespace was created but its uid map was refused (Ubuntu's AppArmor restriction "
			+ "of unprivileged user namespaces)",
			"allow user namespaces for this program with an AppArmor profile (see Ubuntu's apparmor userns "
					+ "documentation), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),

	/** macOS refused to apply a Seatbelt profile because the process is already sandboxed. */
	NESTED_SANDBOX_REFUSED("sandbox-exec refused to apply the Seatbelt profile (sandbox_apply: Operation not "
			+ "permitted): this process already runs inside a sandbox",
			"run the JVM outside the App Sandbox or another sandbox-exec profile"),

	/** The probe did not finish within its time limit. */
	PROBE_TIMEOUT("the isolation probe did not finish in time",
			"check that the host is not overloaded, or raise cave.sandbox.probe-timeout"),

	/** The sandbox started, but the child could still see a network: isolation was not verified. */
	NOT_VERIFIED("the sandbox started but the probe could not verify that the child sees no network",
			"report this with the probe detail; use a container or VM as the network boundary meanwhile"),

	/** Anything else the wrapper reported; the probe detail carries its message. */
	UNKNOWN("the sandbox wrapper failed for an unrecognised reason",
			"run the wrapper by hand with the probe detail to see the failure, "
					+ "or use a container or VM as the network boundary");

	private final String description;

	private final String fix;

	UnavailabilityCause(String description, String fix) {
		this.description = description;
		this.fix = fix;
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

}
