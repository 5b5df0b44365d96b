/*
 * cave-sandbox-filter-generator: the build's filter generator (gcc, glibc, libseccomp;
 * with fail.c). It builds the seccomp filter of each combination of the options that
 * REFUSALS (refusals.h) depends on with libseccomp, and writes the BPF programs that
 * libseccomp exports as a C header, cave-sandbox-filters.h, which the launcher's
 * filter.c includes.
 */
#include "launcher.h"

#include <seccomp.h>

/* Newer than the headers of the oldest supported build hosts; the same on every arch. */
#define NR_FCHMODAT2 452

/* ---- the seccomp filter ------------------------------------------------------------ */

/* Add one rule for a system call by name; a call this architecture lacks is skipped. */
static void rule(scmp_filter_ctx filter, uint32_t action, int call, unsigned int count,
		 const struct scmp_arg_cmp *comparisons)
{
	if (call == __NR_SCMP_ERROR || call < 0) {
		return;
	}
	int error = seccomp_rule_add_array(filter, action, call, count, comparisons);
	if (error != 0) {
		fail("cannot add a seccomp rule for system call %d: %s", call, strerror(-error));
	}
}

static void refuse(scmp_filter_ctx filter, int error, const char *name)
{
	rule(filter, SCMP_ACT_ERRNO(error), seccomp_syscall_resolve_name(name), 0, NULL);
}

/* Refuse a call whose mode argument (argument number `argument`) has the given bit. */
static void refuse_mode_bit(scmp_filter_ctx filter, int call, unsigned int argument, mode_t bit)
{
	struct scmp_arg_cmp comparison = SCMP_CMP(argument, SCMP_CMP_MASKED_EQ, bit, bit);
	rule(filter, SCMP_ACT_ERRNO(EPERM), call, 1, &comparison);
}

/* Refuse call (socket(2), socketpair(2)) for AF_UNIX of any type but SOCK_STREAM and
 * SOCK_SEQPACKET (add_unix_datagrams says why). */
static void unix_types(scmp_filter_ctx filter, int call)
{
	for (uint64_t type = 0; type <= 0xf; type++) {
		if (type != SOCK_STREAM && type != SOCK_SEQPACKET) {
			struct scmp_arg_cmp unix_type[2] = { SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_UNIX),
							     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xfULL, type) };
			rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), call, 2, unix_type);
		}
	}
}

static void add_sockets(scmp_filter_ctx filter, const struct options *options)
{
	/*
	 * socket(2) for every address family but AF_UNIX (and AF_INET, AF_INET6 when the
	 * command has a private loopback): AF_VSOCK, AF_NETLINK, AF_PACKET, AF_BLUETOOTH, ...
	 * are not confined by the network namespace in the same way (AF_VSOCK reaches the
	 * hypervisor), and nothing the command needs uses them. The family is compared as
	 * 32 bits: the kernel ignores the upper half of the register, so must the filter.
	 * Without a mount namespace, AF_UNIX only of SOCK_STREAM and SOCK_SEQPACKET, whose
	 * only way to a peer is connect(2), which the supervision filter hands to the
	 * supervisor (supervisor.c): nothing hides the host's sockets (/run/docker.sock,
	 * D-Bus, abstract names). Where there is no supervisor the command's process stacks
	 * the unix refusal filter, which refuses socket(AF_UNIX) altogether.
	 */
	if (options->no_mount_namespace) {
		unix_types(filter, SCMP_SYS(socket));
	}
	if (!options->allow_inet) {
		struct scmp_arg_cmp other = SCMP_A0_32(SCMP_CMP_NE, AF_UNIX);
		rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, &other);
		return;
	}
	/* libseccomp takes one comparison per argument and rule: one rule per family the
	 * kernel knows (it refuses those from AF_MAX up itself), compared on the low 32 bits. */
	for (uint64_t family = 0; family < 64; family++) {
		if (family != AF_UNIX && family != AF_INET && family != AF_INET6) {
			struct scmp_arg_cmp this = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, family);
			rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, &this);
		}
	}
}

/*
 * Without a mount namespace, unix sockets of every type but SOCK_STREAM and SOCK_SEQPACKET
 * (socketpair(2) here; socket(2) by add_sockets). A datagram socket takes a destination
 * with each sendto(2) and sendmsg(2), even when it is connected, and can be connected
 * again to any path (net/unix/af_unix.c unix_dgram_sendmsg, unix_dgram_connect): a pair
 * made by socketpair(2) reached the host's pathname datagram sockets (/run/systemd/
 * journal/socket, /dev/log), which Landlock does not control. A stream socket refuses a
 * destination (unix_stream_sendmsg: EISCONN or EOPNOTSUPP) and a seqpacket socket ignores
 * it once connected (unix_seqpacket_sendmsg: ENOTCONN unless connected, then msg_namelen
 * set to 0), so their only way to a peer is connect(2). The type is compared with the
 * flags SOCK_NONBLOCK and SOCK_CLOEXEC masked off (SOCK_TYPE_MASK, 0xf, as
 * __sys_socketpair does); SOCK_RAW, which unix_create turns into SOCK_DGRAM, and every
 * other type are refused too, the family as 32 bits like add_sockets.
 */
