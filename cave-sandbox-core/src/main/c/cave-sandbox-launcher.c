/*
 * cave-sandbox-launcher: the last step before a sandboxed command, and the first step
 * before the wrapper (bwrap, or setpriv + unshare). Linux only.
 *
 *   cave-sandbox-launcher --version
 *   cave-sandbox-launcher outer --workdir DIR [--listed PATH]... [--egress DIR] [--command-user UID] -- WRAPPER ARGS...
 *   cave-sandbox-launcher pid1 -- ARGS...
 *   cave-sandbox-launcher init [--allow-inet [--egress-port PORT]] [--allow-userns] [--check] [LIMITS] -- CMD ARGS...
 *   cave-sandbox-launcher exec [OPTIONS] [--egress-port PORT] [LIMITS] -- CMD ARGS...
 *   cave-sandbox-launcher contain [OPTIONS] [--command-group GID] [LIMITS] -- CMD ARGS...
 *   OPTIONS: --allow-inet --allow-userns --check --no-mount-namespace --command-user UID
 *   VIEW (exec and contain with --no-mount-namespace): --read PATH --mask PATH --write PATH
 *   LIMITS: --limit-memory BYTES --limit-processes N --limit-cpu SECONDS
 *           --limit-file-size BYTES --limit-open-files N
 *
 * outer (in the host, before the wrapper): opens DIR without following any symbolic link
 * (openat2(2) RESOLVE_NO_SYMLINKS; component by component with O_NOFOLLOW where openat2
 * is missing) as fd 3, makes it the working directory, opens this executable as fd 4 and
 * the write end of a start pipe as fd 5, exports CAVE_SANDBOX_WORKDIR=<st_dev>:<st_ino>,
 * and runs WRAPPER as its child, with SIGTERM ignored (the executor's SIGTERM is for the
 * command; the wrapper, which would take the sandbox down at once, gets its SIGKILL). The
 * wrapper binds fd 3 (bwrap --bind-fd) or the working directory (mount --bind .), never
 * the path again, so that a path swapped for a symbolic link after the JVM checked it
 * cannot win, and runs /proc/self/fd/4 inside the sandbox. outer exits with the wrapper's
 * status, or with 125 when the wrapper ended before the inside launcher wrote its start
 * byte: then the sandbox was not set up and the command never ran, whatever the wrapper's
 * own exit code.
 *
 * --listed PATH (outer, repeatable: the readable and writable paths of a filesystem view
 * that the wrapper mounts, in the order it mounts them): each PATH, absolute and
 * normalized, is opened the same way as DIR (O_PATH, no symbolic link in any component)
 * and must be a directory or a regular file; the i-th (from 0) is placed at descriptor
 * LISTED_FD + i, inheritable, before the start pipe. The wrapper binds the descriptor
 * (bwrap --bind-fd / --ro-bind-fd N, mount --rbind /proc/self/fd/N), never the path, so a
 * component swapped for a link after the JVM resolved the path makes outer refuse
 * instead of binding where the link points. init, exec and contain close them with every
 * other descriptor from 3 up.
 *
 * --egress DIR (outer) and --egress-port PORT (init and exec, with --allow-inet): the
 * egress bridge of an allow-list (the JVM's egress proxy serves the unix socket
 * DIR/egress.sock). outer opens DIR like the working directory, without following links,
 * at descriptor EGRESS_FD; inside, after no_new_privs and before Landlock and the filter,
 * the launcher listens on 127.0.0.1:PORT of the sandbox's own network namespace and
 * starts the bridge (start_bridge), which relays each connection to that socket through
 * the descriptor. A port it cannot listen on is a set-up failure.
 *
 * init (PID 1 of bwrap's PID namespace, bwrap --as-pid-1) and exec (the last step under
 * unshare): close every descriptor from 3 up but the start pipe, check that the working
 * directory is still the one outer opened and is the wrapper's writable nosuid,nodev
 * bind of it, drop every capability, set no_new_privs, join a new anonymous
 * session keyring, load the seccomp filter below, write the start byte, then run the
 * command with default
 * signal dispositions and an empty signal mask. init forks the command, stays PID 1
 * (not dumpable, filtered like the command, so that the command can neither ptrace it
 * nor write its memory through /proc), reaps every orphan and exits with the command's
 * status, 128 + n if it died of signal n. exec replaces itself with the command. The
 * command's process, once in the session the launcher made for it (init's child after its
 * setsid, exec), stacks the session filter, which refuses setsid(2) on every rung
 * (build_session_filter), and only then runs --check.
 *
 * --no-mount-namespace (the rungs without a mount namespace, which would hide the host's
 * sockets and files): the filter also refuses socket(AF_UNIX) (socketpair(2) stays
 * allowed), the working-directory check keeps the device:inode comparison but there is
 * no bind to check, and after no_new_privs the command process confines itself with
 * Landlock where the kernel has it (restrict_by_landlock below, landlock(7)).
 *
 * VIEW (the filesystem view of those rungs, enforced by the same Landlock ruleset; each
 * PATH absolute and normalized, opened without following a symbolic link in any
 * component, so that a path swapped for a link after the JVM resolved it fails instead
 * of widening the view): --write PATH may be written beneath, like the working
 * directory. --read PATH (a "system" view) makes the ruleset handle reading and
 * executing too: the command may then read only beneath the working directory, the read
 * paths, the write paths, /proc and the device files (restrict_by_landlock). --mask PATH
 * names a path inside a read path that gets no rule: Landlock only allows, so a read path
 * with a masked path beneath it gets a rule for each of its entries instead, recursively
 * along the masked path's ancestors only (/etc becomes each entry of /etc but shadow,
 * ..., and each entry of /etc/ssl but private); such an expanded directory cannot be
 * listed itself, as READ_DIR on it would reach the masked directories too. Without
 * --read reading stays as the host allows it (the host view). A view that needs Landlock
 * on a kernel without it is a set-up failure, but under --check, which reports
 * landlock=unavailable for the probe to judge.
 *
 * pid1 (PID 1 of unshare's PID namespace, exec'd by the rung's set-up script, in a user
 * namespace of its own that maps no root, so that its /proc files belong to the host's
 * root): forks ARGS in a session of its own, keeps no descriptor above 2, reaps orphans
 * and exits with ARGS's status (see pid1()).
 *
 * Every mode but --version makes itself non-dumpable first (prctl(2) PR_SET_DUMPABLE), so
 * that the command, which may share its uid, never reads a descriptor, the working
 * directory or the memory of a process of the sandbox's own through /proc.
 *
 * contain (the seccomp rung, no namespaces at all: outer's wrapper, run as
 * /proc/self/fd/4): becomes a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), asks
 * for SIGHUP when outer dies, and forks the command, which makes a session of its own and
 * does the set-up of exec and writes the start byte. Its filter refuses setsid(2) and
 * setpgid(2), so that every process of the command's tree stays in the command's process
 * group. When the command exits, or on SIGHUP or SIGINT, contain kills that group with
 * one SIGKILL, which no fork can outrun (end_tree), reaps until it has no child left, and
 * exits with the command's status.
 *
 * --command-user UID (a JVM running as root in the initial user namespace, whose commands
 * the kernel would not hold to RLIMIT_NPROC: copy_process() exempts the real uid 0 of
 * that namespace). outer, still root on the host, creates a user namespace whose uid and
 * gid maps are "0 0 1" and "UID UID 1" (user_namespaces(7): a writer with CAP_SETUID
 * and CAP_SETGID in the parent namespace may map any ids) and joins it before it runs
 * the wrapper, which then creates no user namespace of its own. exec, and init's command
 * child (PID 1 keeps uid 0 and with it the parent-death signal that a change of the
 * effective uid would clear; it drops every capability once it has forked), switch to
 * UID (real, effective and saved uid and gid; no supplementary group), and keep two
 * capabilities: CAP_DAC_OVERRIDE and CAP_FOWNER, also ambient so that
 * the command has them after execve(2). In that namespace they apply only to files whose
 * owner and group are both mapped, root:root files (capable_wrt_inode_uidgid): the
 * command can still read, write and chmod a root JVM's working directory, as its owner
 * root could, but gains nothing over any other file (a root:shadow /etc/shadow becomes
 * unreadable). The switch sets SECBIT_NO_SETUID_FIXUP (locked), so that access(2), which
 * checks with the real uid, counts those capabilities too, as open(2) does. Its processes
 * count against RLIMIT_NPROC as UID's in that namespace: the execution's own. With
 * contain there is no user namespace (outer gets no --command-user): contain stays root,
 * its command child switches to UID, a uid of the host, with no capability at all (in
 * the initial namespace CAP_DAC_OVERRIDE would reach every file), and asks again for the
 * parent-death signal that the switch cleared. --command-group GID (contain only) gives
 * it GID as its real, effective and saved gid instead of UID: the JVM runs each execution
 * as a uid of its own and all of them with one gid, the command user's, to which it hands
 * the working directory's group for the execution (it is the JVM's, mode 0700), as the
 * command cannot write it otherwise. RLIMIT_NPROC then counts UID's other tasks of the
 * host too (see LIMITS), and every process of UID on the host can signal the command
 * (ptrace needs the gid too, ptrace_may_access). With --command-group the command starts
 * with the caller's umask without its group-write bit (S_IWGRP), so that what one
 * execution creates in a working directory that several share stays writable for the
 * others through the gid, as it was when they shared one uid.
 *
 * LIMITS (setrlimit(2)), set in the process that becomes the command and inherited by
 * its whole tree, never in init's PID 1 or contain's subreaper, whose bookkeeping they
 * must not stop: --limit-memory RLIMIT_DATA, --limit-processes RLIMIT_NPROC, --limit-cpu
 * RLIMIT_CPU (hard one second above soft: SIGXCPU first, SIGKILL one second of CPU
 * later), --limit-file-size RLIMIT_FSIZE (SIGXFSZ), --limit-open-files RLIMIT_NOFILE;
 * soft = hard otherwise, and RLIMIT_CORE, RLIMIT_RTPRIO and RLIMIT_NICE are always 0
 * (no core dump, no real-time priority, no nice value below 0). A value above the hard limit the
 * launcher inherited (the JVM's) becomes that hard limit, which is stricter and cannot be
 * raised without CAP_SYS_RESOURCE. The command cannot raise them: it
 * has no capability (CAP_SYS_RESOURCE of a user namespace does not count for rlimits).
 * RLIMIT_NPROC counts every task (threads too) of the real uid in the task's user
 * namespace (kernel/fork.c copy_process, kernel/ucount.c is_rlimit_overlimit): with a
 * user namespace of the sandbox's own, only the command's tasks and PID 1; without one
 * (contain), every task of the uid, so contain's command adds the tasks of its real uid
 * that it sees in /proc at start outside the JVM's tree (the JVM's threads and the uid's
 * other processes; not the JVM's other executions, whose room must not pass to this one
 * when they end; processes of that uid in other PID namespaces count but are not seen),
 * and with --check reports how many as nproc_others=N. The kernel never
 * applies RLIMIT_NPROC to the real uid 0 of the initial user namespace: a root JVM's
 * commands are not bounded by it on any rung. The values are checked before anything
 * else (a positive decimal that fits), and set before the start byte: a value the kernel
 * refuses is a set-up failure.
 *
 * Exit codes of the launcher itself: 125 when the sandbox could not be set up (the reason
 * on stderr, prefixed "cave-sandbox-launcher:"), 126 when the command exists but cannot
 * be executed, 127 when it does not exist (the shell's convention, sh(1) and bash(1)).
 *
 * The seccomp filter is built with libseccomp; REFUSALS below is its whole list, each
 * entry with its reason and a harmless attempt that --check makes after the filter is
 * loaded (the attempt's arguments are invalid, so that without the filter the kernel
 * answers with another error, or succeeds without effect on anything but this process).
 *
 * This file is compiled twice. With CAVE_SANDBOX_FILTER_GENERATOR (gcc, glibc, libseccomp)
 * it is the build's filter generator: it builds the filter of each combination of
 * --allow-inet, --allow-userns and --no-mount-namespace with libseccomp and writes the BPF programs that
 * libseccomp exports as a C header. Without it (musl, static), it is the launcher, which
 * includes that header and loads the program that fits. musl because a static glibc
 * program spends about 0.5 ms before main() on a virtual machine (its CPUID probes of the
 * cache layout trap to the hypervisor), and the launcher starts twice per execution.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#ifdef CAVE_SANDBOX_FILTER_GENERATOR
#include <seccomp.h>
#endif

#define LAUNCHER_VERSION "14"
#define DIRECTORY_FD 3
#define SELF_FD 4
#define START_FD 5
/* The egress directory (outer's --egress), which holds the JVM's egress proxy socket. */
#define EGRESS_FD 6
#define EGRESS_SOCKET "egress.sock"
/* The first listed path (--listed); the others follow. Above START_FD, with room. */
#define LISTED_FD 10
#define WORKDIR_VARIABLE "CAVE_SANDBOX_WORKDIR"
#define TOKEN_VARIABLE "CAVE_SANDBOX_LAUNCH_TOKEN"
#define EXIT_SETUP 125
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

