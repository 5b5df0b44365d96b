package dev.cavesandbox.internal.mechanism;

/**
 * A Linux namespace that a mechanism gives the command (namespaces(7)), besides the user
 * namespace that every namespaced mechanism creates to own the others. Each one the
 * mechanism claims is verified by the probe; each one it does not give is named in the
 * probe's facts, with what stands in for it.
 */
public enum LinuxNamespace {

	/**
	 * A network namespace (network_namespaces(7)): only {@code lo}, no route to the
	 * host's interfaces, and the host's abstract unix sockets out of reach.
	 */
	NETWORK,

	/**
	 * A PID namespace (pid_namespaces(7)): the command sees only its own processes, and
	 * the kernel kills every process left in it when its init exits.
	 */
	PID,

	/**
	 * An IPC namespace (ipc_namespaces(7)): the host's System V IPC objects and POSIX
	 * message queues are out of reach.
	 */
	IPC,

	/**
	 * A mount namespace (mount_namespaces(7)): the hidden directories become private
	 * tmpfs mounts (the host's unix sockets under them unreachable), the root can be
	 * read-only, and {@code /proc} shows only the sandbox's processes.
	 */
	MOUNT

}
