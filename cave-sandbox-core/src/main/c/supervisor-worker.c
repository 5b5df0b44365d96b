/* The supervisor of unix sockets (supervisor.h): a worker, one call performed with the
 * command's credentials. */
#include "supervisor.h"

void supervisor_interrupt(int signal)
{
	(void) signal;
}

/* Answer; 0, or -1 when the target no longer waits (ENOENT: it died, or a signal
 * interrupted the call). */
int supervisor_reply(uint64_t id, int error)
{
	struct cave_seccomp_notif_resp response = { id, 0, -error, 0 };
	return ioctl(supervisor.listener, CAVE_SECCOMP_IOCTL_NOTIF_SEND, &response);
}

/*
 * A connect(2) that succeeded after its target had stopped waiting (a signal interrupted
 * it between the dispatcher's last check and the connection): the socket is connected,
 * which the target does not know. Its next connect(2) of that socket gets 0
 * (supervisor_stale_answer) instead of EISCONN, so that a restarted or retried call ends
 * as it would have without the supervisor; the connection is the one it asked for. Called
 * with the lock held.
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
int supervisor_stale_answer(int socket)
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

void supervisor_release(struct job *job)
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

void *supervisor_work(void *argument)
{
	struct job *job = argument;
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	int error = perform(job);
	int answered = supervisor_reply(job->id, error) == 0;
	pthread_mutex_lock(&supervisor.lock);
	if (!answered && error == 0 && job->connect && job->action != ANSWER) {
		remember_stale(job->socket);
	}
	supervisor.pending[job->slot].used = 0;
	pthread_mutex_unlock(&supervisor.lock);
	supervisor_release(job);
	return NULL;
}