/* Newer than the headers of the oldest supported build hosts; the same on every arch. */
#define NR_FCHMODAT2 452

/* Kernel interfaces (uapi), spelled out: musl's headers do not carry linux/. */
#define CAVE_KEYCTL_GET_KEYRING_ID 0
#define CAVE_KEYCTL_JOIN_SESSION_KEYRING 1
#define CAVE_KEY_SPEC_SESSION_KEYRING (-3)
#define CAVE_RESOLVE_NO_SYMLINKS 0x04
#define CAVE_CAPABILITY_VERSION_3 0x20080522
/* What the command user keeps (capabilities(7)): CAP_DAC_OVERRIDE (1), CAP_FOWNER (3). */
#define COMMAND_USER_CAPABILITIES ((1ULL << 1) | (1ULL << 3))
/* And what the switch needs: CAP_SETGID (6), CAP_SETUID (7), CAP_SETPCAP (8). */
#define SWITCH_CAPABILITIES (COMMAND_USER_CAPABILITIES | (1ULL << 6) | (1ULL << 7) | (1ULL << 8))
/* What init's PID 1 keeps when the command runs as the command user: CAP_KILL (5), in its
 * own user namespace only, so that it can pass SIGTERM on to the command's tree. */
#define PID1_CAPABILITIES (1ULL << 5)
/* SECBIT_NO_SETUID_FIXUP and SECBIT_NO_SETUID_FIXUP_LOCKED (linux/securebits.h). */
#define SECBIT_NO_SETUID_FIXUP_BITS ((1UL << 2) | (1UL << 3))
#define CAVE_SECCOMP_MODE_FILTER 2

/* Landlock (linux/landlock.h, landlock(7)): the system calls have the same numbers on
 * every architecture. */
#define NR_LANDLOCK_CREATE_RULESET 444
#define NR_LANDLOCK_ADD_RULE 445
#define NR_LANDLOCK_RESTRICT_SELF 446
#define CAVE_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define CAVE_LANDLOCK_RULE_PATH_BENEATH 1
#define CAVE_LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define CAVE_LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define CAVE_LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define CAVE_LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define CAVE_LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#define CAVE_LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#define CAVE_LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
/* What a read path gives; and the rights a rule on a file other than a directory may
 * carry (landlock_add_rule(2): EINVAL otherwise). */
#define CAVE_LANDLOCK_READS \
	(CAVE_LANDLOCK_ACCESS_FS_EXECUTE | CAVE_LANDLOCK_ACCESS_FS_READ_FILE | CAVE_LANDLOCK_ACCESS_FS_READ_DIR)
#define CAVE_LANDLOCK_FILE_RIGHTS \
	(CAVE_LANDLOCK_ACCESS_FS_EXECUTE | CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE | CAVE_LANDLOCK_ACCESS_FS_READ_FILE \
	 | CAVE_LANDLOCK_ACCESS_FS_TRUNCATE)
#define CAVE_LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define CAVE_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define CAVE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define CAVE_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

struct cave_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

struct cave_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct cave_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct cave_capability_header {
	uint32_t version;
	int pid;
};

struct cave_capability_data {
	uint32_t effective;
	uint32_t permitted;
	uint32_t inheritable;
};

/* struct sock_filter and struct sock_fprog of linux/filter.h. */
struct cave_sock_filter {
	uint16_t code;
	uint8_t jt;
	uint8_t jf;
	uint32_t k;
};

struct cave_sock_fprog {
	unsigned short len;
	const struct cave_sock_filter *filter;
};

/* The command's resource limits: each option and its resource (setrlimit(2)). */
static const struct limit_option {
	const char *option;
	int resource;
	const char *name;
} LIMIT_OPTIONS[] = {
	{ "--limit-memory", RLIMIT_DATA, "RLIMIT_DATA" },
	{ "--limit-processes", RLIMIT_NPROC, "RLIMIT_NPROC" },
	{ "--limit-cpu", RLIMIT_CPU, "RLIMIT_CPU" },
	{ "--limit-file-size", RLIMIT_FSIZE, "RLIMIT_FSIZE" },
	{ "--limit-open-files", RLIMIT_NOFILE, "RLIMIT_NOFILE" },
};

#define LIMIT_COUNT (sizeof LIMIT_OPTIONS / sizeof LIMIT_OPTIONS[0])

struct options {
	int allow_inet;
	int allow_userns;
	int check;
	int no_mount_namespace;
	/* --command-user: the uid (and gid) the command runs as; -1: the caller's. */
	long command_user;
	/* --command-group (contain only): the gid the command runs as instead of
	 * command_user; -1: command_user. */
	long command_group;
	/* contain: no user namespace, so the command user is a uid of the host and keeps no
	 * capability. */
	int host_user;
	/* Per LIMIT_OPTIONS entry; 0: not set (every set value is positive). */
	unsigned long long limits[LIMIT_COUNT];
	/* The filesystem view (--read, --mask, --write): paths of argv. */
	const char **reads;
	size_t read_count;
	const char **masks;
	size_t mask_count;
	const char **writes;
	size_t write_count;
	/* outer's --listed paths: paths of argv, in the wrapper's order. */
	const char **listed;
	size_t listed_count;
	/* --egress-port: the port of the egress bridge on 127.0.0.1; 0: none. */
	unsigned long egress_port;
	/* contain: no PID namespace, so the command's process group is what ends its tree:
	 * the filter keeps every process of the tree in it (setsid and setpgid refused). */
	int no_pid_namespace;
};

/*
 * outer's own failures end with the launch token that the executor gave it in
 * CAVE_SANDBOX_LAUNCH_TOKEN (and that it takes out of the wrapper's environment): the
 * command, which can write anything on stderr and exit 125, cannot know it, so it cannot
 * pass itself off as a sandbox that was never set up.
 */
static const char *launch_token;

static void fail(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void fail(const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	fputs("cave-sandbox-launcher: ", stderr);
	vfprintf(stderr, format, arguments);
	if (launch_token != NULL) {
		fprintf(stderr, " [launch %s]", launch_token);
	}
	fputc('\n', stderr);
	va_end(arguments);
	exit(EXIT_SETUP);
}

#ifdef CAVE_SANDBOX_FILTER_GENERATOR

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

static void add_sockets(scmp_filter_ctx filter, const struct options *options)
{
	/*
	 * socket(2) for every address family but AF_UNIX (and AF_INET, AF_INET6 when the
	 * command has a private loopback): AF_VSOCK, AF_NETLINK, AF_PACKET, AF_BLUETOOTH, ...
	 * are not confined by the network namespace in the same way (AF_VSOCK reaches the
	 * hypervisor), and nothing the command needs uses them. The family is compared as
	 * 32 bits: the kernel ignores the upper half of the register, so must the filter.
	 * Without a mount namespace, AF_UNIX too: nothing hides the host's sockets
	 * (/run/docker.sock, D-Bus, abstract names); socketpair(2) stays allowed.
	 */
	if (!options->allow_inet) {
		if (options->no_mount_namespace) {
			rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 0, NULL);
			return;
		}
		struct scmp_arg_cmp other = SCMP_A0_32(SCMP_CMP_NE, AF_UNIX);
		rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, &other);
		return;
	}
	/* libseccomp takes one comparison per argument and rule: one rule per family the
	 * kernel knows (it refuses those from AF_MAX up itself), compared on the low 32 bits. */
	for (uint64_t family = 0; family < 64; family++) {
		if ((family != AF_UNIX || options->no_mount_namespace) && family != AF_INET && family != AF_INET6) {
			struct scmp_arg_cmp this = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, family);
			rule(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, &this);
		}
	}
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
	 * the host's sockets where a rung relies on them. clone3(2) passes its flags in
	 * memory the filter cannot read: ENOSYS makes the C library fall back to clone(2). */
	struct scmp_arg_cmp user = SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, &user);
	rule(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &user);
	refuse(filter, ENOSYS, "clone3");
}

/*
 * setsid(2) is refused on every rung; with a PID namespace by the session filter
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

#else

/* ---- the attempts that --check makes after the filter is loaded ----------------------- */

static long attempt_socket(int family)
{
	long fd = syscall(SYS_socket, family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close((int) fd);
	}
	return fd;
}

