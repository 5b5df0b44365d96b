/* The supervisor of unix sockets (supervisor.h): what a notification asks and whether it
 * may, then a worker for it or the answer. */
#include "supervisor.h"

/* pidfd_open(2): a pidfd of a thread, not only of a thread-group leader (Linux 6.9; O_EXCL). */
#define CAVE_PIDFD_THREAD 0x80

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
		error = supervisor_check_path(job);
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
		return supervisor_stale_answer(job->socket);
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

void supervisor_dispatch(const struct cave_seccomp_notif *request)
{
	struct job *job = calloc(1, sizeof *job);
	if (job == NULL) {
		supervisor_reply(request->id, ENOMEM);
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
		if (pthread_create(&supervisor.pending[slot].thread, &attributes, supervisor_work, job) != 0) {
			supervisor.pending[slot].used = 0;
			error = EAGAIN;
		}
		pthread_attr_destroy(&attributes);
	}
	pthread_mutex_unlock(&supervisor.lock);
	if (error != 0) {
		supervisor_reply(job->id, error);
		supervisor_release(job);
	}
}
