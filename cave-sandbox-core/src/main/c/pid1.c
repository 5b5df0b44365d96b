/* PID 1's fork, wait and SIGTERM, of init and root. */
#include "launcher.h"

/*
 * PID 1's wait (init, root): reap every orphan of the namespace until the command ends,
 * and return its status, 128 + n if it died of signal n.
 */
int reap_until(pid_t command)
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
 * PID 1's fork of the command (init, root), into a session of its own. Returns the
 * command's pid in PID 1 and 0 in the command.
 */
pid_t fork_command(void)
{
	pid_t command = fork();
	if (command < 0) {
		fail("cannot fork the command: %s", strerror(errno));
	}
	if (command == 0 && setsid() < 0) {
		fail("cannot give the command a session of its own: %s", strerror(errno));
	}
	return command;
}

/*
 * SIGTERM to PID 1 of the sandbox (outer passes on the executor's): to every other process
 * of its PID namespace at once (kill(2) with -1 reaches every process the caller may
 * signal but itself and, in a PID namespace, only that namespace's), so the command's whole
 * tree gets the grace period, however it forks. PID 1 gets the signal only because it
 * has a handler (pid_namespaces(7)).
 */
void pass_on_to_namespace(int signal)
{
	int saved = errno;
	kill(-1, signal);
	errno = saved;
}
