/*
 * probe-directory-swapper WORK_DIRECTORY link TARGET SECONDS: another local user's
 * watcher (inotify(7)) of a work directory that it may write without the sticky bit
 * (mode 0777): for every new probe directory (cave-sandbox-probe-*, no dot) it at once
 * exchanges the name (renameat2(2) RENAME_EXCHANGE, one system call) with a symbolic
 * link to TARGET made ready beforehand; the probe's own directory then keeps a name of
 * the watcher's (cave-sandbox-probe-*.swapped). Prints one line per exchange and stops
 * after SECONDS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static char ready[4096];

static void prepare(const char *work, const char *target, int n)
{
	snprintf(ready, sizeof ready, "%s/.swapper-%d-%d", work, (int) getpid(), n);
	if (symlink(target, ready) != 0) {
		perror("symlink");
	}
}

int main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[2], "link") != 0) {
		fprintf(stderr, "usage: %s WORK_DIRECTORY link TARGET SECONDS\n", argv[0]);
		return 2;
	}
	const char *work = argv[1], *target = argv[3];
	int watch = inotify_init1(IN_NONBLOCK);
	if (watch < 0 || inotify_add_watch(watch, work, IN_CREATE) < 0) {
		perror("inotify");
		return 1;
	}
	int n = 0;
	prepare(work, target, n++);
	time_t end = time(NULL) + atoi(argv[4]);
	char events[8192] __attribute__((aligned(8)));
	while (time(NULL) < end) {
		ssize_t length = read(watch, events, sizeof events);
		if (length <= 0) {
			continue; /* spin: the window is short */
		}
		for (char *next = events; next < events + length;) {
			struct inotify_event *event = (struct inotify_event *) next;
			next += sizeof *event + event->len;
			if (!event->len || strncmp(event->name, "cave-sandbox-probe-", 19) != 0 || strchr(event->name, '.')) {
				continue;
			}
			char name[4096];
			snprintf(name, sizeof name, "%s/%s", work, event->name);
			int result = renameat2(AT_FDCWD, name, AT_FDCWD, ready, RENAME_EXCHANGE);
			printf("%s: %s\n", name, (result == 0) ? "swapped" : strerror(errno));
			fflush(stdout);
			if (result == 0) {
				char keep[4200];
				snprintf(keep, sizeof keep, "%s.swapped", name);
				rename(ready, keep);
				prepare(work, target, n++);
			}
		}
	}
	return 0;
}
