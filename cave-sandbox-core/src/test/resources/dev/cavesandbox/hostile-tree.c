/*
 * A process tree built to outrun its sandbox's teardown (issue 26, point 1), for
 * HostileTreeTeardownBreakInTests, which compiles it with gcc:
 *
 *   hostile-tree MARKER LANES SUBREAPER EXIT_AFTER_MS
 *
 * The command forks a helper and then exits EXIT_AFTER_MS milliseconds after the helper
 * has said its first line (0: it stays). With SUBREAPER 1 the helper makes itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER) and ignores SIGCHLD, so that the kernel reaps every process of
 * the tree that ends and the orphans of the lanes become the helper's, not the
 * sandbox's. The helper starts LANES lanes: each process of a lane forks its successor
 * and exits at once. Every new process first tries to leave the command's session and
 * process group (setsid), sends SIGCONT to the current process of every other lane, to
 * the helper and to the command (undoing a teardown's SIGSTOP), and forks a new process
 * for every lane whose current process has died. SIGTERM, SIGHUP and SIGINT are ignored
 * throughout. MARKER is argv[1] of every process (a fork keeps the command line), so
 * that a scan of /proc finds the whole tree. The helper prints "hostile tree: LANES
 * lanes, subreaper SUBREAPER" before it starts the lanes and "hostile tree: every lane
 * started" once it has (with many lanes under load, later than the command's 300 ms).
 *
 * Bounded: every process exits instead of forking once the file hostile-tree.stop exists
 * in its working directory, or 60 s after the command started; the tree counts its own
 * processes and never has more than 2 * LANES + 8 at once (besides the sandbox's process
 * limit). A process that a teardown stopped and left stopped does not end by itself: the
 * test kills what is left by its marker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LANES 256
#define LIFETIME_SECONDS 60
#define STOP_FILE "hostile-tree.stop"

struct tree {
	struct timespec started;
	int lanes;
	int limit;
	/* Processes of the tree alive at once, as the tree counts them (one killed from
	 * outside is never taken off: the count only errs towards fewer forks). */
	int alive;
	pid_t command;
	pid_t helper;
	/* Set by the helper once its first line is out: the command's EXIT_AFTER_MS count
	 * from there, so that a loaded machine cannot end the tree before it says anything. */
	int said;
	/* The current process of each lane; 0 while a process re-grows it. */
	pid_t current[MAX_LANES];
};

static struct tree *tree;

static int over(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - tree->started.tv_sec >= LIFETIME_SECONDS || access(STOP_FILE, F_OK) == 0;
}

static void finish(void) __attribute__((noreturn));

static void finish(void)
{
	__atomic_sub_fetch(&tree->alive, 1, __ATOMIC_SEQ_CST);
	_exit(0);
}

static void lane(int index) __attribute__((noreturn));

/* Fork the next process of a lane; its pid in the parent, -1 if none was forked. */
static pid_t spawn(int index)
{
	if (__atomic_add_fetch(&tree->alive, 1, __ATOMIC_SEQ_CST) > tree->limit) {
		__atomic_sub_fetch(&tree->alive, 1, __ATOMIC_SEQ_CST);
		return -1;
	}
	pid_t child = fork();
	if (child < 0) {
		__atomic_sub_fetch(&tree->alive, 1, __ATOMIC_SEQ_CST);
		return -1;
	}
	if (child == 0) {
		lane(index);
	}
	__atomic_store_n(&tree->current[index], child, __ATOMIC_SEQ_CST);
	return child;
}

/* SIGCONT to every other process the tree knows of; a new process for each dead lane. */
static void continue_and_regrow(int self)
{
	for (int other = 0; other < tree->lanes; other++) {
		pid_t pid = __atomic_load_n(&tree->current[other], __ATOMIC_SEQ_CST);
		if (other != self && pid > 0) {
			kill(pid, SIGCONT);
		}
	}
	pid_t helper = __atomic_load_n(&tree->helper, __ATOMIC_SEQ_CST);
	if (helper > 0) {
		kill(helper, SIGCONT);
	}
	kill(tree->command, SIGCONT);
	for (int other = 0; other < tree->lanes; other++) {
		pid_t pid = __atomic_load_n(&tree->current[other], __ATOMIC_SEQ_CST);
		if (other == self || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) {
			continue;
		}
		if (__atomic_compare_exchange_n(&tree->current[other], &pid, 0, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)
		    && spawn(other) < 0) {
			/* Not re-grown: leave the dead pid for another process to try. */
			__atomic_store_n(&tree->current[other], pid, __ATOMIC_SEQ_CST);
		}
	}
}

static void lane(int index)
{
	__atomic_store_n(&tree->current[index], getpid(), __ATOMIC_SEQ_CST);
	setsid();
	if (over()) {
		finish();
	}
	continue_and_regrow(index);
	spawn(index);
	finish();
}

static void helper(int subreaper)
{
	if (subreaper) {
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		signal(SIGCHLD, SIG_IGN);
	}
	printf("hostile tree: %d lanes, subreaper %d\n", tree->lanes, subreaper);
	fflush(stdout);
	__atomic_store_n(&tree->said, 1, __ATOMIC_SEQ_CST);
	for (int index = 0; index < tree->lanes; index++) {
		spawn(index);
	}
	printf("hostile tree: every lane started\n");
	fflush(stdout);
	while (!over()) {
		struct timespec pause = { 0, 20 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		continue_and_regrow(-1);
		while (waitpid(-1, NULL, WNOHANG) > 0) {
		}
	}
	finish();
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: hostile-tree MARKER LANES SUBREAPER EXIT_AFTER_MS\n");
		return 2;
	}
	int lanes = atoi(argv[2]);
	if (lanes < 1 || lanes > MAX_LANES) {
		fprintf(stderr, "hostile-tree: 1 to %d lanes\n", MAX_LANES);
		return 2;
	}
	tree = mmap(NULL, sizeof *tree, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tree == MAP_FAILED) {
		perror("hostile-tree: mmap");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &tree->started);
	tree->lanes = lanes;
	tree->limit = 2 * lanes + 8;
	tree->alive = 1;
	tree->command = getpid();
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	__atomic_add_fetch(&tree->alive, 1, __ATOMIC_SEQ_CST);
	pid_t child = fork();
	if (child < 0) {
		perror("hostile-tree: fork");
		return 1;
	}
	if (child == 0) {
		__atomic_store_n(&tree->helper, getpid(), __ATOMIC_SEQ_CST);
		helper(atoi(argv[3]));
	}
	__atomic_store_n(&tree->helper, child, __ATOMIC_SEQ_CST);
	long exit_after = atol(argv[4]);
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	while (exit_after != 0 && !over() && !__atomic_load_n(&tree->said, __ATOMIC_SEQ_CST)) {
		nanosleep(&pause, NULL);
	}
	for (long waited = 0; !over() && (exit_after == 0 || waited < exit_after); waited += 10) {
		nanosleep(&pause, NULL);
	}
	finish();
}