static void add_unix_datagrams(scmp_filter_ctx filter, const struct options *options)
{
	if (!options->no_mount_namespace) {
		return;
	}
	unix_types(filter, SCMP_SYS(socketpair));
}

static void add_io_uring(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* io_uring performs system calls the filter never sees (socket, openat, ...). */
	refuse(filter, ENOSYS, "io_uring_setup");
	refuse(filter, ENOSYS, "io_uring_enter");
	refuse(filter, ENOSYS, "io_uring_register");
}

static void add_ptrace(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* ptrace(2) of PID 1 or another process of the same uid could clear its
	 * parent-death signal or run code outside this filter. */
	refuse(filter, EPERM, "ptrace");
}

static void add_process_vm(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* Reading or writing another process's memory, the same reach as ptrace(2). */
	refuse(filter, EPERM, "process_vm_readv");
	refuse(filter, EPERM, "process_vm_writev");
}

static void add_pidfd_getfd(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* Copying a descriptor out of another process (the wrapper's, PID 1's). */
	refuse(filter, EPERM, "pidfd_getfd");
}

static void add_keys(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* Keyrings are not namespaced: the JVM's user and session keyrings would be
	 * readable, and keys planted there outlive the execution. */
	refuse(filter, EPERM, "keyctl");
	refuse(filter, EPERM, "add_key");
	refuse(filter, EPERM, "request_key");
}

static void add_bpf(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* Kernel attack surface that no converter or script needs. */
	refuse(filter, EPERM, "bpf");
	refuse(filter, EPERM, "perf_event_open");
	refuse(filter, EPERM, "userfaultfd");
}

static void add_other_processes(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* The resource limits and the priority of another process need only the same uid,
	 * no ptrace access (getrlimit(2), setpriority(2), ioprio_set(2)): without a PID
	 * namespace that reaches the JVM and the launcher above the command (a zero
	 * RLIMIT_NOFILE would stop it from killing the command's tree; PRIO_USER renices
	 * every process of the uid). Only the caller itself (0) may be named. */
	struct scmp_arg_cmp other = SCMP_A0_32(SCMP_CMP_NE, 0);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1, &other);
	struct scmp_arg_cmp not_process = SCMP_A0_32(SCMP_CMP_NE, 0 /* PRIO_PROCESS */);
	struct scmp_arg_cmp not_self = SCMP_A1_32(SCMP_CMP_NE, 0);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpriority), 1, &not_process);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpriority), 1, &not_self);
	struct scmp_arg_cmp not_io_process = SCMP_A0_32(SCMP_CMP_NE, 1 /* IOPRIO_WHO_PROCESS */);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioprio_set), 1, &not_io_process);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioprio_set), 1, &not_self);
	/* The scheduling policy and its parameters, by the same rule (sched_setscheduler(2),
	 * sched_setattr(2)): SCHED_IDLE on the JVM would starve it as surely as a nice value.
	 * Only the calling thread (0) may be named, so a program that sets another of its
	 * own threads' policy by thread id (pthread_setschedparam(3)) gets EPERM, as it does
	 * without CAP_SYS_NICE for a real-time policy. */
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setscheduler), 1, &other);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setparam), 1, &other);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setattr), 1, &other);
	if (!options->no_pid_namespace) {
		return;
	}
	/* The CPU affinity by the same rule where the command sees the processes above it (no
	 * PID namespace): sched_setaffinity(2) needs only the same uid, so a command of a JVM
	 * of its own user pinned the JVM's threads to one CPU crowded by its spinners, and the
	 * teardown came late (issue 26). A thread that pins itself by its thread id
	 * (pthread_setaffinity_np(3)) gets EPERM too, as in a cpuset that refuses the CPU;
	 * sched_setaffinity(0, ...) (taskset(1) starting a command) stays allowed. */
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setaffinity), 1, &other);
}

static void add_user_namespaces(scmp_filter_ctx filter, const struct options *options)
{
	if (options->allow_userns) {
		return;
	}
	/* A new user namespace gives the command every capability over new network and
	 * mount namespaces: kernel attack surface, and a way round the mounts that hide
	 * the host's sockets where a mechanism relies on them. clone3(2) passes its flags in
	 * memory the filter cannot read: ENOSYS makes the C library fall back to clone(2). */
	struct scmp_arg_cmp user = SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, &user);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &user);
	refuse(filter, ENOSYS, "clone3");
}

