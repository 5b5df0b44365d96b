package dev.cavesandbox.internal.launcher;

import java.util.ArrayList;
import java.util.List;

/**
 * What the launcher's seccomp filter refuses, by the names its {@code --check} reports,
 * in its order: {@code REFUSALS} in {@code src/main/c/refusals.h}, which the probe checks
 * line by line.
 */
final class Refusals {

	private Refusals() {
	}

	/**
	 * Return what the filter refuses under these conditions.
	 * @param loopback whether the command has a private loopback (then {@code AF_INET}
	 * and {@code AF_INET6} sockets are allowed)
	 * @param noMountNamespace whether the launcher runs with {@code --no-mount-namespace}
	 * (then unix datagram sockets, {@code socket(AF_UNIX, SOCK_DGRAM)} and
	 * {@code socketpair(AF_UNIX, SOCK_DGRAM)}, come first; the launcher supervises the
	 * stream sockets' {@code connect(2)} and {@code bind(2)})
	 * @param noPidNamespace whether the command has no PID namespace
	 * ({@value LauncherContract#CONTAIN}): then {@code sched_setaffinity(pid)} is refused
	 * (the command would see the JVM) and {@code setpgid} too, so that the command's
	 * whole tree stays in its process group, which {@value LauncherContract#CONTAIN}
	 * kills at once ({@code setsid} is refused on every mechanism: the whole tree stays
	 * in one session, so in one scheduler autogroup)
	 * @param userNamespaces whether the command may create user namespaces of its own
	 * @return the names, in the launcher's order
	 */
	static List<String> names(boolean loopback, boolean noMountNamespace, boolean noPidNamespace,
			boolean userNamespaces) {
		List<String> names = new ArrayList<>();
		if (noMountNamespace) {
			names.addAll(List.of("socket(AF_UNIX, SOCK_DGRAM)", "socketpair(AF_UNIX, SOCK_DGRAM)"));
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
		if (!userNamespaces) {
			names.addAll(List.of("unshare(CLONE_NEWUSER)", "clone(CLONE_NEWUSER)", "clone3"));
		}
		names.addAll(List.of("chmod(S_ISUID)", "fchmodat(S_ISGID)", "openat(O_CREAT, S_ISUID)", "mknodat(S_ISUID)",
				"openat2"));
		return names;
	}

}
