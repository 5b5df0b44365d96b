/*
 * The supervisor of unix sockets, only without a mount namespace (launcher.h, "unix
 * sockets"): the process of the launcher's own above the command (contain on seccomp,
 * exec's parent on namespaces) that answers the command's connect(2) and bind(2), which
 * the supervision filter hands it (seccomp_unotify(2)), by performing them itself on a
 * duplicate of the command's socket.
 */
#include "supervisor.h"

/* How often (ms) the dispatcher checks that the targets of pending calls still wait. */
#define WATCH_INTERVAL 20

struct supervisor_state supervisor = { .listener = -1,
				       .channel = -1,
				       .child_channel = -1,
				       .workdir = -1,
				       .ruleset = -1,
				       .lock = PTHREAD_MUTEX_INITIALIZER };

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

/* ---- serving: the thread that receives the notifications and hands them out ------------ */

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
				supervisor_dispatch(&request);
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
	catch_signal(SIGUSR1, supervisor_interrupt);
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
