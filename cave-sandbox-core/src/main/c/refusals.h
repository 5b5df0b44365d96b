/*
 * REFUSALS: the one list of what the seccomp filter refuses, in the order that the Java
 * side's Refusals.names mirrors (LauncherContractTests compares them). Each entry is
 * REFUSAL(name, errno, unless, add, attempt): the name the probe reports; the errno the
 * filter answers with; when it applies (UNLESS_* and ONLY_* of launcher.h, 0: always);
 * the function of filter-generator.c that adds its rules (several entries may share one
 * function: the first has it); and the attempt of filter.c that --check makes after the
 * filter is loaded. Included by filter.c and by filter-generator.c, each of which
 * defines REFUSAL to keep what it needs; no include guard.
 */
	REFUSAL("socket(AF_UNIX, SOCK_DGRAM)", EAFNOSUPPORT, ONLY_NO_MOUNT_NAMESPACE, add_sockets,
		attempt_socket_unix_datagram),
	REFUSAL("socketpair(AF_UNIX, SOCK_DGRAM)", EAFNOSUPPORT, ONLY_NO_MOUNT_NAMESPACE, add_unix_datagrams,
		attempt_socketpair_unix_datagram),
	REFUSAL("socket(AF_INET)", EAFNOSUPPORT, UNLESS_INET, NULL, attempt_socket_inet),
	REFUSAL("socket(AF_INET6)", EAFNOSUPPORT, UNLESS_INET, NULL, attempt_socket_inet6),
	REFUSAL("socket(AF_NETLINK)", EAFNOSUPPORT, 0, NULL, attempt_socket_netlink),
	REFUSAL("socket(AF_PACKET)", EAFNOSUPPORT, 0, NULL, attempt_socket_packet),
	REFUSAL("socket(AF_VSOCK)", EAFNOSUPPORT, 0, NULL, attempt_socket_vsock),
	REFUSAL("socket(AF_VSOCK|1<<32)", EAFNOSUPPORT, 0, NULL, attempt_socket_vsock_high_bits),
	REFUSAL("io_uring_setup", ENOSYS, 0, add_io_uring, attempt_io_uring_setup),
	REFUSAL("ptrace", EPERM, 0, add_ptrace, attempt_ptrace),
	REFUSAL("process_vm_readv", EPERM, 0, add_process_vm, attempt_process_vm_readv),
	REFUSAL("pidfd_getfd", EPERM, 0, add_pidfd_getfd, attempt_pidfd_getfd),
	REFUSAL("keyctl", EPERM, 0, add_keys, attempt_keyctl),
	REFUSAL("add_key", EPERM, 0, NULL, attempt_add_key),
	REFUSAL("bpf", EPERM, 0, add_bpf, attempt_bpf),
	REFUSAL("perf_event_open", EPERM, 0, NULL, attempt_perf_event_open),
	REFUSAL("userfaultfd", EPERM, 0, NULL, attempt_userfaultfd),
	REFUSAL("prlimit64(pid)", EPERM, 0, add_other_processes, attempt_prlimit_other),
	REFUSAL("setpriority(PRIO_USER)", EPERM, 0, NULL, attempt_setpriority_user),
	REFUSAL("sched_setscheduler(pid)", EPERM, 0, NULL, attempt_sched_setscheduler_other),
	REFUSAL("sched_setparam(pid)", EPERM, 0, NULL, attempt_sched_setparam_other),
	REFUSAL("sched_setattr(pid)", EPERM, 0, NULL, attempt_sched_setattr_other),
	REFUSAL("sched_setaffinity(pid)", EPERM, ONLY_NO_PID_NAMESPACE, NULL, attempt_sched_setaffinity_other),
	REFUSAL("setsid", EPERM, 0, add_process_group, attempt_setsid),
	REFUSAL("setpgid", EPERM, ONLY_NO_PID_NAMESPACE, NULL, attempt_setpgid),
	REFUSAL("unshare(CLONE_NEWUSER)", EPERM, UNLESS_USERNS, add_user_namespaces, attempt_unshare_user),
	REFUSAL("clone(CLONE_NEWUSER)", EPERM, UNLESS_USERNS, NULL, attempt_clone_user),
	REFUSAL("clone3", ENOSYS, UNLESS_USERNS, NULL, attempt_clone3),
	REFUSAL("chmod(S_ISUID)", EPERM, 0, add_setuid_modes, attempt_chmod_setuid),
	REFUSAL("fchmodat(S_ISGID)", EPERM, 0, NULL, attempt_fchmodat_setgid),
	REFUSAL("openat(O_CREAT, S_ISUID)", EPERM, 0, NULL, attempt_openat_setuid),
	REFUSAL("mknodat(S_ISUID)", EPERM, 0, NULL, attempt_mknodat_setuid),
	REFUSAL("openat2", ENOSYS, 0, NULL, attempt_openat2),
