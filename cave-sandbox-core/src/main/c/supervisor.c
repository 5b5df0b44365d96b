/*
 * The supervisor of unix sockets, only without a mount namespace (launcher.h, "unix
 * sockets"): the process of the launcher's own above the command (contain on seccomp,
 * exec's parent on namespaces) that answers the command's connect(2) and bind(2), which
 * the supervision filter hands it (seccomp_unotify(2)), by performing them itself on a
 * duplicate of the command's socket.
 */
#include "launcher.h"

/* pidfd_open(2): a pidfd of a thread, not only of a thread-group leader (Linux 6.9; O_EXCL). */
#define CAVE_PIDFD_THREAD 0x80

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
/* How often (ms) the dispatcher checks that the targets of pending calls still wait. */
#define WATCH_INTERVAL 20
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
	/* Nothing: a connect(2) of a socket connected already (stale_answer). */
	ANSWER,
};

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

static struct {
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
} supervisor = { .listener = -1, .channel = -1, .child_channel = -1, .workdir = -1, .ruleset = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* Why the supervision is not given ("" when it is prepared); for --check. */
static const char *unavailable = "not prepared";

const char *supervision_unavailable(void)
{
	return unavailable;
}

void set_supervision_unavailable(const char *reason)
{
	unavailable = reason;
}

int supervision_prepared(void)
{
	return supervisor.prepared;
}

/* ---- before the fork ------------------------------------------------------------------ */

/*
 * In the launcher process, before it forks the command: what the supervisor needs (the
 * working directory, the socket-making ruleset, pidfd_open(2) and pidfd_getfd(2)) and the
 * channel over which the command's process sends the listener. Returns 0, or -1 when the
 * supervision cannot be given (supervision_unavailable() says why; the command's process
 * then refuses socket(AF_UNIX) as before).
 */
int prepare_supervisor(const struct options *options)
{
	supervisor.shared_network = options->no_pid_namespace;
	supervisor.workdir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (supervisor.workdir < 0 || fstat(supervisor.workdir, &supervisor.workdir_status) != 0) {
		unavailable = "working-directory";
		return -1;
	}
	int tmp = open_path_no_symlinks("/tmp", 1);
	if (tmp >= 0) {
		if (fstat(tmp, &supervisor.tmp_status) != 0) {
			supervisor.tmp_status.st_ino = 0;
		}
		close(tmp);
	}
	supervisor.ruleset = socket_ruleset(supervisor.workdir);
	if (supervisor.ruleset < 0) {
		unavailable = "landlock";
		return -1;
	}
	int self = (int) syscall(SYS_pidfd_open, getpid(), 0);
	int copy = (self < 0) ? -1 : (int) syscall(SYS_pidfd_getfd, self, 0, 0);
	if (copy < 0) {
		unavailable = (self < 0) ? "pidfd_open" : "pidfd_getfd";
		if (self >= 0) {
			close(self);
		}
		return -1;
	}
	close(copy);
	close(self);
	struct {
		uint32_t version;
		int pid;
	} header = { CAVE_LINUX_CAPABILITY_VERSION_3, 0 };
	uint32_t sets[6];
	/* CAP_SYS_PTRACE (19) in the effective set (data[0].effective). */
	supervisor.without_ptrace = syscall(SYS_capget, &header, sets) != 0 || (sets[0] & (1U << 19)) == 0;
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
		unavailable = "socketpair";
		return -1;
	}
	supervisor.channel = pair[0];
	supervisor.child_channel = pair[1];
	supervisor.prepared = 1;
	unavailable = "";
	return 0;
}

/* In the command's process right after the fork: its end of the channel at SUPERVISOR_FD
 * (which set_up keeps), the other closed. */
void supervisor_child(void)
{
	if (!supervisor.prepared) {
		return;
	}
	close(supervisor.channel);
	if (dup2(supervisor.child_channel, SUPERVISOR_FD) != SUPERVISOR_FD) {
		fail("cannot place the supervisor's channel: %s", strerror(errno));
	}
	close(supervisor.child_channel);
}

/* In the command's process, after its filters: send the listener (SCM_RIGHTS), or
 * nothing (listener -1: the supervisor then stops at the channel's end). */
