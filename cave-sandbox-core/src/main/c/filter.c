/* The seccomp filter in the launcher: the attempts that --check makes, REFUSALS with
 * them, loading the filters that the build's generator wrote (cave-sandbox-filters.h),
 * and --check itself. */
#include "launcher.h"

/* seccomp(2) (linux/seccomp.h). */
#define CAVE_SECCOMP_MODE_FILTER 2
#define CAVE_SECCOMP_SET_MODE_FILTER 1
#define CAVE_SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)

/* ---- the attempts that --check makes after the filter is loaded ----------------------- */

static long attempt_socket(int family)
{
	long fd = syscall(SYS_socket, family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close((int) fd);
	}
	return fd;
}

static long attempt_socket_unix_datagram(void)
{
	long fd = syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close((int) fd);
	}
	return fd;
}

/* A pair that would only be closed again. */
static long attempt_socketpair_unix_datagram(void)
{
	int pair[2];
	long result = syscall(SYS_socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair);
	if (result == 0) {
		close(pair[0]);
		close(pair[1]);
	}
	return result;
}

static long attempt_socket_inet(void)
{
	return attempt_socket(AF_INET);
}

static long attempt_socket_inet6(void)
{
	return attempt_socket(AF_INET6);
}

static long attempt_socket_netlink(void)
{
	return syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
}

static long attempt_socket_packet(void)
{
	return attempt_socket(AF_PACKET);
}

static long attempt_socket_vsock(void)
{
	/* Created and closed, never connected. */
	return attempt_socket(AF_VSOCK);
}

static long attempt_socket_vsock_high_bits(void)
{
	/* AF_VSOCK with the upper half of the register set: the kernel reads only the int. */
	return syscall(SYS_socket, 0x100000000L | AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static long attempt_io_uring_setup(void)
{
	return syscall(SYS_io_uring_setup, 0, NULL);
}

static long attempt_ptrace(void)
{
	return syscall(SYS_ptrace, PTRACE_PEEKDATA, 0, NULL, NULL);
}

static long attempt_process_vm_readv(void)
{
	return syscall(SYS_process_vm_readv, 0, NULL, 0, NULL, 0, 0);
}

static long attempt_pidfd_getfd(void)
{
	return syscall(SYS_pidfd_getfd, -1, 0, 0);
}

static long attempt_keyctl(void)
{
	return syscall(SYS_keyctl, CAVE_KEYCTL_GET_KEYRING_ID, CAVE_KEY_SPEC_SESSION_KEYRING, 0);
}

static long attempt_add_key(void)
{
	return syscall(SYS_add_key, NULL, NULL, NULL, 0, 0);
}

static long attempt_bpf(void)
{
	return syscall(SYS_bpf, -1, NULL, 0);
}

static long attempt_perf_event_open(void)
{
	return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
}

static long attempt_userfaultfd(void)
{
	return syscall(SYS_userfaultfd, ~0);
}

static long attempt_prlimit_other(void)
{
	/* Its own pid, not 0: the filter refuses any pid but 0; without it, a read of nothing. */
	return syscall(SYS_prlimit64, getpid(), RLIMIT_CORE, NULL, NULL);
}

static long attempt_setpriority_user(void)
{
	/* An invalid "which": EINVAL without the filter, nothing reniced. */
	return syscall(SYS_setpriority, 99, 0, 0);
}

static long attempt_sched_setscheduler_other(void)
{
	/* Its own pid, not 0, and no parameters: EINVAL without the filter, nothing changed. */
	return syscall(SYS_sched_setscheduler, getpid(), 0, NULL);
}

static long attempt_sched_setparam_other(void)
{
	return syscall(SYS_sched_setparam, getpid(), NULL);
}

static long attempt_sched_setattr_other(void)
{
	return syscall(SYS_sched_setattr, getpid(), NULL, 0);
}

static long attempt_sched_setaffinity_other(void)
{
	/* An empty mask: EINVAL without the filter, nothing changed. */
	return syscall(SYS_sched_setaffinity, getpid(), 0, NULL);
}

/* setsid(2) in a child: this process, a session leader, would get EPERM anyway. */
static long attempt_setsid(void)
{
	pid_t child = fork();
	if (child < 0) {
		return -1;
	}
	if (child == 0) {
		_exit((setsid() < 0) ? errno : 0);
	}
	int status;
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			return -1;
		}
	}
	errno = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
	return (errno == 0) ? 0 : -1;
}

/* An invalid pid: EINVAL without the filter (setpgid(2)). */
static long attempt_setpgid(void)
{
	return syscall(SYS_setpgid, -1, 0);
}

static long attempt_unshare_user(void)
{
	/* CLONE_PARENT is invalid for unshare(2): EINVAL without the filter. */
	return syscall(SYS_unshare, CLONE_NEWUSER | CLONE_PARENT);
}

static long attempt_clone_user(void)
{
	/* CLONE_THREAD without CLONE_SIGHAND is invalid: EINVAL without the filter. */
	return syscall(SYS_clone, CLONE_NEWUSER | CLONE_THREAD, 0, 0, 0, 0);
}

