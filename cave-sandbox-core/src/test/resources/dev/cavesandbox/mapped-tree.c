/*
 * A tree whose death takes CPU time (red team 3): the kernel frees a killed process's
 * address space in its exit (exit_mmap: every page-table entry is visited, each page's
 * map count dropped), in the dying process's own context and scheduler group, so a tree
 * that maps much memory in many processes needs seconds of CPU to die after its SIGKILL,
 * however fast the SIGKILL was. No process of it needs to run meanwhile.
 *
 *   mapped-tree MARKER MIB CHILDREN SPINNERS
 *
 * The command ignores SIGTERM, maps MIB MiB of private anonymous memory (at most 3072,
 * with MADV_NOHUGEPAGE so that it takes 4 KiB pages and one page-table entry each),
 * writes every page, then forks CHILDREN processes (at most 400) that share those pages
 * copy-on-write (fork copies every page-table entry) and sleep, and SPINNERS processes
 * (at most 4) that spin. Once all have started it prints "mapped: MIB MiB in N
 * processes, S spinners, set up in T ms" and waits.
 *
 * Bounded: every process exits 60 s after the command started, or once the file
 * mapped-tree.stop exists in its working directory (looked for every 100 ms). MARKER is
 * argv[1] of every process, so that a scan of /proc finds them.
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
#define STOP_FILE "mapped-tree.stop"

static struct timespec started;

static long elapsed_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - started.tv_sec) * 1000L + (now.tv_nsec - started.tv_nsec) / 1000000L;
}

static int over(void)
{
	return elapsed_ms() >= LIFETIME_SECONDS * 1000L || access(STOP_FILE, F_OK) == 0;
}

int main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &started);
	if (argc < 5) {
		fprintf(stderr, "usage: mapped-tree MARKER MIB CHILDREN SPINNERS\n");
		return 2;
	}
	long mib = atol(argv[2]);
	int children = atoi(argv[3]);
	int spinners = atoi(argv[4]);
	if (mib < 1 || mib > 3072) {
		mib = 3072;
	}
	if (children < 0 || children > 400) {
		children = 400;
	}
	if (spinners < 0 || spinners > 4) {
		spinners = 4;
	}
	signal(SIGTERM, SIG_IGN);
	size_t length = (size_t) mib << 20;
	char *memory = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memory == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(memory, length, MADV_NOHUGEPAGE);
	for (size_t offset = 0; offset < length; offset += 4096) {
		memory[offset] = 1;
	}
	int *count = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED) {
		return 1;
	}
	int forked = 0;
	for (int i = 0; i < children + spinners && !over(); i++) {
		pid_t child = fork();
		if (child == 0) {
			__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
			if (i >= children) {
				volatile unsigned long sink = 0;
				while (!over()) {
					for (int j = 0; j < 1000000; j++) {
						sink += (unsigned long) j;
					}
				}
			}
			else {
				while (!over()) {
					usleep(100000);
				}
			}
			_exit(0);
		}
		if (child > 0) {
			forked++;
		}
	}
	while (!over() && __atomic_load_n(count, __ATOMIC_SEQ_CST) < forked) {
		usleep(10000);
	}
	printf("mapped: %ld MiB in %d processes, %d spinners, set up in %ld ms\n", mib, forked + 1,
	       (forked > children) ? forked - children : 0, elapsed_ms());
	fflush(stdout);
	while (!over()) {
		usleep(100000);
	}
	while (wait(NULL) > 0) {
	}
	return 0;
}