/*
 * setsid(2) is refused on every mechanism; with a PID namespace by the session filter
 * (build_session_filter), which the command's process stacks once it is in the session
 * the launcher made for it, as init's PID 1, filtered before it forks the command, must
 * not refuse it to that child.
 */
static void add_process_group(scmp_filter_ctx filter, const struct options *options)
{
	if (!options->no_pid_namespace) {
		return;
	}
	/* Without a PID namespace, the command's process group is its tree: contain ends it
	 * with one kill(-group, SIGKILL), which the kernel makes atomic with respect to
	 * fork (kernel/fork.c copy_process: a fork that a group signal overtakes fails and
	 * is restarted, so no child is born outside the signal). A process may leave its
	 * group only by setsid(2) or setpgid(2) (credentials(7)). */
	refuse(filter, EPERM, "setsid");
	refuse(filter, EPERM, "setpgid");
}

static void add_setuid_modes(scmp_filter_ctx filter, const struct options *options)
{
	(void) options;
	/* A set-user-ID or set-group-ID file left in a persistent working directory would
	 * run with the JVM user's identity (root's, for a root JVM) for whoever reaches it.
	 * openat2(2) passes its mode in memory the filter cannot read. */
	static const mode_t bits[] = { S_ISUID, S_ISGID };
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
		refuse_mode_bit(filter, SCMP_SYS(chmod), 1, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(fchmod), 1, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(fchmodat), 2, bits[i]);
		refuse_mode_bit(filter, NR_FCHMODAT2, 2, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(open), 2, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(openat), 3, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(creat), 1, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(mknod), 1, bits[i]);
		refuse_mode_bit(filter, SCMP_SYS(mknodat), 2, bits[i]);
	}
	refuse(filter, ENOSYS, "openat2");
}

/* The function that adds the rules of each entry of REFUSALS, in its order; NULL for
 * the entries whose rules an earlier entry's function adds. */
static void (*const ADDERS[])(scmp_filter_ctx, const struct options *) = {
#define REFUSAL(name, error, unless, add, attempt) add
#include "refusals.h"
#undef REFUSAL
};

/*
 * An empty filter that allows everything of the native architecture and kills a process
 * that makes a call of another (int 0x80 on x86_64): the rules were written for the
 * native one only. Its system calls are laid out as a binary tree of their numbers
 * (SCMP_FLTATR_CTL_OPTIMIZE 2, libseccomp 2.5) instead of one chain: the same rules and
 * actions, but each loading of the filter costs less, as the kernel runs the filter for
 * every system-call number of both of its x86_64 architectures to fill its action cache
 * (seccomp_cache_prepare, Linux 5.11), which walked the whole chain for every call the
 * filter allows (contain's variant: 89 microseconds per prctl(2) as a chain, 43 as a
 * tree, on a 2-core x86_64 VM, Linux 6.18); every call the cache does not let through is
 * decided in fewer steps too. An older libseccomp, which does not know the attribute,
 * keeps the chain.
 */
static scmp_filter_ctx new_filter(void)
{
	scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
	if (filter == NULL) {
		fail("cannot create a seccomp filter");
	}
	if (seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) {
		fail("cannot make foreign system-call architectures fatal");
	}
	(void) seccomp_attr_set(filter, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	return filter;
}

/* Build the filter of one combination of options with libseccomp. */
static scmp_filter_ctx build_filter(const struct options *options)
{
	scmp_filter_ctx filter = new_filter();
	for (size_t i = 0; i < sizeof ADDERS / sizeof ADDERS[0]; i++) {
		if (ADDERS[i] != NULL) {
			ADDERS[i](filter, options);
		}
	}
	return filter;
}

/*
 * The session filter: setsid(2) refused with EPERM, stacked on the filter of a mechanism with
 * a PID namespace by the command's process once it has its session. The scheduler gives
 * each session of a host's root CPU group an autogroup of its own, with one session's
 * share of the CPU however many processes it has (sched(7), "The autogroup feature"): a
 * tree whose processes each took a session took hundreds of shares, and the processes
 * that tear the sandbox down (outer, the wrapper, PID 1, whose exit kills the namespace)
 * got one share in hundreds (issue 26). In one session, the whole tree has one share.
 */
static scmp_filter_ctx build_session_filter(void)
{
	scmp_filter_ctx filter = new_filter();
	refuse(filter, EPERM, "setsid");
	return filter;
}

/*
 * The supervision filter, stacked by the command's process without a mount namespace with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER: connect(2) and bind(2) wait for the supervisor's
 * answer (SECCOMP_RET_USER_NOTIF, seccomp_unotify(2); ENOSYS once the supervisor is gone).
 * Nothing else: the kernel's action cache lets every other call through without running
 * it (seccomp_cache_prepare, Linux 5.11).
 */
static scmp_filter_ctx build_supervision_filter(void)
{
	scmp_filter_ctx filter = new_filter();
	rule(filter, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0, NULL);
	rule(filter, SCMP_ACT_NOTIFY, SCMP_SYS(bind), 0, NULL);
	return filter;
}

/* Where the command's process has no supervisor: socket(AF_UNIX) refused, as before. */
static scmp_filter_ctx build_unix_refusal_filter(void)
{
	scmp_filter_ctx filter = new_filter();
	struct scmp_arg_cmp unix_family = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_UNIX);
	rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, &unix_family);
	return filter;
}

