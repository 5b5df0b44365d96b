/* The supervisor of unix sockets (supervisor.h): --check, in the command's process. */
#include "supervisor.h"

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