void send_listener(int listener)
{
	char byte = 1;
	struct iovec data = { &byte, 1 };
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(int))];
	} control;
	memset(&control, 0, sizeof control);
	struct msghdr message = { 0 };
	message.msg_iov = &data;
	message.msg_iovlen = 1;
	if (listener >= 0) {
		message.msg_control = control.space;
		message.msg_controllen = sizeof control.space;
		struct cmsghdr *header = CMSG_FIRSTHDR(&message);
		header->cmsg_level = SOL_SOCKET;
		header->cmsg_type = SCM_RIGHTS;
		header->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(header), &listener, sizeof(int));
		if (sendmsg(SUPERVISOR_FD, &message, MSG_NOSIGNAL) != 1) {
			fail("cannot pass the listener to the supervisor: %s", strerror(errno));
		}
		close(listener);
	}
	close(SUPERVISOR_FD);
}

/* ---- a worker: one call, performed with the command's credentials ------------------ */

static void interrupt(int signal)
{
	(void) signal;
}

/* Answer; 0, or -1 when the target no longer waits (ENOENT: it died, or a signal
 * interrupted the call). */
static int reply(uint64_t id, int error)
{
	struct cave_seccomp_notif_resp response = { id, 0, -error, 0 };
	return ioctl(supervisor.listener, CAVE_SECCOMP_IOCTL_NOTIF_SEND, &response);
}

/*
 * A connect(2) that succeeded after its target had stopped waiting (a signal interrupted
 * it between the dispatcher's last check and the connection): the socket is connected,
 * which the target does not know. Its next connect(2) of that socket gets 0 (stale_answer)
 * instead of EISCONN, so that a restarted or retried call ends as it would have without
 * the supervisor; the connection is the one it asked for. Called with the lock held.
 */
static void remember_stale(int socket)
{
	struct stat status;
	if (fstat(socket, &status) != 0) {
		return;
	}
	for (int i = 0; i < MAX_PENDING; i++) {
		if (supervisor.stale[i] == 0) {
			supervisor.stale[i] = status.st_ino;
			return;
		}
	}
}

/* For a connect(2) of a unix socket that is connected already: 0 for one that
 * remember_stale recorded (forgotten then), else EISCONN (af_unix.c unix_stream_connect). */
static int stale_answer(int socket)
{
	struct stat status;
	int error = EISCONN;
	pthread_mutex_lock(&supervisor.lock);
	for (int i = 0; fstat(socket, &status) == 0 && i < MAX_PENDING; i++) {
		if (supervisor.stale[i] == status.st_ino) {
			supervisor.stale[i] = 0;
			error = 0;
			break;
		}
	}
	pthread_mutex_unlock(&supervisor.lock);
	return error;
}

/*
 * Take on the command's effective ids, no supplementary group and the command's effective
 * capabilities (no more than this process has), in this thread only (raw system calls:
 * the C library would change every thread): its permissions decide, the socket file it binds is its own, and its peer sees its uid
 * (SO_PEERCRED). A supervisor of the command's own uid without privilege changes nothing.
 */
static int become_command(const struct job *job)
{
	if (syscall(SYS_setgroups, 0, NULL) != 0 && errno != EPERM) {
		return errno;
	}
	/* Keep the permitted set across the change of uid (this thread's securebit), so that
	 * what the target has can be given back below. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
		return EACCES;
	}
	if ((gid_t) syscall(SYS_getegid) != job->gid && syscall(SYS_setresgid, -1, job->gid, -1) != 0) {
		return EACCES;
	}
	if ((uid_t) syscall(SYS_geteuid) != job->uid && syscall(SYS_setresuid, -1, job->uid, -1) != 0) {
		return EACCES;
	}
	struct {
		uint32_t version;
		int pid;
	} header = { CAVE_LINUX_CAPABILITY_VERSION_3, 0 };
	uint32_t sets[6];
	if (syscall(SYS_capget, &header, sets) != 0) {
		return EACCES;
	}
	/* The target's effective capabilities that this thread has, no more: effective and
	 * permitted alike, inheritable none (data[0]: bits 0-31, data[1]: 32-63). */
	uint64_t permitted = ((uint64_t) sets[4] << 32) | sets[1];
	uint64_t keep = job->capabilities & permitted;
	uint32_t kept[6] = { (uint32_t) keep, (uint32_t) keep, 0, (uint32_t) (keep >> 32), (uint32_t) (keep >> 32), 0 };
	if (syscall(SYS_capset, &header, kept) != 0) {
		return EACCES;
	}
	return 0;
}