static long attempt_socket_unix(void)
{
	return attempt_socket(AF_UNIX);
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

#endif

/* ---- the one list -------------------------------------------------------------------- */

struct refusal {
	/* The name the probe reports, the same as in REFUSALS of the Java side. */
	const char *name;
	/* The errno the filter answers with. */
	int error;
	/* 1: only without --allow-inet; 2: only without --allow-userns; 4: only with
	 * --no-mount-namespace; 8: only without a PID namespace (contain); 0: always. */
	int unless;
#ifdef CAVE_SANDBOX_FILTER_GENERATOR
	/* Adds the rules (several entries may share one function: the first has it). */
	void (*add)(scmp_filter_ctx, const struct options *);
#else
	/* Makes the attempt that --check reports. */
	long (*attempt)(void);
#endif
};

#define UNLESS_INET 1
#define UNLESS_USERNS 2
#define ONLY_NO_MOUNT_NAMESPACE 4
#define ONLY_NO_PID_NAMESPACE 8

#ifdef CAVE_SANDBOX_FILTER_GENERATOR
#define REFUSAL(name, error, unless, add, attempt) { name, error, unless, add }
#else
#define REFUSAL(name, error, unless, add, attempt) { name, error, unless, attempt }
#endif

static const struct refusal REFUSALS[] = {
	REFUSAL("socket(AF_UNIX)", EAFNOSUPPORT, ONLY_NO_MOUNT_NAMESPACE, add_sockets, attempt_socket_unix),
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
};

#define REFUSAL_COUNT (sizeof REFUSALS / sizeof REFUSALS[0])
/* One filter per combination of the four options that REFUSALS depend on. */
#define FILTER_VARIANTS 16
/* After them, the session filter (build_session_filter). */
#define SESSION_FILTER FILTER_VARIANTS

#ifdef CAVE_SANDBOX_FILTER_GENERATOR

/* Build the filter of one combination of options with libseccomp. */
static scmp_filter_ctx build_filter(const struct options *options)
{
	/* Another architecture's system calls (int 0x80 on x86_64) kill the process: the
	 * rules were written for the native one only. */
	scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
	if (filter == NULL) {
		fail("cannot create a seccomp filter");
	}
	if (seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) {
		fail("cannot make foreign system-call architectures fatal");
	}
	for (size_t i = 0; i < REFUSAL_COUNT; i++) {
		if (REFUSALS[i].add != NULL) {
			REFUSALS[i].add(filter, options);
		}
	}
	return filter;
}

/*
 * The session filter: setsid(2) refused with EPERM, stacked on the filter of a rung with
 * a PID namespace by the command's process once it has its session. The scheduler gives
 * each session of a host's root CPU group an autogroup of its own, with one session's
 * share of the CPU however many processes it has (sched(7), "The autogroup feature"): a
 * tree whose processes each took a session took hundreds of shares, and the processes
 * that tear the sandbox down (outer, the wrapper, PID 1, whose exit kills the namespace)
 * got one share in hundreds (issue 26). In one session, the whole tree has one share.
 */
static scmp_filter_ctx build_session_filter(void)
{
	scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
	if (filter == NULL) {
		fail("cannot create a seccomp filter");
	}
	if (seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) {
		fail("cannot make foreign system-call architectures fatal");
	}
	refuse(filter, EPERM, "setsid");
	return filter;
}

#else

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

static void load_filter(const struct options *options)
{
	load_program(&FILTERS[(options->allow_inet ? 1 : 0) | (options->allow_userns ? 2 : 0)
			      | (options->no_mount_namespace ? 4 : 0) | (options->no_pid_namespace ? 8 : 0)]);
}

/* In the command's process, once in the session the launcher made for it (needs
 * no_new_privs): the session filter, which refuses setsid(2) (build_session_filter). */
static void load_session_filter(void)
{
	load_program(&FILTERS[SESSION_FILTER]);
}

/* The symbolic name of the errno values the check expects, else the number. */
static const char *errno_name(int error, char *buffer, size_t size)
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

/* ---- opening paths on the host ------------------------------------------------------- */

/*
 * Open a path as O_PATH without following any symbolic link in any component (openat2(2)
 * RESOLVE_NO_SYMLINKS; component by component with O_NOFOLLOW where openat2 is missing):
 * a link anywhere gives ELOOP. directory: it must be a directory (ENOTDIR otherwise).
 */
static int open_path_no_symlinks(const char *path, int directory)
{
	struct cave_open_how how;
	memset(&how, 0, sizeof how);
	how.flags = O_PATH | O_CLOEXEC | (directory ? O_DIRECTORY : 0);
	how.resolve = CAVE_RESOLVE_NO_SYMLINKS;
	int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS) {
		return fd;
	}
	/* Kernels before 5.6: one component at a time, none of them a symbolic link. */
	char *copy = strdup(path);
	if (copy == NULL) {
		return -1;
	}
	fd = open((path[0] == '/') ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *saved = NULL;
	for (char *name = strtok_r(copy, "/", &saved); fd >= 0 && name != NULL; name = strtok_r(NULL, "/", &saved)) {
		int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int error = errno;
		struct stat status;
		if (next >= 0 && fstat(next, &status) == 0 && S_ISLNK(status.st_mode)) {
			close(next);
			next = -1;
			error = ELOOP;
		}
		close(fd);
		fd = next;
		errno = error;
	}
	free(copy);
	struct stat status;
	if (fd >= 0 && directory && (fstat(fd, &status) != 0 || !S_ISDIR(status.st_mode))) {
		close(fd);
		fd = -1;
		errno = ENOTDIR;
	}
	return fd;
}

static int open_no_symlinks(const char *path)
{
	return open_path_no_symlinks(path, 1);
}

/* ---- the Landlock layer (landlock(7)), only without a mount namespace ------------------ */

/* What the layer gave, for --check: abi 0 when the kernel has no Landlock. */
static struct {
	int abi;
	int unavailable;
	uint64_t handled_net;
	uint64_t scoped;
	uint64_t handled_fs;
} landlock;

/*
 * Add a rule for what fd names (a directory: beneath it; any other file: that file,
 * with the file rights of access only). path is for the messages.
 */
static void add_rule(int ruleset, int fd, const char *path, uint64_t access)
{
	struct stat status;
	if (fstat(fd, &status) != 0) {
		fail("cannot stat %s for the Landlock ruleset: %s", path, strerror(errno));
	}
	if (!S_ISDIR(status.st_mode)) {
		access &= CAVE_LANDLOCK_FILE_RIGHTS;
	}
	struct cave_landlock_path_beneath_attr beneath = { access, fd };
	if (access != 0 && syscall(NR_LANDLOCK_ADD_RULE, ruleset, CAVE_LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
		fail("cannot add the Landlock rule of %s: %s", path, strerror(errno));
	}
}

/*
 * Allow access beneath a path, opened without following any symbolic link. A path that
 * is not there (or is a link) is skipped unless required: for the device files and
 * /proc, which only narrows what the command gets.
 */
static void allow_beneath(int ruleset, const char *path, uint64_t access, int required)
{
	int fd = open_path_no_symlinks(path, 0);
	if (fd < 0) {
		if (!required && (errno == ENOENT || errno == ENXIO || errno == ELOOP)) {
			return;
		}
		fail("cannot open %s for the Landlock ruleset without following symbolic links: %s", path,
		     strerror(errno));
	}
	add_rule(ruleset, fd, path, access);
	close(fd);
}

/* Whether path lies strictly beneath directory (both absolute and normalized). */
static int lies_beneath(const char *path, const char *directory)
{
	size_t length = strlen(directory);
	if (length == 1) {
		return path[1] != '\0';
	}
	return strncmp(path, directory, length) == 0 && path[length] == '/';
}

/*
 * Allow reading what fd names (path), but no masked path: a masked path itself gets no
 * rule, a directory with a masked path beneath it gets one rule per entry instead
 * (recursively, so only along the masked paths' ancestors), and no rule of its own.
 * Symbolic links among the entries get none either: Landlock judges the file a link
 * leads to where it resolves. An entry gone since the directory was listed is skipped
 * (there is nothing to allow). Closes fd.
 */
static void allow_reading(int ruleset, int fd, const char *path, const struct options *options, uint64_t access)
{
	int beneath = 0;
	for (size_t i = 0; i < options->mask_count; i++) {
		if (strcmp(options->masks[i], path) == 0) {
			close(fd);
			return;
		}
		beneath |= lies_beneath(options->masks[i], path);
	}
	struct stat status;
	if (fstat(fd, &status) != 0) {
		fail("cannot stat %s for the Landlock ruleset: %s", path, strerror(errno));
	}
	if (!beneath || !S_ISDIR(status.st_mode)) {
		add_rule(ruleset, fd, path, access);
		close(fd);
		return;
	}
	int listing = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *directory = (listing < 0) ? NULL : fdopendir(listing);
	if (directory == NULL) {
		fail("cannot list %s, which holds a masked path, for the Landlock ruleset: %s", path, strerror(errno));
	}
	struct dirent *entry;
	for (errno = 0; (entry = readdir(directory)) != NULL; errno = 0) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
			continue;
		}
		char child[4096];
		int length = snprintf(child, sizeof child, "%s/%s", (path[1] == '\0') ? "" : path, entry->d_name);
		if (length < 0 || (size_t) length >= sizeof child) {
			fail("the path of an entry of %s is too long for the Landlock ruleset", path);
		}
		int entry_fd = openat(fd, entry->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (entry_fd < 0 && errno == ENOENT) {
			continue;
		}
		if (entry_fd < 0 || fstat(entry_fd, &status) != 0) {
			fail("cannot open %s for the Landlock ruleset: %s", child, strerror(errno));
		}
		if (S_ISLNK(status.st_mode)) {
			close(entry_fd);
			continue;
		}
		allow_reading(ruleset, entry_fd, child, options, access);
	}
	if (errno != 0) {
		fail("cannot list %s for the Landlock ruleset: %s", path, strerror(errno));
	}
	closedir(directory);
	close(fd);
}

/*
 * Writes only beneath the working directory, the write paths and to /dev/null,
 * /dev/zero, /dev/full and /dev/tty; with read paths (a system view), reads and
 * execution only beneath the working directory, the read and write paths, /proc (read;
 * programs need /proc/self, while the domain's ptrace scoping keeps other processes'
 * memory and environment out of reach), /sys/fs/cgroup (read: the limits by which a
 * child JVM sizes itself) and those device files and /dev/random and
 * /dev/urandom (read and write); from ABI 4 no TCP bind or connect without --allow-inet;
 * from ABI 6 no signal and no abstract unix socket outside the command's own processes.
 * Any domain also keeps the command from ptrace-mode access (/proc/PID/mem, environ) to
 * processes outside it. Rights the kernel's ABI does not know are dropped, as
 * landlock(7)'s example does.
 */
static void restrict_by_landlock(const struct options *options)
{
	long abi = syscall(NR_LANDLOCK_CREATE_RULESET, NULL, 0, CAVE_LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (errno == ENOSYS || errno == EOPNOTSUPP) {
			landlock.unavailable = errno;
			if (options->read_count > 0 && !options->check) {
				fail("the filesystem view needs Landlock, which this kernel does not give: %s", strerror(errno));
			}
			return;
		}
		fail("cannot read the Landlock ABI version: %s", strerror(errno));
	}
	int view = options->read_count > 0;
	uint64_t writes = CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE | CAVE_LANDLOCK_ACCESS_FS_REMOVE_DIR
			  | CAVE_LANDLOCK_ACCESS_FS_REMOVE_FILE | CAVE_LANDLOCK_ACCESS_FS_MAKE_CHAR
			  | CAVE_LANDLOCK_ACCESS_FS_MAKE_DIR | CAVE_LANDLOCK_ACCESS_FS_MAKE_REG
			  | CAVE_LANDLOCK_ACCESS_FS_MAKE_SOCK | CAVE_LANDLOCK_ACCESS_FS_MAKE_FIFO
			  | CAVE_LANDLOCK_ACCESS_FS_MAKE_BLOCK | CAVE_LANDLOCK_ACCESS_FS_MAKE_SYM
			  | CAVE_LANDLOCK_ACCESS_FS_REFER | CAVE_LANDLOCK_ACCESS_FS_TRUNCATE;
	struct cave_landlock_ruleset_attr attributes = { writes | (view ? CAVE_LANDLOCK_READS : 0), 0, 0 };
	if (!options->allow_inet) {
		attributes.handled_access_net = CAVE_LANDLOCK_ACCESS_NET_BIND_TCP | CAVE_LANDLOCK_ACCESS_NET_CONNECT_TCP;
	}
	attributes.scoped = CAVE_LANDLOCK_SCOPE_SIGNAL | CAVE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	if (abi < 2) {
		attributes.handled_access_fs &= ~CAVE_LANDLOCK_ACCESS_FS_REFER;
	}
	if (abi < 3) {
		attributes.handled_access_fs &= ~CAVE_LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	if (abi < 4) {
		attributes.handled_access_net = 0;
	}
	if (abi < 6) {
		attributes.scoped = 0;
	}
	int ruleset = (int) syscall(NR_LANDLOCK_CREATE_RULESET, &attributes, sizeof attributes, 0);
	if (ruleset < 0) {
		fail("cannot create the Landlock ruleset: %s", strerror(errno));
	}
	uint64_t all = attributes.handled_access_fs;
	allow_beneath(ruleset, ".", all, 1);
	/* The caller resolved every listed path as existing: one that is gone or became a
	 * link since then is a failure, not a narrower view than the one promised. */
	for (size_t i = 0; i < options->write_count; i++) {
		allow_beneath(ruleset, options->writes[i], all, 1);
	}
	for (size_t i = 0; i < options->read_count; i++) {
		int fd = open_path_no_symlinks(options->reads[i], 0);
		if (fd < 0) {
			fail("cannot open %s for the Landlock ruleset without following symbolic links: %s",
			     options->reads[i], strerror(errno));
		}
		allow_reading(ruleset, fd, options->reads[i], options, CAVE_LANDLOCK_READS);
	}
	static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random",
					       "/dev/urandom" };
	uint64_t device_access = all
				 & (CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE | CAVE_LANDLOCK_ACCESS_FS_TRUNCATE
				    | CAVE_LANDLOCK_ACCESS_FS_READ_FILE);
	/* The host view: the four write targets of before; reads are not handled. */
	size_t device_count = view ? sizeof devices / sizeof devices[0] : 4;
	for (size_t i = 0; i < device_count; i++) {
		allow_beneath(ruleset, devices[i], device_access, 0);
	}
	if (view) {
		uint64_t read = CAVE_LANDLOCK_ACCESS_FS_READ_FILE | CAVE_LANDLOCK_ACCESS_FS_READ_DIR;
		allow_beneath(ruleset, "/proc", read, 0);
		/* The cgroup's limits: a child JVM (and Go, Node) sizes its heap and threads by
		 * them; without them it takes the host's memory in a container and is killed. */
		allow_beneath(ruleset, "/sys/fs/cgroup", read, 0);
	}
	if (syscall(NR_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0) {
		fail("cannot enforce the Landlock ruleset: %s", strerror(errno));
	}
	close(ruleset);
	landlock.abi = (int) abi;
	landlock.handled_net = attributes.handled_access_net;
	landlock.scoped = attributes.scoped;
	landlock.handled_fs = attributes.handled_access_fs;
}

static void check_landlock(const struct options *options)
{
	if (landlock.abi == 0) {
		char number[32];
		printf("landlock=unavailable %s\n", errno_name(landlock.unavailable, number, sizeof number));
		return;
	}
	const char *net = options->allow_inet ? "allowed" : (landlock.handled_net != 0) ? "refused" : "unhandled";
	printf("landlock=%d writes=%s reads=%s net=%s scope=%s\n", landlock.abi,
	       (options->write_count > 0) ? "workdir,listed" : "workdir",
	       ((landlock.handled_fs & CAVE_LANDLOCK_READS) == CAVE_LANDLOCK_READS) ? "view" : "host", net,
	       (landlock.scoped != 0) ? "signal,abstract-unix" : "none");
}

static void check(const struct options *options)
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
	}
	if (fflush(stdout) != 0) {
		fail("cannot write the check: %s", strerror(errno));
	}
}