/* Write the BPF program of one variant (the filter of a combination of options, or the
 * session filter) as the array FILTER_<variant>. */
static void write_filter(FILE *out, int variant)
{
	struct options options = { .allow_inet = variant & 1,
				   .allow_userns = (variant & 2) != 0,
				   .no_mount_namespace = (variant & 4) != 0,
				   .no_pid_namespace = (variant & 8) != 0,
				   .command_user = -1 };
	scmp_filter_ctx filter = (variant == SESSION_FILTER)	    ? build_session_filter()
				 : (variant == SUPERVISION_FILTER)  ? build_supervision_filter()
				 : (variant == UNIX_REFUSAL_FILTER) ? build_unix_refusal_filter()
								    : build_filter(&options);
	FILE *bpf = tmpfile();
	if (bpf == NULL) {
		fail("cannot create a temporary file: %s", strerror(errno));
	}
	int error = seccomp_export_bpf(filter, fileno(bpf));
	seccomp_release(filter);
	if (error != 0) {
		fail("cannot export the seccomp filter: %s", strerror(-error));
	}
	if (lseek(fileno(bpf), 0, SEEK_SET) != 0) {
		fail("cannot read the exported filter back: %s", strerror(errno));
	}
	fprintf(out, "static const struct cave_sock_filter FILTER_%d[] = {\n", variant);
	struct cave_sock_filter instruction;
	ssize_t length;
	int count = 0;
	while ((length = read(fileno(bpf), &instruction, sizeof instruction)) == (ssize_t) sizeof instruction) {
		fprintf(out, "\t{ 0x%04x, %u, %u, 0x%08x },\n", instruction.code, instruction.jt, instruction.jf,
			instruction.k);
		count++;
	}
	if (length != 0 || count == 0) {
		fail("the exported filter is not a whole number of instructions");
	}
	fprintf(out, "};\n\n");
	fclose(bpf);
}

/*
 * The build's filter generator: writes the BPF program that libseccomp exports for each
 * combination of --allow-inet, --allow-userns, --no-mount-namespace and contain's
 * missing PID namespace as a C header, for the launcher.
 */
int main(int argc, char **argv)
{
	if (argc != 2) {
		fail("usage: cave-sandbox-filter-generator OUTPUT.h");
	}
	FILE *out = fopen(argv[1], "w");
	if (out == NULL) {
		fail("cannot create %s: %s", argv[1], strerror(errno));
	}
	const struct scmp_version *version = seccomp_version();
	/* It names cave-sandbox-launcher.c, where REFUSALS was before the launcher was split into
	 * files: kept so that the header stayed the same, byte for byte, across the split. */
	fprintf(out, "/* The launcher's seccomp filters, exported by libseccomp %u.%u.%u from REFUSALS in "
		     "cave-sandbox-launcher.c by its filter generator: do not edit. */\n\n",
		version->major, version->minor, version->micro);
	for (int variant = 0; variant < FILTER_COUNT; variant++) {
		write_filter(out, variant);
	}
	fprintf(out, "struct cave_filter {\n\tconst struct cave_sock_filter *program;\n\tunsigned short length;\n};\n\n");
	fprintf(out, "/* Indexed by (allow_inet ? 1 : 0) | (allow_userns ? 2 : 0) | (no_mount_namespace ? 4 : 0) "
		     "| (no_pid_namespace ? 8 : 0); then the session, supervision and unix refusal filters. */\n");
	fprintf(out, "static const struct cave_filter FILTERS[%d] = {\n", FILTER_COUNT);
	for (int variant = 0; variant < FILTER_COUNT; variant++) {
		fprintf(out, "\t{ FILTER_%d, sizeof FILTER_%d / sizeof FILTER_%d[0] },\n", variant, variant, variant);
	}
	fprintf(out, "};\n");
	if (fclose(out) != 0) {
		fail("cannot write %s: %s", argv[1], strerror(errno));
	}
	return 0;
}
