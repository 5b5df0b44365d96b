/*
 * probe-sibling-planter WORK_DIRECTORY TARGET SUFFIX SECONDS: another local user's
 * watcher (inotify(7)) that, for every new probe directory (cave-sandbox-probe-*) in a
 * shared work directory, at once links its sibling name (the directory's name + SUFFIX)
 * to TARGET; prints one line per attempt and stops after SECONDS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s WORK_DIRECTORY TARGET SUFFIX SECONDS\n", argv[0]);
		return 2;
	}
	int watch = inotify_init1(IN_NONBLOCK);
	if (watch < 0 || inotify_add_watch(watch, argv[1], IN_CREATE) < 0) {
		perror("inotify");
		return 1;
	}
	time_t end = time(NULL) + atoi(argv[4]);
	char events[8192] __attribute__((aligned(8)));
	while (time(NULL) < end) {
		ssize_t length = read(watch, events, sizeof events);
		if (length <= 0) {
			continue; /* spin: the probe's window is short */
		}
		for (char *next = events; next < events + length;) {
			struct inotify_event *event = (struct inotify_event *) next;
			if (event->len && strncmp(event->name, "cave-sandbox-probe-", 19) == 0 && !strchr(event->name, '.')) {
				char link[4096];
				snprintf(link, sizeof link, "%s/%s%s", argv[1], event->name, argv[3]);
				int result = symlink(argv[2], link);
				printf("%s: %s\n", link, (result == 0) ? "linked" : strerror(errno));
				fflush(stdout);
			}
			next += sizeof *event + event->len;
		}
	}
	return 0;
}