/*
 * A socket file left in the private socket directory by a socket that no longer listens:
 * removed, as the program's own unlink(2) of its name in /tmp would have removed it (that
 * unlink reaches the host's /tmp, where nothing is). LibreOffice restarts itself after it
 * made its profile and binds its pipe's name again. A socket that still listens, or whose
 * backlog is full, stays (the bind then gets EADDRINUSE).
 */
static void remove_stale(const struct job *job)
{
	const struct sockaddr_un *address = (const struct sockaddr_un *) &job->address;
	const char *name = strrchr(address->sun_path, '/') + 1;
	/* Opened without following a link, and connected to through its descriptor: a name
	 * swapped for a link meanwhile leads nowhere else. */
	int file = openat(job->file, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat status;
	if (file < 0) {
		return;
	}
	int probe = -1;
	if (fstat(file, &status) == 0 && S_ISSOCK(status.st_mode)
	    && (probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) >= 0) {
		struct sockaddr_un through = { .sun_family = AF_UNIX };
		snprintf(through.sun_path, sizeof through.sun_path, "/proc/self/fd/%d", file);
		if (connect(probe, (struct sockaddr *) &through, sizeof through) != 0 && errno == ECONNREFUSED) {
			unlinkat(job->file, name, 0);
		}
		close(probe);
	}
	close(file);
}

static int bind_as_target(const struct job *job);

static int perform(const struct job *job)
{
	if (job->action == ANSWER) {
		return 0;
	}
	if ((job->action == BIND_PATH || job->action == BIND_PRIVATE) && restrict_thread(supervisor.ruleset) != 0) {
		/* Only beneath the working directory may this thread make a socket: a directory of
		 * the path swapped for a symbolic link since the check cannot lead the bind out. */
		return EACCES;
	}
	int error = become_command(job);
	if (error != 0) {
		return error;
	}
	int result;
	if (job->action == CONNECT_FILE) {
		struct sockaddr_un file = { .sun_family = AF_UNIX };
		snprintf(file.sun_path, sizeof file.sun_path, "/proc/self/fd/%d", job->file);
		result = connect(job->socket, (struct sockaddr *) &file, sizeof file);
	}
	else if (job->connect) {
		result = connect(job->socket, (const struct sockaddr *) &job->address, job->length);
	}
	else {
		result = bind_as_target(job);
	}
	return (result == 0) ? 0 : errno;
}

/*
 * bind(2) in the target's working directory (a relative name) and with its umask: both
 * belong to this process (threads share them; unshare(CLONE_FS) would give a thread its
 * own, but Docker's default profile refuses unshare), so binds take turns under a lock,
 * which no other thread needs (the dispatcher resolves from descriptors and absolute
 * paths only). A bind does not block.
 */
static int bind_as_target(const struct job *job)
{
	static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&bind_lock);
	mode_t before = umask(job->umask);
	int result = -1;
	int error = EACCES;
	if (job->base < 0 || fchdir(job->base) == 0) {
		if (job->action == BIND_PRIVATE) {
			remove_stale(job);
		}
		result = bind(job->socket, (const struct sockaddr *) &job->address, job->length);
		error = errno;
	}
	if (job->base >= 0 && fchdir(supervisor.workdir) != 0) {
		/* Nothing depends on this process's working directory but the next bind, which
		 * sets its own. */
		error = (result == 0) ? 0 : error;
	}
	umask(before);
	pthread_mutex_unlock(&bind_lock);
	errno = error;
	return result;
}

static void release(struct job *job)
{
	if (job->socket >= 0) {
		close(job->socket);
	}
	if (job->file >= 0) {
		close(job->file);
	}
	if (job->base >= 0) {
		close(job->base);
	}
	free(job);
}

static void *work(void *argument)
{
	struct job *job = argument;
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	int error = perform(job);
	int answered = reply(job->id, error) == 0;
	pthread_mutex_lock(&supervisor.lock);
	if (!answered && error == 0 && job->connect && job->action != ANSWER) {
		remember_stale(job->socket);
	}
	supervisor.pending[job->slot].used = 0;
	pthread_mutex_unlock(&supervisor.lock);
	release(job);
	return NULL;
}

/* ---- the dispatcher: check the address, take the socket, hand it to a worker --------- */