/* ---- set-up -------------------------------------------------------------------------- */

/* Close every descriptor from 3 up but the start pipe, if it is one. */
static int close_descriptors(int keep_egress)
{
	struct stat status;
	int start = (fstat(START_FD, &status) == 0 && S_ISFIFO(status.st_mode)) ? START_FD : -1;
	if (syscall(SYS_close_range, 3, START_FD - 1, 0) != 0 || syscall(SYS_close_range, EGRESS_FD + 1, ~0U, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 3; fd < max; fd++) {
			if (fd != START_FD && fd != EGRESS_FD) {
				close((int) fd);
			}
		}
	}
	if (!keep_egress) {
		close(EGRESS_FD);
	}
	if (start < 0) {
		close(START_FD);
	}
	return start;
}

/* Close every descriptor from 3 up (close_range(2), or one by one where it is missing). */
static void close_above_stderr(void)
{
	if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 3; fd < max; fd++) {
			close((int) fd);
		}
	}
}

/* Tell outer that the sandbox is set up: from here on, the exit status is the command's. */
static void signal_start(int start)
{
	if (start < 0) {
		return;
	}
	char byte = 1;
	if (write(start, &byte, 1) != 1) {
		fail("cannot write the start byte: %s", strerror(errno));
	}
	close(start);
}

static void check_working_directory(const struct options *options)
{
	const char *expected = getenv(WORKDIR_VARIABLE);
	if (expected == NULL) {
		return;
	}
	struct stat here;
	if (stat(".", &here) != 0) {
		fail("cannot stat the working directory: %s", strerror(errno));
	}
	char actual[64];
	snprintf(actual, sizeof actual, "%ju:%ju", (uintmax_t) here.st_dev, (uintmax_t) here.st_ino);
	if (strcmp(actual, expected) != 0) {
		fail("the working directory changed during set-up (expected device:inode %s, found %s)", expected,
		     actual);
	}
	/* The same directory, reached through the wrapper's own bind of it: the host's mount
	 * of it, where a swapped path led a bind astray, is neither nosuid nor nodev. Without
	 * a mount namespace there is no bind (the filter refuses set-id bits anyway). */
	if (!options->no_mount_namespace) {
		struct statvfs mount;
		if (statvfs(".", &mount) != 0) {
			fail("cannot statvfs the working directory: %s", strerror(errno));
		}
		if ((mount.f_flag & ST_RDONLY) != 0 || (mount.f_flag & ST_NOSUID) == 0
		    || (mount.f_flag & ST_NODEV) == 0) {
			fail("the working directory is not the sandbox's writable nosuid,nodev bind of it");
		}
	}
	if (unsetenv(WORKDIR_VARIABLE) != 0) {
		fail("cannot unset %s: %s", WORKDIR_VARIABLE, strerror(errno));
	}
}

/* Empty the bounding set but keep (a mask of capabilities), where this process may
 * (CAP_SETPCAP). */
static void drop_bounding_set(unsigned long long keep)
{
	/* A root command would get the bounding set back at execve(2) (capabilities(7)):
	 * empty it where this process may (CAP_SETPCAP); elsewhere no_new_privs and a uid
	 * other than 0 keep the command's sets empty. */
	for (int capability = 0; capability <= 63; capability++) {
		int present = prctl(PR_CAPBSET_READ, capability, 0, 0, 0);
		if (present < 0) {
			break;
		}
		if (present == 1 && !(keep & (1ULL << capability)) && prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0
		    && geteuid() == 0) {
			fail("cannot drop capability %d from the bounding set: %s", capability, strerror(errno));
		}
	}
}

/* Drop every capability but keep (a mask of capabilities, 0 for none), which stay
 * permitted, effective and inheritable, and with ambient also ambient (the command's
 * after execve(2)). */
static void drop_capabilities(unsigned long long keep, int ambient)
{
	drop_bounding_set(keep);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		fail("cannot clear the ambient capabilities: %s", strerror(errno));
	}
	struct cave_capability_header header = { CAVE_CAPABILITY_VERSION_3, 0 };
	struct cave_capability_data sets[2];
	memset(sets, 0, sizeof sets);
	for (int half = 0; half < 2; half++) {
		uint32_t bits = (uint32_t) (keep >> (32 * half));
		sets[half].effective = bits;
		sets[half].permitted = bits;
		sets[half].inheritable = bits;
	}
	if (syscall(SYS_capset, &header, sets) != 0) {
		fail("cannot clear the capability sets: %s", strerror(errno));
	}
	for (int capability = 0; capability <= 63; capability++) {
		if (ambient && (keep & (1ULL << capability))
		    && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, capability, 0, 0) != 0) {
			fail("cannot make capability %d ambient: %s", capability, strerror(errno));
		}
	}
}

/*
 * Become the command user (--command-user): real, effective and saved uid and gid, no
 * supplementary group, keeping the capabilities for drop_capabilities to reduce.
 */
static void switch_user(const struct options *options)
{
	uid_t user = (uid_t) options->command_user;
	gid_t group = (gid_t) ((options->command_group >= 0) ? options->command_group : options->command_user);
	/* SECBIT_NO_SETUID_FIXUP (locked): the switch keeps the capability sets, and
	 * access(2), which checks with the real uid, keeps the effective set for a uid other
	 * than 0 too (do_faccessat); without it a command's access(2) to root's working
	 * directory would answer "no" to what open(2) allows (Java's Files.isReadable,
	 * os.access). */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP_BITS, 0, 0, 0) != 0 || setgroups(0, NULL) != 0
	    || setresgid(group, group, group) != 0 || setresuid(user, user, user) != 0) {
		fail("cannot switch to the command user %lu (gid %lu): %s", options->command_user, (unsigned long) group,
		     strerror(errno));
	}
}

/*
 * The process that becomes the command, with --command-user: empty the bounding set but
 * the command user's capabilities while it still may (the switch clears the effective
 * set, CAP_SETPCAP with it), switch, keep those capabilities, ambient too.
 */
static void become_command_user(const struct options *options)
{
	/* contain: a uid of the host, where those capabilities would reach every file. */
	unsigned long long keep = options->host_user ? 0 : COMMAND_USER_CAPABILITIES;
	drop_bounding_set(keep);
	switch_user(options);
	drop_capabilities(keep, !options->host_user);
	/* --command-group: the executions' uids differ and share the gid, so what one of
	 * them creates in a working directory they share must be writable by the group for
	 * the next to write it, as it was when they shared one uid: the JVM's umask without
	 * its group-write bit. */
	if (options->command_group >= 0) {
		mode_t mask = umask(0);
		umask(mask & ~(mode_t) S_IWGRP);
	}
}

/*
 * outer's part of --command-user: create a user namespace that maps 0 and UID to
 * themselves (uid and gid), from a child (a process cannot write the maps of its own new
 * namespace with ids other than its own), and join it.
 */
static void join_command_user_namespace(long user)
{
	if (getuid() != 0 || geteuid() != 0) {
		fail("--command-user is for a launcher running as root");
	}
	int ready[2];
	int done[2];
	if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0) {
		fail("cannot create the pipes for the command user's namespace: %s", strerror(errno));
	}
	pid_t holder = fork();
	if (holder < 0) {
		fail("cannot fork for the command user's namespace: %s", strerror(errno));
	}
	if (holder == 0) {
		close(ready[0]);
		close(done[1]);
		/* Its pid as /proc shows it, which outer's PID namespace may not (a wrapper's
		 * PID namespace around the JVM): /proc/self names it. */
		long report[2] = { (unshare(CLONE_NEWUSER) == 0) ? 0 : errno, 0 };
		char self[32];
		ssize_t length = readlink("/proc/self", self, sizeof self - 1);
		if (length > 0) {
			self[length] = '\0';
			report[1] = strtol(self, NULL, 10);
		}
		if (write(ready[1], report, sizeof report) != (ssize_t) sizeof report) {
			_exit(1);
		}
		char byte;
		/* Hold the namespace until outer has joined it (done's write end closes). */
		(void) read(done[0], &byte, 1);
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	long report[2] = { EIO, 0 };
	if (read(ready[0], report, sizeof report) != (ssize_t) sizeof report || report[0] != 0) {
		/* The wrappers' own wording ("unshare failed: ..."), which names the cause. */
		fail("cannot create the command user's namespace: unshare failed: %s", strerror((int) report[0]));
	}
	if (report[1] <= 0) {
		fail("cannot create the command user's namespace: its holder is not in /proc");
	}
	long shown = report[1];
	char map[64];
	snprintf(map, sizeof map, "0 0 1\n%lu %lu 1\n", user, user);
	const char *files[] = { "uid_map", "gid_map" };
	for (size_t i = 0; i < 2; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/%s", shown, files[i]);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t) strlen(map)) {
			fail("cannot write %s of the command user's namespace: %s", files[i], strerror(errno));
		}
		close(fd);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/ns/user", shown);
	int namespace = open(path, O_RDONLY | O_CLOEXEC);
	if (namespace < 0 || setns(namespace, CLONE_NEWUSER) != 0) {
		fail("cannot join the command user's namespace: %s", strerror(errno));
	}
	close(namespace);
	close(done[1]);
	close(ready[0]);
	int status;
	while (waitpid(holder, &status, 0) < 0) {
		if (errno != EINTR) {
			fail("lost the holder of the command user's namespace: %s", strerror(errno));
		}
	}
}

