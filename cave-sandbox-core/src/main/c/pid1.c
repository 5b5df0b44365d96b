/* pid1, PID 1 of unshare's PID namespace; and PID 1's fork, wait and SIGTERM, init's too. */
#include "launcher.h"

/*
 * PID 1's wait (init, pid1): reap every orphan of the namespace until the command ends,
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
 * PID 1's fork of the command (init, pid1), into a session of its own. Returns the
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
int pid1(char **argv)
{
	if (getpid() != 1) {
		fail("pid1 must run as PID 1 of a new PID namespace");
	}
	catch_terminate(pass_on_to_namespace);
	pid_t command = fork_command();
	if (command == 0) {
		execvp(argv[0], argv);
		fail("cannot execute %s: %s", argv[0], strerror(errno));
	}
	close_above_stderr();
	return reap_until(command);
}
