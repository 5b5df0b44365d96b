/* The command's resource limits (LIMITS in launcher.h; setrlimit(2)). */
#include "launcher.h"

const struct limit_option LIMIT_OPTIONS[] = {
	{ "--limit-memory", RLIMIT_DATA, "RLIMIT_DATA" },
	{ "--limit-processes", RLIMIT_NPROC, "RLIMIT_NPROC" },
	{ "--limit-cpu", RLIMIT_CPU, "RLIMIT_CPU" },
	{ "--limit-file-size", RLIMIT_FSIZE, "RLIMIT_FSIZE" },
	{ "--limit-open-files", RLIMIT_NOFILE, "RLIMIT_NOFILE" },
};

_Static_assert(sizeof LIMIT_OPTIONS / sizeof LIMIT_OPTIONS[0] == LIMIT_COUNT, "LIMIT_COUNT is LIMIT_OPTIONS's");

/* A process as /proc/PID/status shows it. */
struct task_entry {
	long pid;
	long ppid;
	unsigned long uid;
	unsigned long long threads;
};

static int by_pid(const void *left, const void *right)
{
	long a = ((const struct task_entry *) left)->pid;
	long b = ((const struct task_entry *) right)->pid;
	return (a > b) - (a < b);
}

/* The parent of a process, or 0 when it is gone. */
static long parent_of(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	FILE *status = fopen(path, "re");
	if (status == NULL) {
		return 0;
	}
	char line[256];
	long ppid = 0;
	while (fgets(line, sizeof line, status) != NULL && sscanf(line, "PPid: %ld", &ppid) != 1) {
	}
	fclose(status);
	return ppid;
}

/*
 * Every process of the host as /proc shows it (pid, parent, real uid, threads),
 * sorted by pid for bsearch with by_pid; NULL if /proc cannot be read or memory runs out.
 */
static struct task_entry *read_tasks(size_t *count)
{
	DIR *proc = opendir("/proc");
	if (proc == NULL) {
		return NULL;
	}
	size_t used = 0;
	size_t capacity = 0;
	struct task_entry *entries = NULL;
	struct dirent *entry;
	while ((entry = readdir(proc)) != NULL) {
		char *end;
		long pid = strtol(entry->d_name, &end, 10);
		if (*end != '\0' || pid <= 0) {
			continue;
		}
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/status", pid);
		FILE *status = fopen(path, "re");
		if (status == NULL) {
			continue;
		}
		struct task_entry task = { pid, 0, ~0UL, 0 };
		char line[256];
		while (fgets(line, sizeof line, status) != NULL) {
			if (sscanf(line, "Uid: %lu", &task.uid) != 1 && sscanf(line, "PPid: %ld", &task.ppid) != 1) {
				(void) sscanf(line, "Threads: %llu", &task.threads);
			}
		}
		fclose(status);
		if (used == capacity) {
			capacity = (capacity == 0) ? 256 : capacity * 2;
			struct task_entry *larger = realloc(entries, capacity * sizeof *entries);
			if (larger == NULL) {
				free(entries);
				closedir(proc);
				return NULL;
			}
			entries = larger;
		}
		entries[used++] = task;
	}
	closedir(proc);
	if (entries == NULL) {
		entries = malloc(sizeof *entries);
	}
	qsort(entries, used, sizeof *entries, by_pid);
	*count = used;
	return entries;
}

/*
 * The tasks (threads included) of this process's real uid that RLIMIT_NPROC counts
 * beside the command's own, as /proc shows them: the JVM's threads and the uid's
 * processes outside the JVM's tree. The JVM is the parent of outer (contain's parent; this
 * process is contain's child). The JVM's other descendants (other executions, still
 * running) are not added: their tasks take this command's room rather than add to it,
 * or an execution started while another holds its processes would get that room too
 * once the other ends, and a chain of executions would grow without bound.
 */
