/*
 * A tree whose processes wait for their own disk reads when the teardown comes (red
 * team 4), for RedTeam4BreakInTests, which compiles it with gcc:
 *
 *   direct-read MARKER MIB PROCS
 *
 * The command (argv[1], MARKER, stays in every process) writes a file of MIB MiB in the
 * working directory, unlinks it at once (nothing is left on disk once its last
 * descriptor is closed) and fsyncs it, then forks PROCS readers. Each reader reads the
 * whole file again and again with O_DIRECT in one preadv(2) of MIB MiB, whose 2 MiB
 * iovecs all point at the same 2 MiB buffer (memory stays small however large the read).
 * A direct read waits for every bio it has submitted in an uninterruptible sleep (state
 * D, iomap_dio_rw), and a SIGKILL that comes meanwhile takes effect only once the whole
 * read is done: PROCS reads of MIB MiB each are in flight at any moment, which the disk
 * serves one after the other. Each reader prints "reading N" before its first read and
 * the command prints "readers PROCS" once it has forked them; the command stays.
 *
 * Bounded: PROCS at most 64, MIB at most 2047 (one read); every process stops reading 60
 * s after it started or once the file direct-read.stop exists in the working directory
 * (checked between reads), and ends.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define LIFETIME_SECONDS 60
#define STOP_FILE "direct-read.stop"
#define CHUNK (2L << 20)
#define MAX_IOVECS 1024

static struct timespec started;

static int over(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - started.tv_sec >= LIFETIME_SECONDS || access(STOP_FILE, F_OK) == 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: direct-read MARKER MIB PROCS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &started);
	long mib = atol(argv[2]);
	int procs = atoi(argv[3]);
	if (mib < 2 || mib > 2047 || procs < 1 || procs > 64) {
		fprintf(stderr, "direct-read: MIB 2-2047, PROCS 1-64\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, SIG_IGN);
	char name[64];
	snprintf(name, sizeof name, "direct-read.%d", (int) getpid());
	int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	unlink(name);
	char *buffer = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buffer == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(buffer, 'd', CHUNK);
	long chunks = mib * (1L << 20) / CHUNK;
	for (long i = 0; i < chunks && !over(); i++) {
		if (write(fd, buffer, CHUNK) != CHUNK) {
			perror("write");
			return 1;
		}
	}
	fsync(fd);
	int direct = fd;
	if (fcntl(fd, F_SETFL, O_DIRECT) != 0) {
		perror("fcntl O_DIRECT");
		return 1;
	}
	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			break;
		}
		if (pid == 0) {
			struct iovec vectors[MAX_IOVECS];
			int count = 0;
			for (long c = 0; c < chunks && count < MAX_IOVECS; c++) {
				vectors[count].iov_base = buffer;
				vectors[count].iov_len = CHUNK;
				count++;
			}
			printf("reading %d\n", i);
			long rounds = 0;
			while (!over()) {
				if (preadv(direct, vectors, count, 0) < 0) {
					perror("preadv");
					_exit(1);
				}
				rounds++;
			}
			printf("reader %d: %ld reads\n", i, rounds);
			_exit(0);
		}
	}
	printf("readers %d\n", procs);
	while (!over()) {
		usleep(100000);
	}
	return 0;
}