/* Whether directory lies beneath the working directory (or is it), by walking "..". */
static int beneath_workdir(int directory)
{
	int current = dup(directory);
	for (int depth = 0; current >= 0 && depth < 4096; depth++) {
		struct stat status;
		if (fstat(current, &status) != 0) {
			break;
		}
		if (status.st_dev == supervisor.workdir_status.st_dev && status.st_ino == supervisor.workdir_status.st_ino) {
			close(current);
			return 1;
		}
		int parent = openat(current, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat parent_status;
		if (parent < 0 || fstat(parent, &parent_status) != 0
		    || (parent_status.st_dev == status.st_dev && parent_status.st_ino == status.st_ino)) {
			if (parent >= 0) {
				close(parent);
			}
			break;
		}
		close(current);
		current = parent;
	}
	if (current >= 0) {
		close(current);
	}
	return 0;
}

/*
 * Read what the kernel would copy in (move_addr_to_kernel): EINVAL above 128 bytes, EFAULT
 * for an address the target cannot read; EACCES where its memory is out of this process's
 * reach (a target that made itself non-dumpable, for a supervisor without CAP_SYS_PTRACE).
 */
static int read_address(struct job *job, uint64_t address)
{
	if (job->length > sizeof job->address) {
		return EINVAL;
	}
	memset(&job->address, 0, sizeof job->address);
	if (job->length == 0) {
		return 0;
	}
	struct iovec local = { &job->address, job->length };
	struct iovec remote = { (void *) (uintptr_t) address, job->length };
	ssize_t read = syscall(SYS_process_vm_readv, job->pid, &local, 1, &remote, 1, 0);
	if (read < 0 && errno != EFAULT) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/mem", (int) job->proc_pid);
		int memory = open(path, O_RDONLY | O_CLOEXEC);
		if (memory < 0) {
			return (errno == ENOENT || errno == ESRCH) ? ESRCH : EACCES;
		}
		read = pread(memory, &job->address, job->length, (off_t) address);
		close(memory);
	}
	return (read == (ssize_t) job->length) ? 0 : EFAULT;
}

/* The target's effective ids and umask (proc(5), /proc/PID/status). */
static int read_credentials(struct job *job)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int) job->proc_pid);
	FILE *status = fopen(path, "re");
	if (status == NULL) {
		return ESRCH;
	}
	char line[256];
	int found = 0;
	while (fgets(line, sizeof line, status) != NULL) {
		unsigned long real, effective, mask;
		unsigned long long capabilities;
		if (sscanf(line, "Uid: %lu %lu", &real, &effective) == 2) {
			job->uid = (uid_t) effective;
			found |= 1;
		}
		else if (sscanf(line, "Gid: %lu %lu", &real, &effective) == 2) {
			job->gid = (gid_t) effective;
			found |= 2;
		}
		else if (sscanf(line, "Umask: %lo", &mask) == 1) {
			job->umask = (mode_t) mask;
			found |= 4;
		}
		else if (sscanf(line, "CapEff: %llx", &capabilities) == 1) {
			job->capabilities = (uint64_t) capabilities;
			found |= 8;
		}
	}
	fclose(status);
	return (found == 15) ? 0 : ESRCH;
}

/* Whether directory is the host's /tmp. */
static int is_tmp(int directory)
{
	struct stat status;
	return supervisor.tmp_status.st_ino != 0 && fstat(directory, &status) == 0
	       && status.st_dev == supervisor.tmp_status.st_dev && status.st_ino == supervisor.tmp_status.st_ino;
}

/*
 * The private socket directory, PRIVATE_SOCKETS in the working directory, made on first
 * use for the target's uid and gid (mode 0700): a program that puts its socket directly in
 * /tmp whatever TMPDIR says (LibreOffice: sal/osl/unx/pipe.cxx takes /tmp whenever
 * access(2) calls it writable, which Landlock does not change) gets it there, and a
 * connect(2) to a name in /tmp reaches only what the command made there, never the
 * host's /tmp. Opened without following a link; -1 when it cannot be had.
 */
