/* outer, in the host before the wrapper (launcher.h). */
#include "launcher.h"

static void place(int fd, int target, const char *what)
{
	if (fd == target) {
		if (fcntl(fd, F_SETFD, 0) != 0) {
			fail("cannot keep %s open: %s", what, strerror(errno));
		}
		return;
	}
	if (dup2(fd, target) < 0) {
		fail("cannot move %s to descriptor %d: %s", what, target, strerror(errno));
	}
	close(fd);
}

/*
 * Open each listed path without following a symbolic link in any component and place the
 * i-th at LISTED_FD + i without FD_CLOEXEC, for the wrapper. Each is first moved above
 * every target, so that placing one never replaces another that is not placed yet.
 */
static void open_listed(const char **paths, size_t count)
{
	int *fds = calloc(count + 1, sizeof *fds);
	if (fds == NULL) {
		fail("out of memory");
	}
	for (size_t i = 0; i < count; i++) {
		int fd = open_path_no_symlinks(paths[i], 0);
		if (fd < 0) {
			fail("cannot open the listed path %s without following symbolic links: %s", paths[i],
			     strerror(errno));
		}
		struct stat status;
		if (fstat(fd, &status) != 0) {
			fail("cannot stat the listed path %s: %s", paths[i], strerror(errno));
		}
		if (!S_ISDIR(status.st_mode) && !S_ISREG(status.st_mode)) {
			fail("the listed path %s is neither a directory nor a regular file", paths[i]);
		}
		fds[i] = fcntl(fd, F_DUPFD_CLOEXEC, LISTED_FD + (int) count);
		if (fds[i] < 0) {
			fail("cannot move the listed path %s: %s", paths[i], strerror(errno));
		}
		close(fd);
	}
	for (size_t i = 0; i < count; i++) {
		place(fds[i], LISTED_FD + (int) i, paths[i]);
	}
	free(fds);
}

/* The wrapper's process group (its pid), once outer has forked it; 0 before. */
static volatile sig_atomic_t wrapper_group;

/* outer's SIGTERM (the executor's, the start of the kill grace period): to the wrapper's
 * process group, where PID 1 of the sandbox (init, pid1) or contain passes it on to the
 * command's whole tree at once. */
static void pass_on_to_wrapper(int signal)
{
	int saved = errno;
	if (wrapper_group > 0) {
		kill(-(pid_t) wrapper_group, signal);
	}
	errno = saved;
}

/*
 * Take the launch token out of the environment: from here on, fail() appends it. Its bytes
 * are zeroed where execve(2) wrote them too: unsetenv(3) drops only the pointer, and
 * /proc/PID/environ reads that original block (proc(5)), of this process and of every
 * child forked from it, such as check_unix's dumpable one (supervisor-check.c).
 */
static void take_launch_token(void)
{
	char *token = getenv(TOKEN_VARIABLE);
	if (token != NULL) {
		launch_token = strdup(token);
		if (launch_token == NULL) {
			fail("cannot take the launch token out of the environment");
		}
		memset(token, 0, strlen(token));
		if (unsetenv(TOKEN_VARIABLE) != 0) {
			fail("cannot take the launch token out of the environment");
		}
	}
}

/* Open the working directory without following symbolic links, enter it and place it at
 * DIRECTORY_FD; status: what it is (its device and inode). */
static void enter_working_directory(const char *directory, struct stat *status)
{
	int fd = open_no_symlinks(directory);
	if (fd < 0) {
		fail("cannot open the working directory %s without following symbolic links: %s", directory,
		     strerror(errno));
	}
	if (fstat(fd, status) != 0 || !S_ISDIR(status->st_mode)) {
		fail("the working directory %s is not a directory", directory);
	}
	if (fchdir(fd) != 0) {
		fail("cannot enter the working directory %s: %s", directory, strerror(errno));
	}
	place(fd, DIRECTORY_FD, "the working directory");
}

/* The descriptors the wrapper inherits but the start pipe: the working directory
 * (status: what it is), this launcher, the egress directory and the listed paths. */
