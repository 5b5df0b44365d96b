package dev.cavesandbox;

/**
 * Which mechanism isolates the commands ({@link SandboxSettings#mechanism()}). Whatever
 * is chosen, the {@link NetworkIsolationProbe} verifies it on the host before anything
 * runs.
 */
public enum MechanismChoice {

	/**
	 * The strongest mechanism that the probe verifies on this host: on Linux bubblewrap,
	 * else unshare; on macOS sandbox-exec (the default).
	 */
	AUTO,

	/** bubblewrap ({@code bwrap}), Linux only. */
	BWRAP,

	/** util-linux {@code unshare} with a private mount namespace, Linux only. */
	UNSHARE,

	/** {@code sandbox-exec} with a deny-network Seatbelt profile, macOS only. */
	SANDBOX_EXEC,

	/**
	 * No isolation at all: only valid with {@link SandboxMode#FALLBACK}, for hosts where
	 * another boundary (a container or VM without network) already blocks egress; every
	 * result reports {@link Isolation#NONE}.
	 */
	NONE

}