static int private_sockets(const struct job *job)
{
	int directory = openat(supervisor.workdir, PRIVATE_SOCKETS, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (directory < 0 && errno == ENOENT) {
		if (mkdirat(supervisor.workdir, PRIVATE_SOCKETS, 0700) != 0 && errno != EEXIST) {
			return -1;
		}
		directory = openat(supervisor.workdir, PRIVATE_SOCKETS, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat status;
		if (directory >= 0 && fstat(directory, &status) == 0
		    && (status.st_uid != job->uid || status.st_gid != job->gid)
		    && fchownat(directory, "", job->uid, job->gid, AT_EMPTY_PATH) != 0) {
			close(directory);
			return -1;
		}
	}
	return directory;
}

/*
 * A pathname: its directory, resolved without following any symbolic link (openat2(2)
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from the root or the target's working
 * directory, must lie beneath the working directory; its last component must be a name.
 */
static int check_path(struct job *job)
{
	const struct sockaddr_un *address = (const struct sockaddr_un *) &job->address;
	size_t length = strnlen(address->sun_path, job->length - offsetof(struct sockaddr_un, sun_path));
	char path[sizeof address->sun_path + 1];
	memcpy(path, address->sun_path, length);
	path[length] = '\0';
	char *slash = strrchr(path, '/');
	const char *name = (slash == NULL) ? path : slash + 1;
	if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		return EACCES;
	}
	const char *directory = ".";
	if (slash == path) {
		directory = "/";
	}
	else if (slash != NULL) {
		*slash = '\0';
		directory = path;
	}
	int base = AT_FDCWD;
	if (path[0] != '/') {
		char cwd[64];
		snprintf(cwd, sizeof cwd, "/proc/%d/cwd", (int) job->proc_pid);
		base = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (base < 0) {
			return ESRCH;
		}
		job->base = base;
	}
	struct cave_open_how how = { O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				     CAVE_RESOLVE_NO_SYMLINKS | CAVE_RESOLVE_NO_MAGICLINKS };
	int parent = (int) syscall(SYS_openat2, base, directory, &how, sizeof how);
	if (parent < 0) {
		return (errno == ELOOP || errno == EXDEV) ? EACCES : errno;
	}
	int private = is_tmp(parent);
	if (private) {
		close(parent);
		parent = private_sockets(job);
		if (parent < 0) {
			return EACCES;
		}
	}
	int error = beneath_workdir(parent) ? 0 : EACCES;
	if (error == 0 && job->connect) {
		job->file = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat status;
		if (job->file < 0) {
			error = errno;
		}
		else if (fstat(job->file, &status) != 0 || S_ISLNK(status.st_mode)) {
			error = EACCES;
		}
		else if (!S_ISSOCK(status.st_mode)) {
			/* unix_find_bsd: a file that is not a socket. */
			error = ECONNREFUSED;
		}
		job->action = CONNECT_FILE;
	}
	else if (error == 0 && private) {
		/* Kept open for the bind through /proc/self/fd (perform). */
		struct sockaddr_un *address = (struct sockaddr_un *) &job->address;
		int length = snprintf(address->sun_path, sizeof address->sun_path, "/proc/self/fd/%d/%s", parent, name);
		if (length < 0 || (size_t) length >= sizeof address->sun_path) {
			error = ENAMETOOLONG;
		}
		job->length = sizeof *address;
		job->file = parent;
		job->action = BIND_PRIVATE;
		return error;
	}
	else {
		job->action = BIND_PATH;
	}
	close(parent);
	return error;
}

/*
 * The target's pid as /proc numbers it: on namespaces the supervisor is in the sandbox's
 * PID namespace, but /proc is the host's (no mount namespace), so /proc/<pid> would be
 * another process. The pidfd's fdinfo shows the pid in the namespace of the /proc it is
 * read through ("Pid:", Linux 5.3; pidfd_show_fdinfo). -1 when it cannot be read.
 */
static pid_t proc_pid(int pidfd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
	FILE *info = fopen(path, "re");
	if (info == NULL) {
		return -1;
	}
	char line[128];
	long pid = -1;
	while (fgets(line, sizeof line, info) != NULL) {
		if (sscanf(line, "Pid: %ld", &pid) == 1) {
			break;
		}
	}
	fclose(info);
	return (pid > 0) ? (pid_t) pid : -1;
}

/*
 * Where this process lacks CAP_SYS_PTRACE (a root supervisor under Docker's default
 * capabilities), take on the target's real and effective uid and gid in this thread
 * (with CAP_SYS_PTRACE it keeps its own: the change would clear its effective
 * capabilities, which must cover the target's, cap_ptrace_access_check), the saved ones
 * kept, so that resume_supervisor can return (raw system calls: this thread only). 1 when
 * it switched, 0 when there was nothing to switch or it could not (the calls that follow
 * then fail as they would: EACCES).
 */
static int assume_target(const struct job *job)
{
	uid_t uid = (uid_t) syscall(SYS_getuid);
	gid_t gid = (gid_t) syscall(SYS_getgid);
	if (!supervisor.without_ptrace || (uid == job->uid && gid == job->gid)) {
		return 0;
	}
	supervisor.own_uid = uid;
	supervisor.own_gid = gid;
	if (syscall(SYS_setresgid, job->gid, job->gid, -1) != 0) {
		return 0;
	}
	if (syscall(SYS_setresuid, job->uid, job->uid, -1) != 0) {
		syscall(SYS_setresgid, gid, gid, -1);
		return 0;
	}
	return 1;
}

/* Back to the supervisor's ids: the uid first, which gives the capabilities back
 * (commit_creds: an effective uid of 0 again), then the gid. */
static void resume_supervisor(void)
{
	if (syscall(SYS_setresuid, supervisor.own_uid, supervisor.own_uid, -1) != 0
	    || syscall(SYS_setresgid, supervisor.own_gid, supervisor.own_gid, -1) != 0) {
		/* A dispatcher that cannot be itself again must not go on: fail closed. */
		abort();
	}
}

/* Decide what to perform for the notification; 0, or the errno to answer with. */
static int prepare(struct job *job, const struct cave_seccomp_notif *request)
{
	/* The notification names the calling thread, which is not the thread-group leader in a
	 * threaded program (a JVM, Go, threaded Python): pidfd_open(2) takes a thread's id only
	 * with PIDFD_THREAD (Linux 6.9); before that only a leader's calls can be served (ESRCH
	 * for the others, fail closed; README). The descriptor table, memory and working
	 * directory that the thread's pidfd reaches are its process's. */
	int pidfd = (int) syscall(SYS_pidfd_open, job->pid, CAVE_PIDFD_THREAD);
	if (pidfd < 0 && errno == EINVAL) {
		pidfd = (int) syscall(SYS_pidfd_open, job->pid, 0);
	}
	if (pidfd < 0) {
		return ESRCH;
	}
	job->proc_pid = proc_pid(pidfd);
	int error = (job->proc_pid > 0) ? read_credentials(job) : ESRCH;
	/* What needs ptrace access to the target (its memory, its working directory, its
	 * descriptor), as the target's uid and gid where this process has another: a root
	 * supervisor without CAP_SYS_PTRACE (Docker's default capabilities) reaches a
	 * command user's process only so (ptrace_may_access: same ids). */
	int assumed = (error == 0) ? assume_target(job) : 0;
	if (error == 0) {
		error = read_address(job, request->data.args[1]);
	}
	const struct sockaddr_un *address = (const struct sockaddr_un *) &job->address;
	int pathname = error == 0 && job->length > offsetof(struct sockaddr_un, sun_path)
		       && address->sun_family == AF_UNIX && address->sun_path[0] != '\0';
	int abstract = error == 0 && job->length > offsetof(struct sockaddr_un, sun_path)
		       && address->sun_family == AF_UNIX && address->sun_path[0] == '\0';
	if (pathname) {
		/* Reads /proc/PID/cwd: before the check that the pid is still the target's. */
		error = check_path(job);
	}
	if (error == 0 && ioctl(supervisor.listener, CAVE_SECCOMP_IOCTL_NOTIF_ID_VALID, &job->id) != 0) {
		error = ESRCH;
	}
	if (error == 0) {
		job->socket = (int) syscall(SYS_pidfd_getfd, pidfd, (int) request->data.args[0], 0);
		if (job->socket < 0) {
			error = (errno == EBADF) ? EBADF : EACCES;
		}
	}
	close(pidfd);
	if (assumed) {
		resume_supervisor();
	}
	if (error != 0) {
		return error;
	}
	struct stat status;
	int domain = -1;
	socklen_t size = sizeof domain;
	if (fstat(job->socket, &status) != 0 || !S_ISSOCK(status.st_mode)) {
		return ENOTSOCK;
	}
	if (getsockopt(job->socket, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0) {
		return EACCES;
	}
	struct sockaddr_storage peer;
	socklen_t peer_length = sizeof peer;
	if (domain == AF_UNIX && job->connect && getpeername(job->socket, (struct sockaddr *) &peer, &peer_length) == 0) {
		job->action = ANSWER;
		return stale_answer(job->socket);
	}
	if (domain != AF_UNIX || (!pathname && !abstract)) {
		/* Nothing to resolve: the kernel answers for an address that is not AF_UNIX's
		 * (EINVAL) or autobinds (the family alone, unix_bind). */
		job->action = DIRECT;
		return 0;
	}
	if (abstract) {
		/* A network namespace of the sandbox's own has an abstract namespace of its own;
		 * the host's (seccomp) does not: Landlock's scope would not hold for this
		 * process, and a name bound there could be reached from the host. */
		job->action = DIRECT;
		return supervisor.shared_network ? EACCES : 0;
	}
	return 0;
}

static void dispatch(const struct cave_seccomp_notif *request)
{
	struct job *job = calloc(1, sizeof *job);
	if (job == NULL) {
		reply(request->id, ENOMEM);
		return;
	}
	job->id = request->id;
	job->pid = (pid_t) request->pid;
	job->connect = request->data.nr == SYS_connect;
	job->length = (socklen_t) (uint32_t) request->data.args[2];
	job->socket = -1;
	job->file = -1;
	job->base = -1;
	int error = (request->data.nr == SYS_connect || request->data.nr == SYS_bind) ? prepare(job, request) : EACCES;
	pthread_mutex_lock(&supervisor.lock);
	int slot = -1;
	for (int i = 0; error == 0 && i < MAX_PENDING && slot < 0; i++) {
		if (!supervisor.pending[i].used) {
			slot = i;
		}
	}
	if (error == 0 && slot < 0) {
		error = EAGAIN;
	}
	if (error == 0) {
		job->slot = slot;
		supervisor.pending[slot].used = 1;
		supervisor.pending[slot].id = job->id;
		pthread_attr_t attributes;
		pthread_attr_init(&attributes);
		pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attributes, 64 * 1024);
		if (pthread_create(&supervisor.pending[slot].thread, &attributes, work, job) != 0) {
			supervisor.pending[slot].used = 0;
			error = EAGAIN;
		}
		pthread_attr_destroy(&attributes);
	}
	pthread_mutex_unlock(&supervisor.lock);
	if (error != 0) {
		reply(job->id, error);
		release(job);
	}
}

/* Interrupt the workers whose target no longer waits (a signal ended its call): the
 * kernel would have interrupted a blocking connect(2) then, leaving the socket as it
 * was; the target restarts the call or sees EINTR, as without the supervisor. */
static int watch(void)
{
	int any = 0;
	pthread_mutex_lock(&supervisor.lock);
	for (int i = 0; i < MAX_PENDING; i++) {
		if (supervisor.pending[i].used) {
			any = 1;
			if (ioctl(supervisor.listener, CAVE_SECCOMP_IOCTL_NOTIF_ID_VALID, &supervisor.pending[i].id) != 0) {
				pthread_kill(supervisor.pending[i].thread, SIGUSR1);
			}
		}
	}
	pthread_mutex_unlock(&supervisor.lock);
	return any;
}

static int receive_listener(void)
{
	char byte;
	struct iovec data = { &byte, 1 };
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr message = { 0 };
	message.msg_iov = &data;
	message.msg_iovlen = 1;
	message.msg_control = control.space;
	message.msg_controllen = sizeof control.space;
	ssize_t received;
	do {
		received = recvmsg(supervisor.channel, &message, MSG_CMSG_CLOEXEC);
	} while (received < 0 && errno == EINTR);
	struct cmsghdr *header = (received == 1) ? CMSG_FIRSTHDR(&message) : NULL;
	int listener = -1;
	if (header != NULL && header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
		memcpy(&listener, CMSG_DATA(header), sizeof(int));
	}
	close(supervisor.channel);
	return listener;
}

static void *serve(void *unused)
{
	(void) unused;
	supervisor.listener = receive_listener();
	if (supervisor.listener < 0) {
		return NULL;
	}
	int waiting = 0;
	for (;;) {
		struct pollfd ready = { supervisor.listener, POLLIN, 0 };
		int events = poll(&ready, 1, waiting ? WATCH_INTERVAL : -1);
		if (events < 0 && errno != EINTR) {
			break;
		}
		if (events > 0 && (ready.revents & POLLIN) != 0) {
			struct cave_seccomp_notif request;
			memset(&request, 0, sizeof request);
			if (ioctl(supervisor.listener, CAVE_SECCOMP_IOCTL_NOTIF_RECV, &request) == 0) {
				dispatch(&request);
			}
		}
		else if (events > 0 && (ready.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
			/* No filtered task is left. */
			break;
		}
		waiting = watch();
	}
	return NULL;
}

/*
 * In the launcher process after the fork, its descriptors but the channel's, the working
 * directory's and the ruleset's closed: serve in a thread of its own, every signal blocked
 * in it and its workers (the process's own thread keeps waiting for its signals). A
 * worker's blocking connect(2) is interrupted by SIGUSR1 (watch), without SA_RESTART.
 */
static void start_supervisor(void)
{
	catch_signal(SIGUSR1, interrupt);
	sigset_t all;
	sigset_t before;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	pthread_t thread;
	int error = pthread_create(&thread, NULL, serve, NULL);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (error != 0) {
		fail("cannot start the supervisor: %s", strerror(error));
	}
	pthread_detach(thread);
}

/*
 * In the launcher process after the fork: close every descriptor from 3 up but the
 * supervisor's (its channel's end, the working directory, the ruleset), then serve.
 */
void supervise(void)
{
	close(supervisor.child_channel);
	int kept[3] = { supervisor.channel, supervisor.workdir, supervisor.ruleset };
	for (int i = 0; i < 3; i++) {
		for (int j = i + 1; j < 3; j++) {
			if (kept[j] < kept[i]) {
				int swap = kept[i];
				kept[i] = kept[j];
				kept[j] = swap;
			}
		}
	}
	unsigned int from = 3;
	for (int i = 0; i <= 3; i++) {
		unsigned int to = (i < 3) ? (unsigned int) kept[i] : ~0U;
		if (to > from && syscall(SYS_close_range, from, to - 1, 0) != 0) {
			fail("cannot close the supervisor's other descriptors: %s", strerror(errno));
		}
		if (i < 3 && (unsigned int) kept[i] + 1 > from) {
			from = (unsigned int) kept[i] + 1;
		}
	}
	start_supervisor();
}

/* ---- --check, in the command's process ------------------------------------------------- */

/* A socket of its own beneath the working directory: bound, listening, connected to. */
static int own_socket(void)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	snprintf(address.sun_path, sizeof address.sun_path, "cave-sandbox-check-%d.sock", (int) getpid());
	int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0) {
		return errno;
	}
	int error = 0;
	int client = -1;
	if (bind(listener, (struct sockaddr *) &address, sizeof address) != 0 || listen(listener, 1) != 0) {
		error = errno;
	}
	else if ((client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0
		 || connect(client, (struct sockaddr *) &address, sizeof address) != 0) {
		error = errno;
	}
	if (client >= 0) {
		close(client);
	}
	close(listener);
	unlink(address.sun_path);
	return error;
}

/* A connect(2) to a path outside the working directory, in the root directory, whether or
 * not a socket is there: the supervisor refuses it (EACCES) before it looks. */
static int outside_socket(void)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX, .sun_path = "/cave-sandbox-check.sock" };
	int client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (client < 0) {
		return errno;
	}
	int error = (connect(client, (struct sockaddr *) &address, sizeof address) == 0) ? 0 : errno;
	close(client);
	return error;
}

