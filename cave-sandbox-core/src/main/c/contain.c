/* contain, the seccomp mechanism's wrapper: no namespaces at all (launcher.h). */
#include "launcher.h"

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
 * contain's part of main, with main's parsed and checked options and the command (argv).
 * Also what outer's child runs when its wrapper is /proc/self/fd/4 contain: the same program,
 * without the execve(2) of the launcher again (outer.c run_contain).
 */
int contain_mode(struct options *options, char **argv)
{
	options->host_user = 1;
	options->no_pid_namespace = 1;
	return contain(options, argv);
}

/*
 * The seccomp mechanism's wrapper (outer runs it as /proc/self/fd/4): a child subreaper that
 * forks the command (which makes a session of its own, then does the set-up of exec,
 * Landlock included), waits for it, and then ends its whole tree (end_tree), also when
 * outer dies (SIGHUP) or on SIGINT, before it exits with the command's status. Never
 * kill(-1) or its own process group: without a PID namespace those reach processes that
 * are not the command's.
 */
int contain(const struct options *options, char **argv)
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
	int supervised = options->no_mount_namespace && prepare_supervisor(options) == 0;
	pid_t command = fork();
	if (command < 0) {
		fail("cannot fork the command: %s", strerror(errno));
	}
	if (command == 0) {
		supervisor_child();
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
		start_command(options, start, argv);
	}
	/* Only the command writes the start byte; this process needs no descriptor above 2
	 * but the supervisor's of the command's unix sockets (supervisor.c). */
	if (supervised) {
		supervise();
	}
	else {
		close_above_stderr();
	}
	await_command(command);
	return end_tree(command);
}