static void open_descriptors(const struct options *options, struct stat *status)
{
	enter_working_directory(options->workdir, status);
	/* O_PATH: executing it needs only execute permission, as the wrapper's exec did. */
	int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (self < 0) {
		fail("cannot open this launcher through /proc/self/exe: %s", strerror(errno));
	}
	place(self, SELF_FD, "the launcher");
	if (options->egress != NULL) {
		int directory_fd = open_path_no_symlinks(options->egress, 1);
		if (directory_fd < 0) {
			fail("cannot open the egress directory %s without following symbolic links: %s", options->egress,
			     strerror(errno));
		}
		place(directory_fd, EGRESS_FD, "the egress directory");
	}
	/* Before the start pipe, whose descriptors must not land on their numbers. */
	open_listed(options->listed, options->listed_count);
}

/* Export the working directory's identity for init, exec and contain to check. */
static void export_working_directory(const struct stat *status)
{
	char identity[64];
	snprintf(identity, sizeof identity, "%ju:%ju", (uintmax_t) status->st_dev, (uintmax_t) status->st_ino);
	if (setenv(WORKDIR_VARIABLE, identity, 1) != 0) {
		fail("cannot set %s: %s", WORKDIR_VARIABLE, strerror(errno));
	}
}

/* The start pipe: its write end at START_FD for the inside launcher, its read end
 * (returned) for outer. */
static int open_start_pipe(void)
{
	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		fail("cannot create the start pipe: %s", strerror(errno));
	}
	/* The read end out of the way of START_FD, which it may have been given (the first
	 * free descriptor from 10 up: after the listed paths). */
	int reader = fcntl(pipe_fds[0], F_DUPFD_CLOEXEC, 10);
	if (reader < 0) {
		fail("cannot move the start pipe: %s", strerror(errno));
	}
	close(pipe_fds[0]);
	place(pipe_fds[1], START_FD, "the start pipe");
	return reader;
}

/*
 * Whether the wrapper (argv) is this launcher's own contain mode, /proc/self/fd/4 contain
 * (the seccomp mechanism's): SELF_FD is this very launcher, opened through /proc/self/exe.
 */
static int wrapper_is_contain(char **argv)
{
	char self[32];
	snprintf(self, sizeof self, "/proc/self/fd/%d", SELF_FD);
	return strcmp(argv[0], self) == 0 && argv[1] != NULL && strcmp(argv[1], "contain") == 0;
}

/*
 * In outer's child, in place of the execve(2) of /proc/self/fd/4 contain: what that
 * execve(2) would leave of this process, then contain (contain_mode) on argv, and exit
 * with its status. The launcher's set-up is no longer paid twice (an execve(2) of the
 * launcher and its start: about 0.1 ms per execution). What the execve(2) would close
 * (the descriptors with FD_CLOEXEC: the start pipe's read end, outer's, and the pipe that
 * tells outer the session exists, whose closing tells it as the execve(2) did) is closed,
 * the launch token forgotten (contain's messages never carried it), SIGTERM stays
 * ignored as the execve(2) kept it; outer's only handler, SIGTERM's, is replaced by
 * that. The process stays non-dumpable throughout (an execve(2) made it dumpable until
 * contain's main made it non-dumpable again); its command line and name stay outer's.
 */
static void run_contain(char **argv, int reader, const int executed[2]) __attribute__((noreturn));

static void run_contain(char **argv, int reader, const int executed[2])
{
	close(reader);
	close(executed[0]);
	close(executed[1]);
	if (launch_token != NULL) {
		char *token = (char *) launch_token;
		launch_token = NULL;
		/* explicit_bzero(3): a memset(3) right before free(3) is a dead store, which the
		 * compiler drops (gcc -O2 did), leaving the token on contain's heap. */
		explicit_bzero(token, strlen(token));
		free(token);
	}
	int argc = 0;
	while (argv[argc] != NULL) {
		argc++;
	}
	/* As main does for a mode. */
	struct options options;
	char **command = parse_options(argc, argv, &options);
	check_options(argv[1], &options);
	exit(contain_mode(&options, command));
}

/* Fork and execute the wrapper (argv) in a session of its own, or run contain there
 * (run_contain); SIGTERM goes to its process group from the moment the group exists. */