/* A process as /proc/PID/status shows it. */
struct task_entry {
	long pid;
	long ppid;
	unsigned long uid;
	unsigned long long threads;
};

static int by_pid(const void *left, const void *right)
{
	long a = ((const struct task_entry *) left)->pid;
	long b = ((const struct task_entry *) right)->pid;
	return (a > b) - (a < b);
}

/* The parent of a process, or 0 when it is gone. */
static long parent_of(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	FILE *status = fopen(path, "re");
	if (status == NULL) {
		return 0;
	}
	char line[256];
	long ppid = 0;
	while (fgets(line, sizeof line, status) != NULL && sscanf(line, "PPid: %ld", &ppid) != 1) {
	}
	fclose(status);
	return ppid;
}

/*
 * Every process of the host as /proc shows it (pid, parent, real uid, threads),
 * sorted by pid for bsearch with by_pid; NULL if /proc cannot be read or memory runs out.
 */
static struct task_entry *read_tasks(size_t *count)
{
	DIR *proc = opendir("/proc");
	if (proc == NULL) {
		return NULL;
	}
	size_t used = 0;
	size_t capacity = 0;
	struct task_entry *entries = NULL;
	struct dirent *entry;
	while ((entry = readdir(proc)) != NULL) {
		char *end;
		long pid = strtol(entry->d_name, &end, 10);
		if (*end != '\0' || pid <= 0) {
			continue;
		}
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/status", pid);
		FILE *status = fopen(path, "re");
		if (status == NULL) {
			continue;
		}
		struct task_entry task = { pid, 0, ~0UL, 0 };
		char line[256];
		while (fgets(line, sizeof line, status) != NULL) {
			if (sscanf(line, "Uid: %lu", &task.uid) != 1 && sscanf(line, "PPid: %ld", &task.ppid) != 1) {
				(void) sscanf(line, "Threads: %llu", &task.threads);
			}
		}
		fclose(status);
		if (used == capacity) {
			capacity = (capacity == 0) ? 256 : capacity * 2;
			struct task_entry *larger = realloc(entries, capacity * sizeof *entries);
			if (larger == NULL) {
				free(entries);
				closedir(proc);
				return NULL;
			}
			entries = larger;
		}
		entries[used++] = task;
	}
	closedir(proc);
	if (entries == NULL) {
		entries = malloc(sizeof *entries);
	}
	qsort(entries, used, sizeof *entries, by_pid);
	*count = used;
	return entries;
}

/*
 * The tasks (threads included) of this process's real uid that RLIMIT_NPROC counts
 * beside the command's own, as /proc shows them: the JVM's threads and the uid's
 * processes outside the JVM's tree. The JVM is the parent of outer (contain's parent; this
 * process is contain's child). The JVM's other descendants (other executions, still
 * running) are not added: their tasks take this command's room rather than add to it,
 * or an execution started while another holds its processes would get that room too
 * once the other ends, and a chain of executions would grow without bound.
 */
static unsigned long long tasks_of_real_uid(void)
{
	long jvm = parent_of(parent_of(getppid()));
	size_t count = 0;
	struct task_entry *entries = (jvm > 0) ? read_tasks(&count) : NULL;
	if (entries == NULL) {
		fail("cannot count the tasks of uid %u for RLIMIT_NPROC: %s", (unsigned) getuid(),
		     (jvm <= 0) ? "the JVM's process is gone" : "cannot read /proc");
	}
	unsigned long long tasks = 0;
	uid_t self = getuid();
	for (size_t i = 0; i < count; i++) {
		if (entries[i].uid != (unsigned long) self) {
			continue;
		}
		/* Up the parents, at most once per process seen (no loop can hold it). */
		int descendant = 0;
		long ancestor = entries[i].ppid;
		for (size_t step = 0; step < count && ancestor > 0 && entries[i].pid != jvm; step++) {
			if (ancestor == jvm) {
				descendant = 1;
				break;
			}
			struct task_entry key = { ancestor, 0, 0, 0 };
			struct task_entry *parent = bsearch(&key, entries, count, sizeof *entries, by_pid);
			ancestor = (parent != NULL) ? parent->ppid : 0;
		}
		if (!descendant) {
			tasks += entries[i].threads;
		}
	}
	free(entries);
	return tasks;
}

/*
 * Set the command's limits (in the process that becomes the command, before the start
 * byte). shared_uid: no user namespace of the sandbox's own (contain), so RLIMIT_NPROC
 * counts the uid's other tasks too: those outside the JVM's tree are added (see
 * tasks_of_real_uid).
 */
static void set_limits(const struct options *options, int shared_uid)
{
	/* No core dump; and no real-time priority or nice value below the JVM's default
	 * that a JVM's RLIMIT_RTPRIO or RLIMIT_NICE (limits.conf, LimitRTPRIO=, a container's
	 * --ulimit) would grant: a command at SCHED_FIFO or nice -20 would take the CPU
	 * from the processes that tear it down (sched(7), getrlimit(2)). */
	static const int zeroed[] = { RLIMIT_CORE, RLIMIT_RTPRIO, RLIMIT_NICE };
	static const char *const zeroed_names[] = { "RLIMIT_CORE", "RLIMIT_RTPRIO", "RLIMIT_NICE" };
	struct rlimit none = { 0, 0 };
	for (size_t i = 0; i < sizeof zeroed / sizeof zeroed[0]; i++) {
		if (setrlimit(zeroed[i], &none) != 0) {
			fail("cannot set %s to 0: %s", zeroed_names[i], strerror(errno));
		}
	}
	for (size_t i = 0; i < LIMIT_COUNT; i++) {
		unsigned long long value = options->limits[i];
		if (value == 0) {
			continue;
		}
		int resource = LIMIT_OPTIONS[i].resource;
		if (resource == RLIMIT_NPROC && shared_uid) {
			unsigned long long others = tasks_of_real_uid();
			value += others;
			/* For the probe: the child's RLIMIT_NPROC must be the setting plus these. */
			if (options->check && (printf("nproc_others=%llu\n", others) < 0 || fflush(stdout) != 0)) {
				fail("cannot write the check: %s", strerror(errno));
			}
		}
		/* RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL one second of CPU later. A
		 * setting above the inherited hard limit gets that hard limit, which is already
		 * stricter: without CAP_SYS_RESOURCE it cannot be raised (setrlimit(2)). */
		struct rlimit inherited;
		if (getrlimit(resource, &inherited) != 0) {
			fail("cannot read %s: %s", LIMIT_OPTIONS[i].name, strerror(errno));
		}
		rlim_t hard = (rlim_t) value + ((resource == RLIMIT_CPU) ? 1 : 0);
		if (inherited.rlim_max != RLIM_INFINITY && hard > inherited.rlim_max) {
			hard = inherited.rlim_max;
		}
		struct rlimit limit = { ((rlim_t) value < hard) ? (rlim_t) value : hard, hard };
		if (setrlimit(resource, &limit) != 0) {
			fail("cannot set %s to %llu: %s", LIMIT_OPTIONS[i].name, value, strerror(errno));
		}
	}
}

/* Whether a path is absolute and normalized: no empty, . or .. component, no trailing
 * slash (the masked paths are compared as strings). */
static int normalized_path(const char *path)
{
	if (path[0] != '/') {
		return 0;
	}
	if (path[1] == '\0') {
		return 1;
	}
	for (const char *component = path + 1;;) {
		const char *end = strchr(component, '/');
		size_t length = (end == NULL) ? strlen(component) : (size_t) (end - component);
		if (length == 0 || (length == 1 && component[0] == '.')
		    || (length == 2 && component[0] == '.' && component[1] == '.')) {
			return 0;
		}
		if (end == NULL) {
			return 1;
		}
		component = end + 1;
	}
}

/* Parse an option's positive decimal value (a limit, the egress port, a command user or
 * group), small enough for rlim_t (the largest values are RLIM_INFINITY and, for
 * RLIMIT_CPU's hard limit, one below it); the caller checks its own narrower range. */
static unsigned long long positive_number(const char *option, const char *text)
{
	if (text[0] < '0' || text[0] > '9') {
		fail("%s needs a positive decimal number, not '%s'", option, text);
	}
	errno = 0;
	char *end;
	unsigned long long value = strtoull(text, &end, 10);
	if (*end != '\0' || value == 0) {
		fail("%s needs a positive decimal number, not '%s'", option, text);
	}
	if (errno == ERANGE || value >= (unsigned long long) RLIM_INFINITY / 2) {
		fail("%s %s is too large", option, text);
	}
	return value;
}

