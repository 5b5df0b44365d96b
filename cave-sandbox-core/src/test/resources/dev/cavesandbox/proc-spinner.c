/*
 * A command that spins over /proc from its first instruction (issue 26, point 3), for
 * SandboxProcessesInspectionBreakInTests, which compiles it with gcc:
 *
 *   proc-spinner MILLIS [PORT]
 *
 * For MILLIS milliseconds, round after round, for every process it can see but itself: it
 * reads where each descriptor in /proc/PID/fd leads, reads the links cwd and root, and
 * opens environ (reading it) and mem: each of these is allowed only where the process
 * may be inspected (ptrace's read access), and each that succeeds is printed once, as
 *   LEAK PID WHAT TARGET [cmdline]
 * With PORT (the egress bridge of the sandbox, on its own loopback) it also connects to
 * 127.0.0.1:PORT and closes at once in every round, so that the bridge forks a
 * connection process again and again. At the end it prints
 *   SPUN ROUNDS rounds, PROCESSES processes seen, CONNECTIONS connections
 * Bounded by MILLIS; it starts nothing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPORTED 4096

static char reported[MAX_REPORTED][300];
static int reported_count;

static long elapsed_ms(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

static void command_line(const char *pid, char *buffer, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
	buffer[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	ssize_t length = read(fd, buffer, size - 1);
	close(fd);
	if (length <= 0) {
		buffer[0] = '\0';
		return;
	}
	for (ssize_t i = 0; i < length; i++) {
		if (buffer[i] == '\0' || buffer[i] == '\n') {
			buffer[i] = ' ';
		}
	}
	buffer[length] = '\0';
}

/* Print a leak once per process, what and target. */
static void leak(const char *pid, const char *what, const char *target)
{
	char key[300];
	snprintf(key, sizeof key, "%s %s", pid, what);
	for (int i = 0; i < reported_count; i++) {
		if (strcmp(reported[i], key) == 0) {
			return;
		}
	}
	if (reported_count < MAX_REPORTED) {
		strcpy(reported[reported_count++], key);
	}
	char cmdline[200];
	command_line(pid, cmdline, sizeof cmdline);
	printf("LEAK %s %s %s [%s]\n", pid, what, target, cmdline);
	fflush(stdout);
}

static void inspect(const char *pid)
{
	char path[96];
	char target[512];
	snprintf(path, sizeof path, "/proc/%s/fd", pid);
	/* Listing the numbers may be allowed (a directory of the command's uid, or of a uid
	 * that its capabilities in a user namespace cover); where each leads is not, unless
	 * the process may be inspected. */
	DIR *fds = opendir(path);
	if (fds != NULL) {
		struct dirent *entry;
		while ((entry = readdir(fds)) != NULL) {
			if (entry->d_name[0] == '.') {
				continue;
			}
			char link[300];
			char what[280];
			snprintf(link, sizeof link, "/proc/%s/fd/%s", pid, entry->d_name);
			snprintf(what, sizeof what, "fd/%s", entry->d_name);
			ssize_t length = readlink(link, target, sizeof target - 1);
			if (length >= 0) {
				target[length] = '\0';
				leak(pid, what, target);
			}
		}
		closedir(fds);
	}
	static const char *const links[] = { "cwd", "root" };
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(path, sizeof path, "/proc/%s/%s", pid, links[i]);
		ssize_t length = readlink(path, target, sizeof target - 1);
		if (length >= 0) {
			target[length] = '\0';
			leak(pid, links[i], target);
		}
	}
	snprintf(path, sizeof path, "/proc/%s/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char environment[256];
		ssize_t length = read(fd, environment, sizeof environment);
		close(fd);
		snprintf(target, sizeof target, "(opened, read %zd bytes)", length);
		leak(pid, "environ", target);
	}
	snprintf(path, sizeof path, "/proc/%s/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		leak(pid, "mem", "(opened)");
	}
}

int main(int argc, char **argv)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: proc-spinner MILLIS [PORT]\n");
		return 2;
	}
	long millis = atol(argv[1]);
	int port = (argc == 3) ? atoi(argv[2]) : 0;
	/* Its pid as /proc names it: getpid() gives the pid in the command's own PID
	 * namespace, which differs where /proc is the host's (the namespaces mechanism). */
	char self[32];
	ssize_t self_length = readlink("/proc/self", self, sizeof self - 1);
	if (self_length <= 0) {
		perror("proc-spinner: /proc/self");
		return 1;
	}
	self[self_length] = '\0';
	long rounds = 0;
	long seen = 0;
	long connections = 0;
	do {
		DIR *proc = opendir("/proc");
		if (proc == NULL) {
			perror("proc-spinner: /proc");
			return 1;
		}
		struct dirent *entry;
		while ((entry = readdir(proc)) != NULL) {
			if (entry->d_name[0] < '0' || entry->d_name[0] > '9' || strcmp(entry->d_name, self) == 0) {
				continue;
			}
			seen++;
			inspect(entry->d_name);
		}
		closedir(proc);
		if (port != 0) {
			int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
						       .sin_addr = { htonl(INADDR_LOOPBACK) } };
			if (client >= 0 && connect(client, (struct sockaddr *) &address, sizeof address) == 0) {
				connections++;
			}
			if (client >= 0) {
				close(client);
			}
		}
		rounds++;
	} while (elapsed_ms(&start) < millis);
	printf("SPUN %ld rounds, %ld processes seen, %ld connections\n", rounds, seen, connections);
	return 0;
}
