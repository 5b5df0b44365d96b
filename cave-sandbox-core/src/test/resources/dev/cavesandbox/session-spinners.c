/*
 * A command whose processes each take a session of their own and spin (issue 26 red
 * team). The kernel's scheduler autogroups (sched(7), "The autogroup feature", on by
 * default where the JVM's tasks are in the root CPU cgroup) give each session one share
 * of the CPU, whatever its number of processes: a tree of many spinners in one session
 * gets one share, the JVM's session another. Where setsid(2) is allowed (the mechanisms with a
 * PID namespace), every spinner of this tree takes its own session, so that the JVM's
 * session, with the processes that tear the sandbox down (outer, the wrapper, PID 1),
 * gets one share in SPINNERS + 1.
 *
 *   session-spinners MARKER SPINNERS SETSID
 *
 * The command ignores SIGTERM, forks SPINNERS processes (at most 500) that ignore SIGTERM
 * too, take a session of their own when SETSID is 1 (a refusal is counted, not fatal),
 * and spin; it prints "spinning: SPINNERS processes, N in sessions of their own" once
 * every one has started, then waits.
 *
 * Bounded: every process exits 60 s after the command started, or once the file
 * session-spinners.stop exists in its working directory (looked for every 100 ms of
 * spinning). MARKER is argv[1] of every process, so that a scan of /proc finds them.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIFETIME_SECONDS 60
#define MAX_SPINNERS 500
#define STOP_FILE "session-spinners.stop"

static struct timespec started;

static int over(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - started.tv_sec >= LIFETIME_SECONDS || access(STOP_FILE, F_OK) == 0;
}

int main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &started);
	if (argc < 4) {
		fprintf(stderr, "usage: session-spinners MARKER SPINNERS SETSID\n");
		return 2;
	}
	int spinners = atoi(argv[2]);
	if (spinners < 0 || spinners > MAX_SPINNERS) {
		spinners = MAX_SPINNERS;
	}
	int setsid_wanted = atoi(argv[3]) == 1;
	signal(SIGTERM, SIG_IGN);
	/* Shared counters: started spinners, and those in a session of their own. */
	int *counts = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counts == MAP_FAILED) {
		return 1;
	}
	int forked = 0;
	for (int i = 0; i < spinners && !over(); i++) {
		pid_t child = fork();
		if (child == 0) {
			if (setsid_wanted && setsid() > 0) {
				__atomic_add_fetch(&counts[1], 1, __ATOMIC_SEQ_CST);
			}
			__atomic_add_fetch(&counts[0], 1, __ATOMIC_SEQ_CST);
			volatile unsigned long sink = 0;
			while (!over()) {
				struct timespec from;
				struct timespec now;
				clock_gettime(CLOCK_MONOTONIC, &from);
				do {
					for (int j = 0; j < 100000; j++) {
						sink += (unsigned long) j;
					}
					clock_gettime(CLOCK_MONOTONIC, &now);
				}
				while ((now.tv_sec - from.tv_sec) * 1000000000L + (now.tv_nsec - from.tv_nsec) < 100000000L);
			}
			_exit(0);
		}
		if (child > 0) {
			forked++;
		}
	}
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	while (__atomic_load_n(&counts[0], __ATOMIC_SEQ_CST) < forked && !over()) {
		nanosleep(&pause, NULL);
	}
	printf("spinning: %d processes, %d in sessions of their own\n", __atomic_load_n(&counts[0], __ATOMIC_SEQ_CST),
	       __atomic_load_n(&counts[1], __ATOMIC_SEQ_CST));
	fflush(stdout);
	while (!over()) {
		while (waitpid(-1, NULL, WNOHANG) > 0) {
		}
		nanosleep(&pause, NULL);
	}
	return 0;
}