static void new_session_keyring(void)
{
	/* An anonymous session keyring instead of the JVM's (keyrings(7)); where keyctl is
	 * already refused (a container's filter), the command cannot reach any keyring. */
	if (syscall(SYS_keyctl, CAVE_KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS && errno != EPERM) {
		fail("cannot join a new session keyring: %s", strerror(errno));
	}
}

static void reset_signals(void)
{
	/* Ignored signals and the blocked mask survive execve(2) (signal(7)): the JVM's
	 * thread blocks some, a shell's background job ignores SIGINT and SIGQUIT. */
	/* Through the system call: the C library refuses to touch the signals it keeps for
	 * itself (32 and 33 in glibc), and those can arrive ignored too. An all-zero
	 * kernel sigaction is SIG_DFL without flags on every architecture. */
	uint64_t default_action[4] = { 0, 0, 0, 0 };
	for (int signal = 1; signal <= 64; signal++) {
		if (signal != SIGKILL && signal != SIGSTOP
		    && syscall(SYS_rt_sigaction, signal, default_action, NULL, sizeof(uint64_t)) != 0) {
			fail("cannot reset the disposition of signal %d: %s", signal, strerror(errno));
		}
	}
	sigset_t empty;
	sigemptyset(&empty);
	if (sigprocmask(SIG_SETMASK, &empty, NULL) != 0) {
		fail("cannot clear the signal mask: %s", strerror(errno));
	}
}

/* ---- the egress bridge ------------------------------------------------------------- */

/* Write all of length bytes; 0, or -1 when the other end is gone. */
static int send_all(int fd, const char *buffer, size_t length)
{
	while (length > 0) {
		ssize_t sent = send(fd, buffer, length, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR) {
			continue;
		}
		if (sent <= 0) {
			return -1;
		}
		buffer += sent;
		length -= (size_t) sent;
	}
	return 0;
}

/*
 * Relay bytes both ways between a client of the bridge and the proxy until both ends
 * have finished: an end that reaches end of file shuts down the other's writing half,
 * so that a request half-closed by its client still gets its whole answer.
 */
static void relay(int client, int proxy)
{
	static char buffer[65536];
	struct pollfd ends[2] = { { client, POLLIN, 0 }, { proxy, POLLIN, 0 } };
	int open_ends = 2;
	while (open_ends > 0) {
		if (poll(ends, 2, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			return;
		}
		for (int side = 0; side < 2; side++) {
			if (ends[side].fd < 0 || ends[side].revents == 0) {
				continue;
			}
			int to = (side == 0) ? proxy : client;
			ssize_t length = read(ends[side].fd, buffer, sizeof buffer);
			if (length < 0 && errno == EINTR) {
				continue;
			}
			if (length <= 0) {
				shutdown(to, SHUT_WR);
				ends[side].fd = -1;
				open_ends--;
			}
			else if (send_all(to, buffer, (size_t) length) != 0) {
				return;
			}
		}
	}
}

/*
 * The bridge's process: accepts each connection to 127.0.0.1:PORT of the sandbox's own
 * network namespace and relays it, in a process of its own, to the JVM's egress proxy,
 * the unix socket EGRESS_SOCKET in the egress directory (EGRESS_FD, its working
 * directory from here on: the socket is reached through outer's descriptor, whatever
 * the sandbox's mounts or Landlock show of the host). It decides nothing: the proxy
 * checks every destination, so a command that reaches the socket without the bridge
 * gains nothing. It runs as the command's user without any capability, with
 * no_new_privs, not dumpable (the command can neither ptrace it, which the filter also
 * refuses, nor write its memory through /proc), and under the filter of a rung with a
 * mount namespace and a private loopback (socket(AF_UNIX) allowed, for the proxy), but
 * without the command's Landlock ruleset.
 */
static void bridge(int listener, const struct options *options) __attribute__((noreturn));

static void bridge(int listener, const struct options *options)
{
	if (fchdir(EGRESS_FD) != 0) {
		_exit(EXIT_SETUP);
	}
	close(EGRESS_FD);
	/* It serves the command through the grace period that PID 1's SIGTERM starts, and
	 * dies with the namespace. */
	signal(SIGTERM, SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
		_exit(EXIT_SETUP);
	}
	close(null);
	if (options->command_user >= 0 && getuid() != (uid_t) options->command_user) {
		switch_user(options);
	}
	drop_capabilities(0, 0);
	struct options filter = { .allow_inet = 1, .command_user = -1 };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		_exit(EXIT_SETUP);
	}
	load_filter(&filter);
	/* Each connection's process is reaped by the kernel. */
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (client < 0) {
			continue;
		}
		pid_t connection = fork();
		if (connection == 0) {
			close(listener);
			int proxy = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_un address = { .sun_family = AF_UNIX, .sun_path = EGRESS_SOCKET };
			if (proxy < 0 || connect(proxy, (struct sockaddr *) &address, sizeof address) != 0) {
				_exit(1);
			}
			relay(client, proxy);
			_exit(0);
		}
		close(client);
	}
}

/*
 * --egress-port: listen on 127.0.0.1:PORT (the command's own loopback) before the
 * command runs, so that its first connection finds the bridge ready, and start the
 * bridge with that socket. With exec the bridge is not the command's child (a shell's
 * wait(1) without arguments would wait for it): an intermediate child forks it and
 * exits, and PID 1 of the sandbox's PID namespace inherits it; it dies with that
 * namespace. With init it is PID 1's child, and dies the same way.
 */
static void start_bridge(const struct options *options, int start, int pid1)
{
	struct stat status;
	if (fstat(EGRESS_FD, &status) != 0 || !S_ISDIR(status.st_mode)) {
		fail("--egress-port needs the egress directory that outer opens for --egress at descriptor %d", EGRESS_FD);
	}
	int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int reuse = 1;
	struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t) options->egress_port),
				       .sin_addr = { htonl(INADDR_LOOPBACK) } };
	if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse) != 0
	    || bind(listener, (struct sockaddr *) &address, sizeof address) != 0 || listen(listener, 128) != 0) {
		fail("cannot listen on 127.0.0.1:%lu for the egress bridge: %s (is loopback up?)", options->egress_port,
		     strerror(errno));
	}
	pid_t child = fork();
	if (child < 0) {
		fail("cannot fork the egress bridge: %s", strerror(errno));
	}
	if (child == 0) {
		if (start >= 0) {
			close(start);
		}
		if (!pid1) {
			pid_t grandchild = fork();
			if (grandchild != 0) {
				_exit(grandchild < 0 ? EXIT_SETUP : 0);
			}
		}
		bridge(listener, options);
	}
	close(listener);
	close(EGRESS_FD);
	if (!pid1) {
		int child_status;
		while (waitpid(child, &child_status, 0) < 0) {
			if (errno != EINTR) {
				fail("lost the egress bridge's parent: %s", strerror(errno));
			}
		}
		if (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0) {
			fail("cannot fork the egress bridge");
		}
	}
}

/*
 * Set up everything but the limits and the start byte; return the start pipe (-1 when
 * there is none) for the process that becomes the command.
 */
static int set_up(const struct options *options, int pid1)
{
	int start = close_descriptors(options->egress_port != 0);
	check_working_directory(options);
	if (options->command_user >= 0 && !pid1) {
		become_command_user(options);
	}
	else {
		/* init's PID 1 keeps its uid, and so the parent-death signal that bwrap gave it
		 * (the kernel clears it when the effective uid changes, commit_creds): its
		 * command child switches, with what PID 1 keeps for that, until it forks. */
		drop_capabilities((options->command_user >= 0) ? (SWITCH_CAPABILITIES | (pid1 ? PID1_CAPABILITIES : 0)) : 0,
				  0);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fail("cannot set no_new_privs: %s", strerror(errno));
	}
	if (options->egress_port != 0) {
		start_bridge(options, start, pid1);
	}
	if (options->no_mount_namespace) {
		restrict_by_landlock(options);
	}
	new_session_keyring();
	load_filter(options);
	if (pid1) {
		/* init's command child stacks the session filter and checks (init). */
		return start;
	}
	if (!options->no_pid_namespace) {
		load_session_filter();
	}
	if (options->check) {
		check(options);
	}
	return start;
}

static void execute(char **argv) __attribute__((noreturn));

static void execute(char **argv)
{
	reset_signals();
	execvp(argv[0], argv);
	int error = errno;
	/* stat(2), not access(2): access checks with the real uid and, for a uid other than 0,
	 * without capabilities, so it would not see a command user's file in a root JVM's
	 * working directory, which CAP_DAC_OVERRIDE reaches. */
	struct stat file;
	if (error == ENOENT && strchr(argv[0], '/') != NULL && stat(argv[0], &file) == 0) {
		/* The file is there: its #! interpreter or its ELF loader is not (execve(2)). */
		fprintf(stderr, "cave-sandbox: cannot execute %s: its interpreter was not found\n", argv[0]);
		_exit(EXIT_NOT_EXECUTABLE);
	}
	fprintf(stderr, "cave-sandbox: cannot execute %s: %s\n", argv[0], strerror(error));
	_exit((error == ENOENT || error == ENOTDIR) ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
}

/* ---- modes --------------------------------------------------------------------------- */

static void place(int fd, int target, const char *what)
{
	if (fd == target) {
		if (fcntl(fd, F_SETFD, 0) != 0) {
			fail("cannot keep %s open: %s", what, strerror(errno));
		}
		return;
	}
	if (dup2(fd, target) < 0) {
		fail("cannot move %s to descriptor %d: %s", what, target, strerror(errno));
	}
	close(fd);
}

/*
 * Open each listed path without following a symbolic link in any component and place the
 * i-th at LISTED_FD + i without FD_CLOEXEC, for the wrapper. Each is first moved above
 * every target, so that placing one never replaces another that is not placed yet.
 */
static void open_listed(const char **paths, size_t count)
{
	int *fds = calloc(count + 1, sizeof *fds);
	if (fds == NULL) {
		fail("out of memory");
	}
	for (size_t i = 0; i < count; i++) {
		int fd = open_path_no_symlinks(paths[i], 0);
		if (fd < 0) {
			fail("cannot open the listed path %s without following symbolic links: %s", paths[i],
			     strerror(errno));
		}
		struct stat status;
		if (fstat(fd, &status) != 0) {
			fail("cannot stat the listed path %s: %s", paths[i], strerror(errno));
		}
		if (!S_ISDIR(status.st_mode) && !S_ISREG(status.st_mode)) {
			fail("the listed path %s is neither a directory nor a regular file", paths[i]);
		}
		fds[i] = fcntl(fd, F_DUPFD_CLOEXEC, LISTED_FD + (int) count);
		if (fds[i] < 0) {
			fail("cannot move the listed path %s: %s", paths[i], strerror(errno));
		}
		close(fd);
	}
	for (size_t i = 0; i < count; i++) {
		place(fds[i], LISTED_FD + (int) i, paths[i]);
	}
	free(fds);
}

/* The wrapper's process group (its pid), once outer has forked it; 0 before. */
static volatile sig_atomic_t wrapper_group;

/* outer's SIGTERM (the executor's, the start of the kill grace period): to the wrapper's
 * process group, where PID 1 of the sandbox (init, pid1) or contain passes it on to the
 * command's whole tree at once. */
static void pass_on_to_wrapper(int signal)
{
	int saved = errno;
	if (wrapper_group > 0) {
		kill(-(pid_t) wrapper_group, signal);
	}
	errno = saved;
}

/* Catch SIGTERM with handler, which must keep errno (sigaction(2)). */
static void catch_terminate(void (*handler)(int))
{
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_handler = handler;
	sigemptyset(&action.sa_mask);
	if (sigaction(SIGTERM, &action, NULL) != 0) {
		fail("cannot catch SIGTERM: %s", strerror(errno));
	}
}

static int outer(const char *directory, const char **listed, size_t listed_count, const char *egress,
		 long command_user, char **argv)
{
	pid_t parent = getppid();
	const char *token = getenv(TOKEN_VARIABLE);
	if (token != NULL) {
		launch_token = strdup(token);
		if (launch_token == NULL || unsetenv(TOKEN_VARIABLE) != 0) {
			fail("cannot take the launch token out of the environment");
		}
	}
	if (directory == NULL || directory[0] != '/') {
		fail("outer needs --workdir with an absolute path");
	}
	if (argv[0] == NULL || argv[0][0] != '/') {
		fail("outer needs the wrapper as an absolute path");
	}
	int fd = open_no_symlinks(directory);
	if (fd < 0) {
		fail("cannot open the working directory %s without following symbolic links: %s", directory,
		     strerror(errno));
	}
	struct stat status;
	if (fstat(fd, &status) != 0 || !S_ISDIR(status.st_mode)) {
		fail("the working directory %s is not a directory", directory);
	}
	if (fchdir(fd) != 0) {
		fail("cannot enter the working directory %s: %s", directory, strerror(errno));
	}
	place(fd, DIRECTORY_FD, "the working directory");
	/* O_PATH: executing it needs only execute permission, as the wrapper's exec did. */
	int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (self < 0) {
		fail("cannot open this launcher through /proc/self/exe: %s", strerror(errno));
	}
	place(self, SELF_FD, "the launcher");
	if (egress != NULL) {
		int directory_fd = open_path_no_symlinks(egress, 1);
		if (directory_fd < 0) {
			fail("cannot open the egress directory %s without following symbolic links: %s", egress,
			     strerror(errno));
		}
		place(directory_fd, EGRESS_FD, "the egress directory");
	}
	/* Before the start pipe, whose descriptors must not land on their numbers. */
	open_listed(listed, listed_count);
	char identity[64];
	snprintf(identity, sizeof identity, "%ju:%ju", (uintmax_t) status.st_dev, (uintmax_t) status.st_ino);
	if (setenv(WORKDIR_VARIABLE, identity, 1) != 0) {
		fail("cannot set %s: %s", WORKDIR_VARIABLE, strerror(errno));
	}
	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		fail("cannot create the start pipe: %s", strerror(errno));
	}
	/* The read end out of the way of START_FD, which it may have been given (the first
	 * free descriptor from 10 up: after the listed paths). */
	int reader = fcntl(pipe_fds[0], F_DUPFD_CLOEXEC, 10);
	if (reader < 0) {
		fail("cannot move the start pipe: %s", strerror(errno));
	}
	close(pipe_fds[0]);
	place(pipe_fds[1], START_FD, "the start pipe");
	if (command_user >= 0) {
		join_command_user_namespace(command_user);
	}
	/* Die with the JVM thread that spawned this process, as the wrapper would have (its
	 * pid was read first: a JVM that died while the namespace was made is noticed). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent) {
		fail("cannot tie the sandbox to the JVM: %s", strerror(errno));
	}
	/* SIGTERM waits until the wrapper's group exists, then goes to it. */
	sigset_t terminate;
	sigset_t unblocked;
	sigemptyset(&terminate);
	sigaddset(&terminate, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &terminate, &unblocked) != 0) {
		fail("cannot block SIGTERM: %s", strerror(errno));
	}
	catch_terminate(pass_on_to_wrapper);
	int executed[2];
	if (pipe2(executed, O_CLOEXEC) != 0) {
		fail("cannot make a pipe: %s", strerror(errno));
	}
	pid_t wrapper = fork();
	if (wrapper < 0) {
		fail("cannot fork the wrapper: %s", strerror(errno));
	}
	if (wrapper == 0) {
		/* A session and process group of its own, which outer's SIGTERM reaches: the
		 * wrapper ignores it (bwrap would take the sandbox down at once, without the
		 * grace period), PID 1 of the sandbox, in that group too, or contain passes it
		 * on. The session is not the JVM's, so the sandbox's processes are not in the
		 * JVM's autogroup (sched(7)): a command that can write PID 1's
		 * /proc/1/autogroup (unshare's PID 1 belongs to the JVM's user) renices the
		 * sandbox's own session, never the JVM's. */
		signal(SIGTERM, SIG_IGN);
		if (setsid() < 0) {
			_exit(EXIT_SETUP);
		}
		sigprocmask(SIG_SETMASK, &unblocked, NULL);
		execv(argv[0], argv);
		fprintf(stderr, "cave-sandbox-launcher: cannot execute the wrapper %s: %s\n", argv[0], strerror(errno));
		_exit(EXIT_SETUP);
	}
	/* The group exists once the child has made its session: SIGTERM stays blocked until
	 * then, when the child's exec (or exit) closes its end of the pipe. */
	close(executed[1]);
	char none;
	while (read(executed[0], &none, 1) < 0 && errno == EINTR) {
	}
	close(executed[0]);
	wrapper_group = wrapper;
	if (sigprocmask(SIG_SETMASK, &unblocked, NULL) != 0) {
		fail("cannot unblock SIGTERM: %s", strerror(errno));
	}
	close(START_FD);
	close(DIRECTORY_FD);
	close(SELF_FD);
	if (egress != NULL) {
		close(EGRESS_FD);
	}
	for (size_t i = 0; i < listed_count; i++) {
		close(LISTED_FD + (int) i);
	}
	int status_code;
	while (waitpid(wrapper, &status_code, 0) < 0) {
		if (errno != EINTR) {
			fail("lost the wrapper: %s", strerror(errno));
		}
	}
	char byte;
	int started = fcntl(reader, F_SETFL, O_NONBLOCK) == 0 && read(reader, &byte, 1) == 1;
	if (!started) {
		/* The wrapper's own message, if any, is on stderr before this line. */
		if (WIFSIGNALED(status_code)) {
			fail("the sandbox could not be set up: %s died of signal %d before the command started", argv[0],
			     WTERMSIG(status_code));
		}
		fail("the sandbox could not be set up: %s exited with %d before the command started", argv[0],
		     WEXITSTATUS(status_code));
	}
	return WIFSIGNALED(status_code) ? 128 + WTERMSIG(status_code) : WEXITSTATUS(status_code);
}