static pid_t start_wrapper(char **argv, int reader)
{
	/* SIGTERM waits until the wrapper's group exists, then goes to it. */
	sigset_t terminate;
	sigset_t unblocked;
	sigemptyset(&terminate);
	sigaddset(&terminate, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &terminate, &unblocked) != 0) {
		fail("cannot block SIGTERM: %s", strerror(errno));
	}
	catch_terminate(pass_on_to_wrapper);
	int executed[2];
	if (pipe2(executed, O_CLOEXEC) != 0) {
		fail("cannot make a pipe: %s", strerror(errno));
	}
	pid_t wrapper = fork();
	if (wrapper < 0) {
		fail("cannot fork the wrapper: %s", strerror(errno));
	}
	if (wrapper == 0) {
		/* A session and process group of its own, which outer's SIGTERM reaches: the
		 * wrapper ignores it (bwrap would take the sandbox down at once, without the
		 * grace period), PID 1 of the sandbox, in that group too, or contain passes it
		 * on. The session is not the JVM's, so the sandbox's processes are not in the
		 * JVM's autogroup (sched(7)): a command that can write PID 1's
		 * /proc/1/autogroup (unshare's PID 1 belongs to the JVM's user) renices the
		 * sandbox's own session, never the JVM's. */
		signal(SIGTERM, SIG_IGN);
		if (setsid() < 0) {
			_exit(EXIT_SETUP);
		}
		sigprocmask(SIG_SETMASK, &unblocked, NULL);
		if (wrapper_is_contain(argv)) {
			run_contain(argv, reader, executed);
		}
		execv(argv[0], argv);
		fprintf(stderr, "cave-sandbox-launcher: cannot execute the wrapper %s: %s\n", argv[0], strerror(errno));
		_exit(EXIT_SETUP);
	}
	/* The group exists once the child has made its session: SIGTERM stays blocked until
	 * then, when the child's exec (or exit, or run_contain) closes its end of the pipe. */
	close(executed[1]);
	char none;
	while (read(executed[0], &none, 1) < 0 && errno == EINTR) {
	}
	close(executed[0]);
	wrapper_group = wrapper;
	if (sigprocmask(SIG_SETMASK, &unblocked, NULL) != 0) {
		fail("cannot unblock SIGTERM: %s", strerror(errno));
	}
	return wrapper;
}

/* The descriptors of open_descriptors and open_start_pipe are the wrapper's alone now. */
static void close_descriptors_of_wrapper(const struct options *options)
{
	close(START_FD);
	close(DIRECTORY_FD);
	close(SELF_FD);
	if (options->egress != NULL) {
		close(EGRESS_FD);
	}
	for (size_t i = 0; i < options->listed_count; i++) {
		close(LISTED_FD + (int) i);
	}
}

/* Wait for the wrapper and return its status, or fail when the inside launcher never
 * wrote the start byte to reader. */
static int await_wrapper(pid_t wrapper, int reader, const char *path)
{
	int status_code;
	while (waitpid(wrapper, &status_code, 0) < 0) {
		if (errno != EINTR) {
			fail("lost the wrapper: %s", strerror(errno));
		}
	}
	char byte;
	int started = fcntl(reader, F_SETFL, O_NONBLOCK) == 0 && read(reader, &byte, 1) == 1;
	if (!started) {
		/* The wrapper's own message, if any, is on stderr before this line. */
		if (WIFSIGNALED(status_code)) {
			fail("the sandbox could not be set up: %s died of signal %d before the command started", path,
			     WTERMSIG(status_code));
		}
		fail("the sandbox could not be set up: %s exited with %d before the command started", path,
		     WEXITSTATUS(status_code));
	}
	return WIFSIGNALED(status_code) ? 128 + WTERMSIG(status_code) : WEXITSTATUS(status_code);
}

/* outer: the steps of launcher.h's description, in order; argv is the wrapper's. */
int outer(const struct options *options, char **argv)
{
	pid_t parent = getppid();
	take_launch_token();
	if (options->workdir == NULL || options->workdir[0] != '/') {
		fail("outer needs --workdir with an absolute path");
	}
	if (argv[0] == NULL || argv[0][0] != '/') {
		fail("outer needs the wrapper as an absolute path");
	}
	struct stat status;
	open_descriptors(options, &status);
	export_working_directory(&status);
	int reader = open_start_pipe();
	if (options->command_user >= 0) {
		join_command_user_namespace(options->command_user);
	}
	/* Die with the JVM thread that spawned this process, as the wrapper would have (its
	 * pid was read first: a JVM that died while the namespace was made is noticed). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent) {
		fail("cannot tie the sandbox to the JVM: %s", strerror(errno));
	}
	pid_t wrapper = start_wrapper(argv, reader);
	close_descriptors_of_wrapper(options);
	return await_wrapper(wrapper, reader, argv[0]);
}