static long attempt_clone3(void)
{
	return syscall(SYS_clone3, NULL, 0);
}

static long attempt_chmod_setuid(void)
{
	return syscall(SYS_chmod, "", S_ISUID | 0755);
}

static long attempt_fchmodat_setgid(void)
{
	return syscall(SYS_fchmodat, AT_FDCWD, "", S_ISGID | 0755);
}

static long attempt_openat_setuid(void)
{
	return syscall(SYS_openat, AT_FDCWD, "", O_CREAT | O_WRONLY | O_CLOEXEC, S_ISUID | 0755);
}

static long attempt_mknodat_setuid(void)
{
	return syscall(SYS_mknodat, AT_FDCWD, "", S_IFREG | S_ISUID | 0755, 0);
}

static long attempt_openat2(void)
{
	return syscall(SYS_openat2, AT_FDCWD, "", NULL, 0);
}

/* ---- the one list -------------------------------------------------------------------- */

struct refusal {
	/* The name the probe reports, the same as in REFUSALS of the Java side. */
	const char *name;
	/* The errno the filter answers with. */
	int error;
	/* UNLESS_INET, UNLESS_USERNS, ONLY_NO_MOUNT_NAMESPACE, ONLY_NO_PID_NAMESPACE; 0: always. */
	int unless;
	/* Makes the attempt that --check reports. */
	long (*attempt)(void);
};

static const struct refusal REFUSALS[] = {
#define REFUSAL(name, error, unless, add, attempt) { name, error, unless, attempt }
#include "refusals.h"
#undef REFUSAL
};

#define REFUSAL_COUNT (sizeof REFUSALS / sizeof REFUSALS[0])

#include "cave-sandbox-filters.h"

static int applies(const struct refusal *refusal, const struct options *options)
{
	return !((refusal->unless == UNLESS_INET && options->allow_inet)
		 || (refusal->unless == UNLESS_USERNS && options->allow_userns)
		 || (refusal->unless == ONLY_NO_MOUNT_NAMESPACE && !options->no_mount_namespace)
		 || (refusal->unless == ONLY_NO_PID_NAMESPACE && !options->no_pid_namespace));
}

static void load_program(const struct cave_filter *filter)
{
	struct cave_sock_fprog program = { filter->length, filter->program };
	if (prctl(PR_SET_SECCOMP, CAVE_SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
		fail("cannot load the seccomp filter: %s", strerror(errno));
	}
}

void load_filter(const struct options *options)
{
	load_program(&FILTERS[(options->allow_inet ? 1 : 0) | (options->allow_userns ? 2 : 0)
			      | (options->no_mount_namespace ? 4 : 0) | (options->no_pid_namespace ? 8 : 0)]);
}

/*
 * Without a mount namespace, after the filter: the supervision filter with a listener
 * (SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0) that goes to the supervisor, or, where
 * there is none or the kernel gives no listener, the unix refusal filter.
 */
void supervise_unix(void)
{
	int listener = -1;
	if (supervision_prepared()) {
		const struct cave_filter *filter = &FILTERS[SUPERVISION_FILTER];
		struct cave_sock_fprog program = { filter->length, filter->program };
		listener = (int) syscall(SYS_seccomp, CAVE_SECCOMP_SET_MODE_FILTER, CAVE_SECCOMP_FILTER_FLAG_NEW_LISTENER,
					 &program);
		if (listener < 0) {
			set_supervision_unavailable("user-notification");
		}
		send_listener(listener);
	}
	if (listener < 0) {
		load_program(&FILTERS[UNIX_REFUSAL_FILTER]);
	}
}

/* In the command's process, once in the session the launcher made for it (needs
 * no_new_privs): the session filter, which refuses setsid(2) (build_session_filter). */
void load_session_filter(void)
{
	load_program(&FILTERS[SESSION_FILTER]);
}

/* The symbolic name of the errno values the check expects, else the number. */
const char *errno_name(int error, char *buffer, size_t size)
{
	switch (error) {
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case EPERM:
		return "EPERM";
	case ENOSYS:
		return "ENOSYS";
	case EINVAL:
		return "EINVAL";
	case EFAULT:
		return "EFAULT";
	case EBADF:
		return "EBADF";
	case ESRCH:
		return "ESRCH";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	default:
		snprintf(buffer, size, "errno %d", error);
		return buffer;
	}
}

void check(const struct options *options)
{
	for (size_t i = 0; i < REFUSAL_COUNT; i++) {
		const struct refusal *refusal = &REFUSALS[i];
		if (!applies(refusal, options)) {
			continue;
		}
		errno = 0;
		long result = refusal->attempt();
		int error = (result < 0) ? errno : 0;
		char number[32];
		if (result < 0 && error == refusal->error) {
			printf("refused=%s %s\n", refusal->name, errno_name(error, number, sizeof number));
		}
		else {
			printf("allowed=%s %s\n", refusal->name,
			       (result < 0) ? errno_name(error, number, sizeof number) : "succeeded");
		}
	}
	if (options->no_mount_namespace) {
		check_landlock(options);
		check_unix();
	}
	if (fflush(stdout) != 0) {
		fail("cannot write the check: %s", strerror(errno));
	}
}