/*
 * PID 1's wait (init, pid1): reap every orphan of the namespace until the command ends,
 * and return its status, 128 + n if it died of signal n.
 */
static int reap_until(pid_t command)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0 && errno == EINTR) {
			continue;
		}
		if (pid < 0) {
			fail("lost the command: %s", strerror(errno));
		}
		if (pid == command) {
			return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		}
	}
}

/*
 * SIGTERM to PID 1 of the sandbox (outer passes on the executor's): to every other process
 * of its PID namespace at once (kill(2) with -1 reaches every process the caller may
 * signal but itself and, in a PID namespace, only that namespace's), so the command's whole
 * tree gets the grace period, however it forks. PID 1 gets the signal only because it
 * has a handler (pid_namespaces(7)).
 */
static void pass_on_to_namespace(int signal)
{
	int saved = errno;
	kill(-1, signal);
	errno = saved;
}

static int init(const struct options *options, char **argv)
{
	if (getpid() != 1) {
		fail("init must run as PID 1 of a new PID namespace");
	}
	catch_terminate(pass_on_to_namespace);
	int start = set_up(options, 1);
	pid_t command = fork();
	if (command < 0) {
		fail("cannot fork the command: %s", strerror(errno));
	}
	if (command == 0) {
		/* A session of its own (bwrap's --new-session would have taken PID 1 out of the
		 * wrapper's process group, which outer's SIGTERM reaches): it cannot push input
		 * into the JVM's terminal (TIOCSTI). */
		if (setsid() < 0) {
			fail("cannot give the command a session of its own: %s", strerror(errno));
		}
		load_session_filter();
		if (options->command_user >= 0) {
			become_command_user(options);
		}
		if (options->check) {
			check(options);
		}
		/* The limits are the command's, not PID 1's: its reaping must not fail. A failure
		 * here ends PID 1 too, before the start byte. */
		set_limits(options, 0);
		signal_start(start);
		execute(argv);
	}
	if (start >= 0) {
		close(start);
	}
	if (options->command_user >= 0) {
		drop_capabilities(PID1_CAPABILITIES, 0);
	}
	/* The kernel kills whatever is left in the namespace when PID 1 exits. */
	return reap_until(command);
}

/*
 * PID 1 of the PID namespace that util-linux unshare creates (its set-up script ends by
 * exec'ing this): forks ARGS (the launcher's exec, behind a nested unshare where the
 * command gets the caller's uid back) in a session of its own, as bwrap --new-session
 * does, keeps no descriptor above 2 (the working directory, the launcher, the start pipe
 * and the egress directory stay with the child alone), reaps every orphan and exits with
 * the child's status, 128 + n if it died of signal n; the kernel then kills whatever is
 * left in the namespace (pid_namespaces(7)), where PID 1 ignores every signal it has no
 * handler for. A shell in its place held the egress directory, dumpable, until it got
 * to close it after starting the command.
 */
static int pid1(char **argv)
{
	if (getpid() != 1) {
		fail("pid1 must run as PID 1 of a new PID namespace");
	}
	catch_terminate(pass_on_to_namespace);
	pid_t command = fork();
	if (command < 0) {
		fail("cannot fork the command: %s", strerror(errno));
	}
	if (command == 0) {
		if (setsid() < 0) {
			fail("cannot give the command a session of its own: %s", strerror(errno));
		}
		execvp(argv[0], argv);
		fail("cannot execute %s: %s", argv[0], strerror(errno));
	}
	close_above_stderr();
	return reap_until(command);
}

/* Set by SIGHUP (outer died) and SIGINT: contain kills the command's tree. */
static volatile sig_atomic_t stop_requested;

/* Set by SIGTERM (outer passes on the executor's): contain passes it on to the group. */
static volatile sig_atomic_t terminate_requested;

static void request_stop(int signal)
{
	(void) signal;
	stop_requested = 1;
}

static void request_terminate(int signal)
{
	(void) signal;
	terminate_requested = 1;
}

/* SIGCHLD only wakes sigsuspend(2) in await_command. */
static void note_child(int signal)
{
	(void) signal;
}

/*
 * Wait until the command has exited or a stop is requested, reaping the orphans that end
 * meanwhile (they come to this subreaper) but never the command: its zombie keeps its pid,
 * which is the id of its process group, from being given to another process until
 * end_tree has signalled the group. SIGHUP, SIGINT and SIGCHLD are blocked but in
 * sigsuspend(2), so a stop that comes between the check and the wait is not lost.
 */
static void await_command(pid_t command)
{
	sigset_t wake;
	sigset_t waiting;
	sigemptyset(&wake);
	sigaddset(&wake, SIGHUP);
	sigaddset(&wake, SIGINT);
	sigaddset(&wake, SIGCHLD);
	sigaddset(&wake, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &wake, &waiting) != 0) {
		fail("cannot block SIGHUP, SIGINT, SIGCHLD and SIGTERM: %s", strerror(errno));
	}
	sigdelset(&waiting, SIGHUP);
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGCHLD);
	sigdelset(&waiting, SIGTERM);
	while (!stop_requested) {
		if (terminate_requested) {
			/* The whole group at once, as end_tree's SIGKILL; the command too, in case
			 * it has no session of its own yet. */
			terminate_requested = 0;
			kill(-command, SIGTERM);
			kill(command, SIGTERM);
		}
		siginfo_t child;
		memset(&child, 0, sizeof child);
		if (waitid(P_ALL, 0, &child, WEXITED | WNOHANG | WNOWAIT) != 0) {
			fail("lost the command: %s", strerror(errno));
		}
		if (child.si_pid == command) {
			return;
		}
		if (child.si_pid == 0) {
			sigsuspend(&waiting);
		}
		else {
			waitpid(child.si_pid, NULL, 0);
		}
	}
}

/*
 * End the command's whole tree and return the command's status. Every process of the
 * tree is in the command's process group, which none can leave (the filter refuses
 * setsid(2) and setpgid(2) without a PID namespace), so one kill(2) of the group ends it:
 * the kernel signals every member under the tasklist lock, and a fork that the signal
 * overtakes fails (kernel/fork.c copy_process: "Let kill terminate clone/fork in the
 * middle"), so no process is born outside the signal however fast the tree forks. The
 * command itself too, in case the stop came before it made a session of its own. Then
 * reap every child, the orphans that come to this subreaper as the tree dies included,
 * until none is left: a process in an uninterruptible sleep dies when it wakes.
 */
static int end_tree(pid_t command)
{
	kill(-command, SIGKILL);
	kill(command, SIGKILL);
	int result = -1;
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0 && errno == EINTR) {
			continue;
		}
		if (pid < 0 && errno == ECHILD) {
			break;
		}
		if (pid < 0) {
			fail("lost the command's tree: %s", strerror(errno));
		}
		if (pid == command) {
			result = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		}
	}
	if (result < 0) {
		fail("lost the command's exit status");
	}
	return result;
}

/*
 * The seccomp rung's wrapper (outer runs it as /proc/self/fd/4): a child subreaper that
 * forks the command (which makes a session of its own, then does the set-up of exec,
 * Landlock included), waits for it, and then ends its whole tree (end_tree), also when
 * outer dies (SIGHUP) or on SIGINT, before it exits with the command's status. Never
 * kill(-1) or its own process group: without a PID namespace those reach processes that
 * are not the command's.
 */
