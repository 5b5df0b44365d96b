/* The set-up that init, exec and contain do before the command runs, and exec itself. */
#include "launcher.h"

/* Close every descriptor from 3 up but the start pipe, if it is one. */
static int close_descriptors(int keep_egress)
{
	struct stat status;
	int start = (fstat(START_FD, &status) == 0 && S_ISFIFO(status.st_mode)) ? START_FD : -1;
	int supervised = supervision_prepared();
	if (syscall(SYS_close_range, 3, START_FD - 1, 0) != 0 || syscall(SYS_close_range, SUPERVISOR_FD + 1, ~0U, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 3; fd < max; fd++) {
			if (fd != START_FD && fd != EGRESS_FD && fd != SUPERVISOR_FD) {
				close((int) fd);
			}
		}
	}
	if (!supervised) {
		close(SUPERVISOR_FD);
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
void close_above_stderr(void)
{
	if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 3; fd < max; fd++) {
			close((int) fd);
		}
	}
}

/* Tell outer that the sandbox is set up: from here on, the exit status is the command's. */
void signal_start(int start)
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

/* Catch signal with handler, which must keep errno (sigaction(2)); no SA_RESTART. */
void catch_signal(int signal, void (*handler)(int))
{
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_handler = handler;
	sigemptyset(&action.sa_mask);
	if (sigaction(signal, &action, NULL) != 0) {
		fail("cannot catch signal %d: %s", signal, strerror(errno));
	}
}

/* Catch SIGTERM with handler, which must keep errno. */
void catch_terminate(void (*handler)(int))
{
	catch_signal(SIGTERM, handler);
}

/*
 * Set up everything but the limits and the start byte; return the start pipe (-1 when
 * there is none) for the process that becomes the command.
 */
int set_up(const struct options *options, int pid1)
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
	if (options->no_mount_namespace) {
		supervise_unix();
	}
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

/* PRELOAD_VARIABLE (launcher.h): the executor's shared-memory library (libcave-shm.so),
 * handed over under a name that no wrapper reads (in the frame's environment under
 * --handover), becomes LD_PRELOAD only here, for the command: a dynamic wrapper (unshare,
 * setpriv) never loads it. Where the request has an LD_PRELOAD of its own, the executor
 * names the library there instead, and the frame carries it to the command alone. */
static void hand_over_preload(void)
{
	const char *library = getenv(PRELOAD_VARIABLE);
	if (library == NULL) {
		return;
	}
	if (*library != '\0' && setenv("LD_PRELOAD", library, 1) != 0) {
		fail("cannot set LD_PRELOAD: %s", strerror(errno));
	}
	unsetenv(PRELOAD_VARIABLE);
}

/*
 * Run the command of the process that the set-up made for it: argv, or with --handover the
 * frame's argv and environment (handover.c), which replaces the wrappers' whole
 * environment. The preload becomes LD_PRELOAD, outer gets the start byte, with --handover
 * the started marker goes on stdout (after it only the command's own output), then the
 * command runs (execute): a failed execve(2) is the command's 126 or 127, after the marker.
 */
void start_command(const struct options *options, int start, char **argv)
{
	if (options->handover) {
		char **environment;
		argv = await_handover(&environment);
		environ = environment;
	}
	hand_over_preload();
	signal_start(start);
	if (options->handover) {
		write_started();
	}
	execute(argv);
}

void execute(char **argv)
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

/*
 * Without a mount namespace (namespaces), exec's process stays as the supervisor of the
 * command's unix sockets (supervisor.c) and a child subreaper, so that every process of
 * the command's tree stays its descendant (ptrace access under Yama's scope 1); the
 * command is its child. It ignores SIGTERM (PID 1 passes the executor's on to every
 * process of the namespace: the command's tree must keep its supervisor during the grace
 * period), reaps every orphan and exits with the command's status, 128 + n if it died of
 * signal n; its exit ends PID 1 and with it the namespace.
 */
static void supervise_command(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		fail("cannot become the subreaper of the command: %s", strerror(errno));
	}
	pid_t command = fork();
	if (command < 0) {
		fail("cannot fork the command: %s", strerror(errno));
	}
	if (command == 0) {
		supervisor_child();
		return;
	}
	signal(SIGTERM, SIG_IGN);
	supervise();
	exit(reap_until(command));
}

/* exec (the last step under unshare): the set-up, then the command in this process. */
void exec_mode(const struct options *options, char **argv)
{
	if (options->no_mount_namespace && prepare_supervisor(options) == 0) {
		supervise_command();
	}
	int start = set_up(options, 0);
	set_limits(options, 0);
	start_command(options, start, argv);
}