static unsigned long long tasks_of_real_uid(void)
{
	long jvm = parent_of(parent_of(getppid()));
	size_t count = 0;
	struct task_entry *entries = (jvm > 0) ? read_tasks(&count) : NULL;
	if (entries == NULL) {
		fail("cannot count the tasks of uid %u for RLIMIT_NPROC: %s", (unsigned) getuid(),
		     (jvm <= 0) ? "the JVM's process is gone" : "cannot read /proc");
	}
	unsigned long long tasks = 0;
	uid_t self = getuid();
	for (size_t i = 0; i < count; i++) {
		if (entries[i].uid != (unsigned long) self) {
			continue;
		}
		/* Up the parents, at most once per process seen (no loop can hold it). */
		int descendant = 0;
		long ancestor = entries[i].ppid;
		for (size_t step = 0; step < count && ancestor > 0 && entries[i].pid != jvm; step++) {
			if (ancestor == jvm) {
				descendant = 1;
				break;
			}
			struct task_entry key = { ancestor, 0, 0, 0 };
			struct task_entry *parent = bsearch(&key, entries, count, sizeof *entries, by_pid);
			ancestor = (parent != NULL) ? parent->ppid : 0;
		}
		if (!descendant) {
			tasks += entries[i].threads;
		}
	}
	free(entries);
	return tasks;
}

/*
 * Set the command's limits (in the process that becomes the command, before the start
 * byte). shared_uid: no user namespace of the sandbox's own (contain), so RLIMIT_NPROC
 * counts the uid's other tasks too: those outside the JVM's tree are added (see
 * tasks_of_real_uid), unless the command runs as a --command-user, which has none.
 */
void set_limits(const struct options *options, int shared_uid)
{
	/* No core dump; and no real-time priority or nice value below the JVM's default
	 * that a JVM's RLIMIT_RTPRIO or RLIMIT_NICE (limits.conf, LimitRTPRIO=, a container's
	 * --ulimit) would grant: a command at SCHED_FIFO or nice -20 would take the CPU
	 * from the processes that tear it down (sched(7), getrlimit(2)). */
	static const int zeroed[] = { RLIMIT_CORE, RLIMIT_RTPRIO, RLIMIT_NICE };
	static const char *const zeroed_names[] = { "RLIMIT_CORE", "RLIMIT_RTPRIO", "RLIMIT_NICE" };
	struct rlimit none = { 0, 0 };
	for (size_t i = 0; i < sizeof zeroed / sizeof zeroed[0]; i++) {
		if (setrlimit(zeroed[i], &none) != 0) {
			fail("cannot set %s to 0: %s", zeroed_names[i], strerror(errno));
		}
	}
	for (size_t i = 0; i < LIMIT_COUNT; i++) {
		unsigned long long value = options->limits[i];
		if (value == 0) {
			continue;
		}
		int resource = LIMIT_OPTIONS[i].resource;
		if (resource == RLIMIT_NPROC && shared_uid) {
			/* setrlimit(2): RLIMIT_NPROC bounds the tasks of the caller's real uid, all
			 * of them, and fork(2) fails with EAGAIN while their count is at or above the
			 * limit. A --command-user is a uid of the range that the executor handed to
			 * this execution alone after it was checked free (CommandUsers): no other
			 * task runs as it, so there is nothing to count and /proc is not read. Were
			 * one there after all (a foreign program that took the uid since; the probe's
			 * child, which runs as the range's first uid while an execution may hold
			 * it), its tasks would count against the command's limit without having been
			 * added to it: the limit is only stricter, never looser. A non-root JVM's
			 * command shares the JVM's uid, whose other tasks are counted and added. */
			unsigned long long others = (options->command_user >= 0) ? 0 : tasks_of_real_uid();
			value += others;
			/* For the probe: the child's RLIMIT_NPROC must be the setting plus these. */
			if (options->check && (printf("nproc_others=%llu\n", others) < 0 || fflush(stdout) != 0)) {
				fail("cannot write the check: %s", strerror(errno));
			}
		}
		/* RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL one second of CPU later. A
		 * setting above the inherited hard limit gets that hard limit, which is already
		 * stricter: without CAP_SYS_RESOURCE it cannot be raised (setrlimit(2)). */
		struct rlimit inherited;
		if (getrlimit(resource, &inherited) != 0) {
			fail("cannot read %s: %s", LIMIT_OPTIONS[i].name, strerror(errno));
		}
		rlim_t hard = (rlim_t) value + ((resource == RLIMIT_CPU) ? 1 : 0);
		if (inherited.rlim_max != RLIM_INFINITY && hard > inherited.rlim_max) {
			hard = inherited.rlim_max;
		}
		struct rlimit limit = { ((rlim_t) value < hard) ? (rlim_t) value : hard, hard };
		if (setrlimit(resource, &limit) != 0) {
			fail("cannot set %s to %llu: %s", LIMIT_OPTIONS[i].name, value, strerror(errno));
		}
	}
}