static int contain(const struct options *options, char **argv)
{
	pid_t parent = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGHUP, 0, 0, 0) != 0) {
		fail("cannot ask for SIGHUP when outer dies: %s", strerror(errno));
	}
	struct sigaction stop;
	memset(&stop, 0, sizeof stop);
	stop.sa_handler = request_stop;
	sigemptyset(&stop.sa_mask);
	struct sigaction child_ended = stop;
	child_ended.sa_handler = note_child;
	if (sigaction(SIGHUP, &stop, NULL) != 0 || sigaction(SIGINT, &stop, NULL) != 0
	    || sigaction(SIGCHLD, &child_ended, NULL) != 0) {
		fail("cannot catch SIGHUP, SIGINT and SIGCHLD: %s", strerror(errno));
	}
	catch_terminate(request_terminate);
	if (getppid() != parent) {
		fail("outer died before the command started");
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		fail("cannot become the subreaper of the command: %s", strerror(errno));
	}
	pid_t self = getpid();
	pid_t command = fork();
	if (command < 0) {
		fail("cannot fork the command: %s", strerror(errno));
	}
	if (command == 0) {
		/* The command dies with this process too, even by SIGKILL. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != self) {
			fail("cannot tie the command to its containing process: %s", strerror(errno));
		}
		/* A session of its own, as bwrap --new-session and unshare's setsid give it: in
		 * the JVM's session it could push input into the JVM's terminal (TIOCSTI). Its
		 * process group is the one end_tree kills. */
		if (setsid() < 0) {
			fail("cannot give the command a session of its own: %s", strerror(errno));
		}
		int start = set_up(options, 0);
		/* A change of the effective uid (--command-user) cleared the parent-death
		 * signal: ask again, and make sure this process has not been orphaned since. */
		if (options->command_user >= 0
		    && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != self)) {
			fail("cannot tie the command user's process to its containing process: %s", strerror(errno));
		}
		/* No user namespace: RLIMIT_NPROC counts the uid's other tasks too. */
		set_limits(options, 1);
		signal_start(start);
		execute(argv);
	}
	/* Only the command writes the start byte; this process needs no descriptor above 2. */
	close_above_stderr();
	await_command(command);
	return end_tree(command);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cave-sandbox-launcher %s\n", LAUNCHER_VERSION);
		return 0;
	}
	/* Not dumpable from the first step on (prctl(2)), whatever the mode: /proc shows a
	 * process's descriptors, working directory, environment and memory only to whoever
	 * may ptrace it (proc(5), PTRACE_MODE_READ), and a process of the command's own uid
	 * may unless the target is not dumpable. The descriptors this process inherited were
	 * open before it ran, but no command existed yet in its PID namespace (init, pid1,
	 * and exec's processes are started before the command; outer and contain run on the
	 * host, where the command user differs from a root JVM's uid and Landlock scopes
	 * ptrace). execve(2) makes the command dumpable again. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		fail("cannot make the launcher non-dumpable: %s", strerror(errno));
	}
	if (argc < 2) {
		fail("usage: cave-sandbox-launcher --version | outer --workdir DIR [--listed PATH]... -- WRAPPER ARGS... | "
		     "pid1 -- ARGS... | "
		     "init|exec|contain [--allow-inet] [--allow-userns] [--check] [--no-mount-namespace] [--command-user UID] "
		     "[--command-group GID (contain)] [--read|--mask|--write PATH]... "
		     "[--limit-memory|--limit-processes|--limit-cpu|--limit-file-size|--limit-open-files N]... "
		     "-- CMD ARGS...");
	}
	const char *mode = argv[1];
	struct options options = { .command_user = -1, .command_group = -1 };
	const char *directory = NULL;
	const char *egress = NULL;
	/* At most one path per two arguments: room for every --read, --mask and --write. */
	options.reads = calloc((size_t) argc, sizeof *options.reads);
	options.masks = calloc((size_t) argc, sizeof *options.masks);
	options.writes = calloc((size_t) argc, sizeof *options.writes);
	options.listed = calloc((size_t) argc, sizeof *options.listed);
	if (options.reads == NULL || options.masks == NULL || options.writes == NULL || options.listed == NULL) {
		fail("out of memory");
	}
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--allow-inet") == 0) {
			options.allow_inet = 1;
		}
		else if (strcmp(argv[i], "--allow-userns") == 0) {
			options.allow_userns = 1;
		}
		else if (strcmp(argv[i], "--check") == 0) {
			options.check = 1;
		}
		else if (strcmp(argv[i], "--no-mount-namespace") == 0) {
			options.no_mount_namespace = 1;
		}
		else if ((strcmp(argv[i], "--read") == 0 || strcmp(argv[i], "--mask") == 0
			  || strcmp(argv[i], "--write") == 0)
			 && i + 1 < argc) {
			if (!normalized_path(argv[i + 1])) {
				fail("%s needs an absolute, normalized path without . or .. components, not '%s'", argv[i],
				     argv[i + 1]);
			}
			if (argv[i][2] == 'r') {
				options.reads[options.read_count++] = argv[++i];
			}
			else if (argv[i][2] == 'm') {
				options.masks[options.mask_count++] = argv[++i];
			}
			else {
				options.writes[options.write_count++] = argv[++i];
			}
		}
		else if (strcmp(argv[i], "--listed") == 0 && i + 1 < argc) {
			if (!normalized_path(argv[i + 1])) {
				fail("--listed needs an absolute, normalized path without . or .. components, not '%s'",
				     argv[i + 1]);
			}
			options.listed[options.listed_count++] = argv[++i];
		}
		else if (strcmp(argv[i], "--workdir") == 0 && i + 1 < argc) {
			directory = argv[++i];
		}
		else if (strcmp(argv[i], "--egress") == 0 && i + 1 < argc) {
			if (!normalized_path(argv[i + 1])) {
				fail("--egress needs an absolute, normalized path without . or .. components, not '%s'",
				     argv[i + 1]);
			}
			egress = argv[++i];
		}
		else if (strcmp(argv[i], "--egress-port") == 0 && i + 1 < argc) {
			unsigned long long port = positive_number(argv[i], argv[i + 1]);
			if (port > 65535) {
				fail("--egress-port %s is not a port", argv[i + 1]);
			}
			options.egress_port = (unsigned long) port;
			i++;
		}
		else if ((strcmp(argv[i], "--command-user") == 0 || strcmp(argv[i], "--command-group") == 0)
			 && i + 1 < argc) {
			unsigned long long id = positive_number(argv[i], argv[i + 1]);
			if (id > 0x7fffffffULL) {
				fail("%s %s is not an id from 1 to 2147483647", argv[i], argv[i + 1]);
			}
			*((strcmp(argv[i], "--command-user") == 0) ? &options.command_user : &options.command_group) = (long) id;
			i++;
		}
		else {
			size_t limit = 0;
			while (limit < LIMIT_COUNT && strcmp(argv[i], LIMIT_OPTIONS[limit].option) != 0) {
				limit++;
			}
			if (limit == LIMIT_COUNT || i + 1 >= argc) {
				fail("unknown option %s", argv[i]);
			}
			options.limits[limit] = positive_number(argv[i], argv[i + 1]);
			i++;
		}
	}
	if (i + 1 >= argc) {
		fail("no command after --");
	}
	char **command = &argv[i + 1];
	int viewed = options.read_count > 0 || options.mask_count > 0 || options.write_count > 0;
	if (viewed && (!options.no_mount_namespace || strcmp(mode, "init") == 0 || strcmp(mode, "outer") == 0)) {
		fail("--read, --mask and --write are for exec and contain with --no-mount-namespace: a mount namespace "
		     "builds the view with its mounts");
	}
	if (options.listed_count > 0 && strcmp(mode, "outer") != 0) {
		fail("--listed is for outer: the wrapper binds the listed paths through its descriptors");
	}
	if (egress != NULL && strcmp(mode, "outer") != 0) {
		fail("--egress is for outer: the bridge reaches the egress directory through its descriptor");
	}
	if (options.egress_port != 0 && (strcmp(mode, "init") != 0 && strcmp(mode, "exec") != 0)) {
		fail("--egress-port is for init and exec: the egress bridge needs the sandbox's own network namespace");
	}
	if (options.egress_port != 0 && !options.allow_inet) {
		fail("--egress-port needs --allow-inet: the command reaches the bridge on its private loopback");
	}
	if (options.mask_count > 0 && options.read_count == 0) {
		fail("--mask needs a --read path that holds it: the host view masks nothing");
	}
	/* Only contain switches to a gid other than the uid: the user namespace of the other
	 * modes maps the command user's uid and gid, nothing else. */
	if (options.command_group >= 0 && (options.command_user < 0 || strcmp(mode, "contain") != 0)) {
		fail("--command-group is for contain with --command-user");
	}
	if (strcmp(mode, "outer") == 0) {
		for (size_t limit = 0; limit < LIMIT_COUNT; limit++) {
			if (options.limits[limit] != 0) {
				fail("%s is for init, exec and contain: the limits are the command's", LIMIT_OPTIONS[limit].option);
			}
		}
		return outer(directory, options.listed, options.listed_count, egress, options.command_user, command);
	}
	if (strcmp(mode, "pid1") == 0) {
		if (i != 2) {
			fail("pid1 takes no options: its child, the launcher's exec, takes the command's");
		}
		return pid1(command);
	}
	if (strcmp(mode, "init") == 0) {
		if (options.no_mount_namespace) {
			fail("init runs in bubblewrap's mount namespace: --no-mount-namespace is for exec and contain");
		}
		return init(&options, command);
	}
	if (strcmp(mode, "contain") == 0) {
		options.host_user = 1;
		options.no_pid_namespace = 1;
		return contain(&options, command);
	}
	if (strcmp(mode, "exec") == 0) {
		int start = set_up(&options, 0);
		set_limits(&options, 0);
		signal_start(start);
		execute(command);
	}
	fail("unknown mode %s", mode);
}

#endif

#ifdef CAVE_SANDBOX_FILTER_GENERATOR

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
	fprintf(out, "/* The launcher's seccomp filters, exported by libseccomp %u.%u.%u from REFUSALS in "
		     "cave-sandbox-launcher.c by its filter generator: do not edit. */\n\n",
		version->major, version->minor, version->micro);
	for (int variant = 0; variant <= SESSION_FILTER; variant++) {
		struct options options = { .allow_inet = variant & 1,
					   .allow_userns = (variant & 2) != 0,
					   .no_mount_namespace = (variant & 4) != 0,
					   .no_pid_namespace = (variant & 8) != 0,
					   .command_user = -1 };
		scmp_filter_ctx filter = (variant == SESSION_FILTER) ? build_session_filter() : build_filter(&options);
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
	fprintf(out, "struct cave_filter {\n\tconst struct cave_sock_filter *program;\n\tunsigned short length;\n};\n\n");
	fprintf(out, "/* Indexed by (allow_inet ? 1 : 0) | (allow_userns ? 2 : 0) | (no_mount_namespace ? 4 : 0) "
		     "| (no_pid_namespace ? 8 : 0); then the session filter. */\n");
	fprintf(out, "static const struct cave_filter FILTERS[%d] = {\n", SESSION_FILTER + 1);
	for (int variant = 0; variant <= SESSION_FILTER; variant++) {
		fprintf(out, "\t{ FILTER_%d, sizeof FILTER_%d / sizeof FILTER_%d[0] },\n", variant, variant, variant);
	}
	fprintf(out, "};\n");
	if (fclose(out) != 0) {
		fail("cannot write %s: %s", argv[1], strerror(errno));
	}
	return 0;
}

#endif
