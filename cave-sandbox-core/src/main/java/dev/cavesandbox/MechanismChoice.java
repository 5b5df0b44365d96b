package dev.cavesandbox;

/**
 * Which mechanism isolates the commands ({@link SandboxSettings#mechanism()}). Whatever
 * is chosen, the {@link NetworkIsolationProbe} verifies it on the host before anything
 * runs.
 */
public enum MechanismChoice {

	/**
	 * The strongest mechanism that the probe verifies on this host (the default): on
	 * Linux, in this order, bubblewrap, unshare, the namespaces without mounts, seccomp
	 * only; on macOS sandbox-exec.
	 */
	AUTO,

	/** bubblewrap ({@code bwrap}), Linux only. */
	BWRAP,

	/** util-linux {@code unshare} with a private mount namespace, Linux only. */
	UNSHARE,

	/**
	 * User, network, IPC and PID namespaces without a mount namespace, for hosts that
	 * allow user namespaces but refuse mounts in them (containerd's AppArmor profile
	 * under Kubernetes); host unix sockets are refused by the launcher's seccomp filter
	 * and writes are limited to the working directory by Landlock. Linux only.
	 */
	NAMESPACES,

	/**
	 * No namespaces at all, for Docker's default seccomp profile and the Kubernetes
	 * restricted Pod Security Standard: the launcher's seccomp filter refuses every
	 * address family, Landlock limits writes and keeps the command from the JVM, and the
	 * launcher, a child subreaper, kills what is left of the process tree. Linux only.
	 */
	SECCOMP,

	/** {@code sandbox-exec} with a deny-network Seatbelt profile, macOS only. */
	SANDBOX_EXEC,

	/**
	 * No isolation at all: only valid with {@link SandboxMode#FALLBACK}, for hosts where
	 * another boundary (a container or VM without network) already blocks egress; every
	 * result reports {@link Isolation#NONE}.
	 */
	NONE

}
