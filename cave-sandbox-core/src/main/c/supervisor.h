/*
 * The supervisor of unix sockets, within the launcher (launcher.h, "unix sockets"): what
 * its files share. supervisor.c (before the fork, and the thread that serves),
 * supervisor-dispatch.c (what a notification asks and whether it may: the target, its
 * address), supervisor-path.c (where a pathname leads), supervisor-worker.c (performing a
 * call as the command), supervisor-check.c (--check).
 */
#ifndef CAVE_SANDBOX_SUPERVISOR_H
#define CAVE_SANDBOX_SUPERVISOR_H

#include "launcher.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

/* seccomp_unotify(2) (linux/seccomp.h). */
struct cave_seccomp_data {
	int nr;
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t args[6];
};

struct cave_seccomp_notif {
	uint64_t id;
	uint32_t pid;
	uint32_t flags;
	struct cave_seccomp_data data;
};

struct cave_seccomp_notif_resp {
	uint64_t id;
	int64_t val;
	int32_t error;
	uint32_t flags;
};

#define CAVE_SECCOMP_IOCTL_NOTIF_RECV _IOWR('!', 0, struct cave_seccomp_notif)
#define CAVE_SECCOMP_IOCTL_NOTIF_SEND _IOWR('!', 1, struct cave_seccomp_notif_resp)
#define CAVE_SECCOMP_IOCTL_NOTIF_ID_VALID _IOW('!', 2, uint64_t)

/* openat2(2) (linux/openat2.h). */
struct cave_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define CAVE_RESOLVE_NO_MAGICLINKS 0x02
#define CAVE_RESOLVE_NO_SYMLINKS 0x04

/* capset(2) (linux/capability.h). */
#define CAVE_LINUX_CAPABILITY_VERSION_3 0x20080522

/* At most this many calls performed at once: one more is answered EAGAIN. */
#define MAX_PENDING 64
/* In the working directory: the sockets the command names directly in /tmp (private_sockets). */
#define PRIVATE_SOCKETS ".cave-sandbox-sockets"

/* What a worker performs. */
enum action {
	/* The call with the command's own address: a socket that is not AF_UNIX, an address
	 * that is not AF_UNIX or too short (the kernel refuses it, or autobinds), an
	 * abstract name on namespaces (a network namespace of the sandbox's own). */
	DIRECT,
	/* connect(2) to /proc/self/fd/<file>: the socket file, opened without following
	 * anything, beneath the working directory. */
	CONNECT_FILE,
	/* bind(2) with the command's own address (its name is what getsockname(2) shows),
	 * in a thread that Landlock lets make sockets only beneath the working directory,
	 * whose working directory is the command's (relative names) and umask the command's. */
	BIND_PATH,
	/* bind(2) of a name directly in /tmp: made in the private socket directory instead,
	 * as /proc/self/fd/<directory>/<name> (private_sockets). */
	BIND_PRIVATE,
	/* Nothing: a connect(2) of a socket connected already (supervisor_stale_answer). */
	ANSWER,
};

/* One notification: what the dispatcher learnt of it, and what a worker performs. */
struct job {
	uint64_t id;
	/* The target's pid in this process's PID namespace (the notification's), and in the
	 * namespace of /proc, the host's where there is no mount namespace (proc_pid). */
	pid_t pid;
	pid_t proc_pid;
	int connect;
	enum action action;
	int socket;
	int file;
	int base;
	struct sockaddr_storage address;
	socklen_t length;
	uid_t uid;
	gid_t gid;
	mode_t umask;
	/* The target's effective capabilities (CapEff): a command user's CAP_DAC_OVERRIDE and
	 * CAP_FOWNER in its user namespace, none on seccomp. */
	uint64_t capabilities;
	int slot;
};

/* The supervisor's state, one per launcher process (supervisor.c): set before the fork,
 * then read by the serving thread and its workers; pending and stale under lock. */
struct supervisor_state {
	int prepared;
	int listener;
	/* The channel's ends: this process's, and the command process's until the fork. */
	int channel;
	int child_channel;
	int workdir;
	struct stat workdir_status;
	/* The host's /tmp (st_ino 0: none), whose direct entries the command's sockets get
	 * in the private socket directory instead. */
	struct stat tmp_status;
	int ruleset;
	/* Whether the dispatcher lacks CAP_SYS_PTRACE, and so must take on a target's ids to
	 * reach it (assume_target). */
	int without_ptrace;
	/* The dispatcher's own real uid and gid, while it has taken on a target's. */
	uid_t own_uid;
	gid_t own_gid;
	/* seccomp: a network namespace shared with the host. */
	int shared_network;
	pthread_mutex_t lock;
	struct {
		int used;
		uint64_t id;
		pthread_t thread;
	} pending[MAX_PENDING];
	/* The sockets (by inode) that a worker connected after their target had stopped
	 * waiting (remember_stale): the target's next connect(2) of them gets 0. */
	ino_t stale[MAX_PENDING];
};

extern struct supervisor_state supervisor;

/* supervisor-worker.c: SIGUSR1's handler (it only interrupts a worker's call), the answer
 * to a notification, a connect(2) of a socket connected already, and a worker's thread. */
void supervisor_interrupt(int signal);
int supervisor_reply(uint64_t id, int error);
int supervisor_stale_answer(int socket);
void supervisor_release(struct job *job);
void *supervisor_work(void *argument);

/* supervisor-path.c: resolve the job's pathname; 0, or the errno to answer with. */
int supervisor_check_path(struct job *job);

/* supervisor-dispatch.c: decide a notification and hand it to a worker, or answer it. */
void supervisor_dispatch(const struct cave_seccomp_notif *request);

#endif