/*
 * Print "unix=supervised own=connected outside=EACCES" when the command's own pathname
 * socket beneath the working directory works through the supervisor and a path outside it
 * is refused, else what each attempt gave ("unix=refused REASON ...": no supervisor, and
 * socket(AF_UNIX) refused). The attempts run in a child that keeps no descriptor but its
 * report's and is dumpable, as the command will be after execve(2): the supervisor must
 * read its memory, which a supervisor without CAP_SYS_PTRACE cannot do in a launcher
 * process, not dumpable.
 */
void check_unix(void)
{
	int report[2];
	if (pipe(report) != 0) {
		fail("cannot check unix sockets: %s", strerror(errno));
	}
	pid_t child = fork();
	if (child < 0) {
		fail("cannot check unix sockets: %s", strerror(errno));
	}
	if (child == 0) {
		if (dup2(report[1], 3) != 3 || syscall(SYS_close_range, 4, ~0U, 0) != 0
		    || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
			_exit(1);
		}
		int results[2] = { own_socket(), outside_socket() };
		_exit((write(3, results, sizeof results) == (ssize_t) sizeof results) ? 0 : 1);
	}
	close(report[1]);
	int results[2] = { -1, -1 };
	ssize_t length;
	do {
		length = read(report[0], results, sizeof results);
	} while (length < 0 && errno == EINTR);
	close(report[0]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
	}
	if (length != (ssize_t) sizeof results) {
		fail("cannot check unix sockets: the attempt gave no report");
	}
	char number[32];
	char other[32];
	const char *reason = supervision_unavailable();
	printf("unix=%s%s%s own=%s outside=%s\n", (*reason != '\0') ? "refused" : "supervised",
	       (*reason != '\0') ? " " : "", reason,
	       (results[0] == 0) ? "connected" : errno_name(results[0], number, sizeof number),
	       (results[1] == 0) ? "connected" : errno_name(results[1], other, sizeof other));
}
