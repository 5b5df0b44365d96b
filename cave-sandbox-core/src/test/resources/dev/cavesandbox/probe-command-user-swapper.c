/*
 * probe-command-user-swapper WORK_DIRECTORY ACTION TARGET SECONDS: a process of the
 * probe's command uid (the first of cave.sandbox.linux.command-user-range) outside any
 * sandbox, watching the work directory (inotify(7)): when a probe directory
 * (cave-sandbox-probe-*, no dot) is handed to its uid (IN_ATTRIB), it watches that
 * directory, and once the probe has given its working directory (work) to the command's
 * group, the working directory too; when the command has read its marker file (IN_ACCESS) (the
 * launcher has set up the sandbox and the probe's script runs), it acts once on the
 * probe directory:
 *   link   renames the working directory away (work.away) and puts a symbolic link to
 *          TARGET under its name;
 *   chmod  takes every permission off the probe directory (chmod 000);
 *   steal  moves the probe's planted file and its working directory out of the probe
 *          directory into the work directory (stolen-N.planted, stolen-N), where the
 *          probe's deletion of its directory does not reach them;
 *   blink  does the same as chmod, and gives them back (chmod 700) as soon as the command has
 *          written its file (cave-sandbox-probe-write), while the directory is still its
 *          uid's: the command's check of its directory's path has failed meanwhile.
 * Where it may not watch the probe directory (it cannot read it: the probe directory is
 * not its uid's), it acts on it at once instead, each time the probe directory changes
 * (IN_ATTRIB: the probe opens it for the command's uid before each run): link, steal as
 * above; chmod and blink take every permission off it.
 * Prints one line per action and stops after SECONDS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Act on a probe directory that it may not watch, and say what came of it. */
static void actBlind(const char *work, const char *own, const char *action, const char *target)
{
	char from[4200], to[4200];
	int result;
	snprintf(from, sizeof from, "%s/work", own);
	if (strcmp(action, "steal") == 0) {
		char planted[4200];
		snprintf(planted, sizeof planted, "%s/work.planted", own);
		snprintf(to, sizeof to, "%s/stolen-blind.planted", work);
		result = rename(planted, to);
		if (result == 0) {
			snprintf(to, sizeof to, "%s/stolen-blind", work);
			result = rename(from, to);
		}
	}
	else if (strcmp(action, "link") == 0) {
		snprintf(to, sizeof to, "%s/work.away", own);
		result = rename(from, to);
		if (result == 0) {
			result = symlink(target, from);
		}
	}
	else {
		result = chmod(own, 0);
	}
	printf("%s: %s %s (without a watch)\n", own, action, (result == 0) ? "done" : strerror(errno));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s WORK_DIRECTORY link|steal|chmod|blink TARGET SECONDS\n", argv[0]);
		return 2;
	}
	const char *work = argv[1], *action = argv[2], *target = argv[3];
	int watch = inotify_init1(IN_NONBLOCK);
	if (watch < 0 || inotify_add_watch(watch, work, IN_ATTRIB) < 0) {
		perror("inotify");
		return 1;
	}
	int ownWatch = -1, workWatch = -1;
	char own[4096] = "", done[4096] = "";
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
			if (!event->len) {
				continue;
			}
			if (ownWatch >= 0 && event->wd == ownWatch && strcmp(event->name, "work") == 0 && workWatch < 0) {
				char path[4200];
				snprintf(path, sizeof path, "%s/work", own);
				workWatch = inotify_add_watch(watch, path, IN_ACCESS | IN_CREATE);
				continue;
			}
			if (workWatch >= 0 && event->wd == workWatch) {
				if (strcmp(action, "blink") == 0 && strcmp(event->name, "cave-sandbox-probe-write") == 0
				    && strcmp(done, own) == 0) {
					int back = chmod(own, 0700);
					printf("%s: chmod 700 %s\n", own, (back == 0) ? "done" : strerror(errno));
					fflush(stdout);
					continue;
				}
				if (strcmp(event->name, "cave-sandbox-probe-marker") != 0 || strcmp(done, own) == 0) {
					continue;
				}
				snprintf(done, sizeof done, "%s", own);
				char from[4200], to[4200];
				snprintf(from, sizeof from, "%s/work", own);
				snprintf(to, sizeof to, "%s/work.away", own);
				int result;
				if (strcmp(action, "steal") == 0) {
					static int stolen = 0;
					char planted[4200], away[4200];
					snprintf(planted, sizeof planted, "%s/work.planted", own);
					snprintf(away, sizeof away, "%s/stolen-%d.planted", work, stolen);
					result = rename(planted, away);
					snprintf(away, sizeof away, "%s/stolen-%d", work, stolen++);
					if (result == 0) {
						result = rename(from, away);
					}
				}
				else if (strcmp(action, "link") != 0) {
					result = chmod(own, 0);
				}
				else {
					result = rename(from, to);
					if (result == 0) {
						result = symlink(target, from);
					}
				}
				printf("%s: %s %s\n", own, action, (result == 0) ? "done" : strerror(errno));
				fflush(stdout);
				continue;
			}
			if (event->wd == ownWatch || event->wd == workWatch || strncmp(event->name, "cave-sandbox-probe-", 19) != 0
					|| strchr(event->name, '.')) {
				continue;
			}
			char candidate[4096];
			snprintf(candidate, sizeof candidate, "%s/%s", work, event->name);
			if (strcmp(candidate, own) == 0 && ownWatch >= 0) {
				continue;
			}
			int added = inotify_add_watch(watch, candidate, IN_ATTRIB);
			if (added < 0) {
				actBlind(work, candidate, action, target);
				continue;
			}
			if (added >= 0) {
				snprintf(own, sizeof own, "%s", candidate);
				ownWatch = added;
				workWatch = -1;
				printf("%s: watched\n", own);
				fflush(stdout);
			}
		}
	}
	return 0;
}
