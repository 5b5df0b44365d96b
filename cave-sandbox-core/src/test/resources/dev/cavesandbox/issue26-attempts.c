/*
 * Break-in attempts of Issue26BreakInTests (issue 26): process trees that try to leave
 * the seccomp mechanism's process group or outrun its kill, a /proc spinner against the
 * sandbox's own processes, signals to the containing process, and probes between the
 * executions of different command users. Every mode ends itself at DEADLINE (seconds
 * since the epoch) or as soon as the file STOP exists.
 *
 *   lanes MARKER DEADLINE STOP LANES SLEEPERS   successors cloned as contain's children
 *                                               (CLONE_PARENT), each exiting: contain always
 *                                               has a zombie to reap; SLEEPERS idle children
 *                                               of contain in front of them
 *   pidns MARKER DEADLINE STOP LANES            a user and PID namespace of its own (needs
 *                                               --allow-userns): its init ignores signals,
 *                                               lanes fork successors inside it
 *   zoo MARKER DEADLINE STOP                    setsid, setpgid, ptrace, io_uring, clone3;
 *                                               then threads, vfork, self-stopped processes,
 *                                               a subreaper ignoring SIGCHLD, SIGCONT to the group
 *   spin MILLIS                                 /proc/PID/{fd,cwd,root,exe,environ,mem,maps,auxv,
 *                                               syscall} of every other process, from the first
 *                                               instruction (kernel threads have no memory to read)
 *   signals SIG                                 the parent (contain) by kill, tgkill, pidfd,
 *                                               rt_sigqueueinfo, SIGIO and SIGURG owners
 *   storm COUNT SECONDS                         COUNT children that sleep SECONDS
 *   neighbours FIRST LAST COUNT                 processes of the other uids of FIRST..LAST:
 *                                               signal, environ, cwd; then COUNT forks
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long deadline;
static const char *stopfile = "/nonexistent";

static int over(void)
{
	struct stat s;
	return time(NULL) >= deadline || stat(stopfile, &s) == 0;
}

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* To stdout, and to attempts.log in the working directory: an execution that ends in an
 * exception has no output to read. */
static void say(const char *format, ...)
{
	static FILE *log;
	if (log == NULL)
		log = fopen("attempts.log", "a");
	va_list args;
	va_start(args, format);
	vprintf(format, args);
	va_end(args);
	fflush(stdout);
	if (log != NULL) {
		va_start(args, format);
		vfprintf(log, format, args);
		va_end(args);
		fflush(log);
	}
}

static void report(const char *what, long result)
{
	say("%s -> %ld %s\n", what, result, result < 0 ? strerror(errno) : "ok");
}

static void ignore_stops(void)
{
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
}

static void idle_until_over(void)
{
	while (!over())
		usleep(100000);
}

/* ---- lanes ---- */

/* Shared with the lanes of mode lanes: they start forking only once every one of them
 * exists and the start is said, so that forking lanes cannot starve the process that
 * starts them on a loaded machine (seen in CI: no line said before the timeout). */
static int *gate;

static void lane(unsigned long flags)
{
	unsigned long n = 0;
	while (gate != NULL && !__atomic_load_n(gate, __ATOMIC_ACQUIRE)) {
		if (over())
			_exit(0);
		usleep(1000);
	}
	for (;;) {
		if ((n++ & 63) == 0 && over())
			_exit(0);
		long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
		if (pid == 0)
			continue;
		if (pid > 0)
			_exit(0);
		sched_yield();
	}
}

static int lanes(int lanes, int sleepers)
{
	gate = mmap(NULL, sizeof(*gate), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (gate == MAP_FAILED) {
		report("mmap(MAP_SHARED)", -1);
		return 1;
	}
	for (int i = 0; i < sleepers; i++) {
		if (syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) == 0) {
			idle_until_over();
			_exit(0);
		}
	}
	for (int i = 0; i < lanes; i++) {
		if (syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) == 0)
			lane(CLONE_PARENT);
	}
	say("lanes started %d sleepers %d\n", lanes, sleepers);
	__atomic_store_n(gate, 1, __ATOMIC_RELEASE);
	idle_until_over();
	return 0;
}

/* ---- pidns ---- */

static int pidns(int count)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
		report("unshare(CLONE_NEWUSER|CLONE_NEWPID)", -1);
		return 1;
	}
	pid_t init = fork();
	if (init == 0) {
		/* PID 1 of the new namespace: ignores what it has no handler for anyway */
		for (int i = 0; i < count; i++) {
			if (fork() == 0)
				lane(0);
		}
		while (!over()) {
			if (waitpid(-1, NULL, WNOHANG) <= 0)
				usleep(1000);
		}
		_exit(0);
	}
	say("pidns started, its init is %d here\n", init);
	idle_until_over();
	return 0;
}

/* ---- zoo ---- */

/* A thread that starts a lane of successors every 100 ms, 16 at most. */
static void *forking_thread(void *unused)
{
	(void) unused;
	for (int i = 0; i < 16 && !over(); i++) {
		if (fork() == 0)
			lane(0);
		usleep(100000);
	}
	return NULL;
}

static void *continuing_thread(void *unused)
{
	(void) unused;
	while (!over()) {
		kill(0, SIGCONT);
		usleep(1000);
	}
	return NULL;
}

static int zoo(void)
{
	report("setsid", setsid());
	report("setpgid(0, 0)", setpgid(0, 0));
	report("setpgid(0, 1)", setpgid(0, 1));
	report("ptrace(PTRACE_TRACEME)", syscall(SYS_ptrace, 0, 0, 0, 0));
	report("io_uring_setup", syscall(SYS_io_uring_setup, 8, calloc(1, 120)));
	report("clone3", syscall(SYS_clone3, NULL, 0));
	/* a thread that forks lanes of successors */
	pthread_t thread;
	pthread_create(&thread, NULL, forking_thread, NULL);
	/* a vfork child that stops itself: its parent waits in vfork */
	if (fork() == 0) {
		ignore_stops();
		pid_t child = vfork();
		if (child == 0) {
			raise(SIGSTOP);
			_exit(0);
		}
		idle_until_over();
		_exit(0);
	}
	/* a stopped process */
	if (fork() == 0) {
		raise(SIGSTOP);
		idle_until_over();
		_exit(0);
	}
	/* a subreaper that ignores SIGCHLD, with lanes, and a thread that continues the group */
	if (fork() == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		signal(SIGCHLD, SIG_IGN);
		pthread_t continuing;
		pthread_create(&continuing, NULL, continuing_thread, NULL);
		for (int i = 0; i < 8; i++) {
			if (fork() == 0)
				lane(0);
		}
		idle_until_over();
		_exit(0);
	}
	/* a process whose leader exits while its thread forks on */
	if (fork() == 0) {
		pthread_t orphaned;
		pthread_create(&orphaned, NULL, forking_thread, NULL);
		syscall(SYS_exit, 0);
	}
	say("zoo started\n");
	idle_until_over();
	return 0;
}

/* ---- spin ---- */

static int numeric(const char *name)
{
	if (*name == 0)
		return 0;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return 0;
	return 1;
}

static int kernel_thread(const char *pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%s/status", pid);
	FILE *status = fopen(path, "r");
	int kthread = 0;
	while (status != NULL && fgets(line, sizeof line, status) != NULL)
		if (strncmp(line, "Kthread:", 8) == 0)
			kthread = atoi(line + 8);
	if (status != NULL)
		fclose(status);
	return kthread;
}

/*
 * FOUND: a link of another process read (fd/N, cwd, root, exe), a path opened through
 * one of them, or bytes read from its environ, maps, auxv, syscall or mem. LISTED: only
 * the numbers of its descriptors (the directory fd/ listed, no link read), reported
 * once per process.
 */
static int spin(long millis)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double end = now.tv_sec + now.tv_nsec / 1e9 + millis / 1000.0;
	/* this process's pid as /proc names it (the host's /proc on namespaces, where
	 * getpid() answers in the sandbox's PID namespace) */
	char self[32];
	ssize_t length = readlink("/proc/self", self, sizeof self - 1);
	if (length < 0)
		length = snprintf(self, sizeof self, "%d", getpid());
	self[length] = 0;
	long rounds = 0, found = 0;
	char path[256], link[512];
	static const char *parts[] = { "environ", "maps", "auxv", "syscall" };
	static char listed[65536];
	/* what the command itself was given above 2 */
	for (int fd = 3; fd < 1024; fd++) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n >= 0) {
			link[n] = 0;
			if (strncmp(link, "/proc", 5) != 0)
				say("SELF %s -> %s\n", path, link);
		}
	}
	while (1) {
		DIR *proc = opendir("/proc");
		struct dirent *entry;
		while (proc != NULL && (entry = readdir(proc)) != NULL) {
			if (!numeric(entry->d_name) || strcmp(entry->d_name, self) == 0)
				continue;
			snprintf(path, sizeof path, "/proc/%s/fd", entry->d_name);
			DIR *fds = opendir(path);
			if (fds != NULL) {
				struct dirent *fd;
				int numbers = 0;
				while ((fd = readdir(fds)) != NULL) {
					if (!numeric(fd->d_name))
						continue;
					numbers++;
					char fdpath[600];
					snprintf(fdpath, sizeof fdpath, "%s/%s", path, fd->d_name);
					ssize_t n = readlink(fdpath, link, sizeof link - 1);
					if (n >= 0) {
						link[n] = 0;
						say("FOUND %s -> %s\n", fdpath, link);
						found++;
					}
					int opened = open(fdpath, O_PATH);
					if (opened >= 0) {
						say("FOUND %s opened\n", fdpath);
						found++;
						close(opened);
					}
					snprintf(fdpath, sizeof fdpath, "%s/%s/egress.sock", path, fd->d_name);
					struct stat socket_status;
					if (stat(fdpath, &socket_status) == 0) {
						say("FOUND %s\n", fdpath);
						found++;
					}
				}
				closedir(fds);
				int pid = atoi(entry->d_name);
				if (numbers > 0 && pid < (int) sizeof listed && !listed[pid]) {
					listed[pid] = 1;
					say("LISTED %s: %d descriptor numbers\n", path, numbers);
				}
			}
			static const char *links[] = { "cwd", "root", "exe" };
			for (int i = 0; i < 3; i++) {
				snprintf(path, sizeof path, "/proc/%s/%s", entry->d_name, links[i]);
				ssize_t n = readlink(path, link, sizeof link - 1);
				if (n >= 0) {
					link[n] = 0;
					say("FOUND %s -> %s\n", path, link);
					found++;
				}
				snprintf(path, sizeof path, "/proc/%s/%s/.", entry->d_name, links[i]);
				struct stat through;
				if (i < 2 && stat(path, &through) == 0) {
					say("FOUND %s reached\n", path);
					found++;
				}
			}
			if (kernel_thread(entry->d_name))
				continue;
			for (int i = 0; i < 4; i++) {
				snprintf(path, sizeof path, "/proc/%s/%s", entry->d_name, parts[i]);
				int fd = open(path, O_RDONLY);
				if (fd >= 0) {
					char bytes[64];
					if (read(fd, bytes, sizeof bytes) > 0) {
						say("FOUND %s read\n", path);
						found++;
					}
					close(fd);
				}
			}
			snprintf(path, sizeof path, "/proc/%s/mem", entry->d_name);
			int mem = open(path, O_RDONLY);
			if (mem >= 0) {
				say("FOUND %s opened\n", path);
				found++;
				close(mem);
			}
		}
		if (proc != NULL)
			closedir(proc);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (found > 20 || now.tv_sec + now.tv_nsec / 1e9 >= end)
			break;
	}
	say("spin rounds %ld found %ld\n", rounds, found);
	return 0;
}

/* ---- signals ---- */

static int signals(int sig)
{
	pid_t target = getppid();
	say("me %d parent %d signal %d\n", getpid(), target, sig);
	report("kill(parent)", kill(target, sig));
	report("tgkill(parent)", syscall(SYS_tgkill, target, target, sig));
	int pidfd = syscall(SYS_pidfd_open, target, 0);
	if (pidfd >= 0)
		report("pidfd_send_signal(parent)", syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0));
	siginfo_t info;
	memset(&info, 0, sizeof info);
	info.si_code = SI_QUEUE;
	info.si_signo = sig;
	report("rt_sigqueueinfo(parent)", syscall(SYS_rt_sigqueueinfo, target, sig, &info));
	report("kill(-1)", kill(-1, sig == SIGSTOP ? SIGSTOP : sig));
	int pipes[2];
	if (pipe(pipes) == 0) {
		fcntl(pipes[0], F_SETOWN, target);
		fcntl(pipes[0], F_SETSIG, sig);
		fcntl(pipes[0], F_SETFL, O_ASYNC | O_NONBLOCK);
		report("SIGIO through a pipe owned by the parent", write(pipes[1], "x", 1));
	}
	pid_t group = getpgid(target);
	report("getpgid(parent)", group);
	if (group > 0 && pipe(pipes) == 0) {
		fcntl(pipes[0], F_SETOWN, -group);
		fcntl(pipes[0], F_SETSIG, sig);
		fcntl(pipes[0], F_SETFL, O_ASYNC | O_NONBLOCK);
		report("SIGIO through a pipe owned by the parent's group", write(pipes[1], "x", 1));
	}
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0) {
		fcntl(pair[0], F_SETOWN, target);
		fcntl(pair[0], F_SETSIG, sig);
		fcntl(pair[0], F_SETFL, O_ASYNC | O_NONBLOCK);
		report("SIGURG through a socket owned by the parent", send(pair[1], "y", 1, MSG_OOB));
		report("SIGIO through a socket owned by the parent", send(pair[1], "z", 1, 0));
	}
	usleep(300000);
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", target);
	FILE *status = fopen(path, "r");
	while (status != NULL && fgets(line, sizeof line, status) != NULL)
		if (strncmp(line, "State:", 6) == 0)
			say("parent %s", line);
	say("signals done\n");
	return 0;
}

/* ---- storm ---- */

static int storm(int count, int seconds)
{
	int started = 0, error = 0;
	for (int i = 0; i < count; i++) {
		pid_t child = fork();
		if (child == 0) {
			sleep(seconds);
			_exit(0);
		}
		if (child < 0) {
			error = errno;
			break;
		}
		started++;
	}
	say("storm started %d (%s)\n", started, error ? strerror(error) : "no error");
	while (wait(NULL) > 0)
		;
	say("storm done\n");
	return 0;
}

/* ---- neighbours ---- */

static long uid_of(const char *pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%s/status", pid);
	FILE *status = fopen(path, "r");
	long uid = -1;
	while (status != NULL && fgets(line, sizeof line, status) != NULL)
		if (strncmp(line, "Uid:", 4) == 0)
			uid = atol(line + 4);
	if (status != NULL)
		fclose(status);
	return uid;
}

static int neighbours(long first, long last, int count)
{
	long me = getuid();
	say("my uid %ld\n", me);
	int seen = 0, reached = 0;
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	char path[256], link[512];
	while (proc != NULL && (entry = readdir(proc)) != NULL) {
		if (!numeric(entry->d_name))
			continue;
		long uid = uid_of(entry->d_name);
		if (uid < first || uid > last || uid == me)
			continue;
		seen++;
		pid_t pid = atoi(entry->d_name);
		if (kill(pid, SIGSTOP) == 0) {
			say("REACHED kill %d (uid %ld)\n", pid, uid);
			kill(pid, SIGCONT);
			reached++;
		}
		snprintf(path, sizeof path, "/proc/%d/environ", pid);
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			say("REACHED environ %d (uid %ld)\n", pid, uid);
			close(fd);
			reached++;
		}
		snprintf(path, sizeof path, "/proc/%d/cwd", pid);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n >= 0) {
			link[n] = 0;
			say("REACHED cwd %d -> %s\n", pid, link);
			reached++;
		}
	}
	say("neighbours seen %d reached %d\n", seen, reached);
	int forked = 0;
	for (int i = 0; i < count; i++) {
		pid_t child = fork();
		if (child == 0) {
			usleep(200000);
			_exit(0);
		}
		if (child > 0)
			forked++;
		else
			report("fork", -1);
	}
	while (wait(NULL) > 0)
		;
	say("neighbours forked %d of %d\n", forked, count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	if (strcmp(mode, "spin") == 0 && argc == 3)
		return spin(atol(argv[2]));
	if (strcmp(mode, "signals") == 0 && argc == 3)
		return signals(atoi(argv[2]));
	if (strcmp(mode, "storm") == 0 && argc == 4)
		return storm(atoi(argv[2]), atoi(argv[3]));
	if (strcmp(mode, "neighbours") == 0 && argc == 5)
		return neighbours(atol(argv[2]), atol(argv[3]), atoi(argv[4]));
	if (argc < 5)
		return 2;
	deadline = atol(argv[3]);
	stopfile = argv[4];
	ignore_stops();
	if (strcmp(mode, "lanes") == 0 && argc == 7)
		return lanes(atoi(argv[5]), atoi(argv[6]));
	if (strcmp(mode, "pidns") == 0 && argc == 6)
		return pidns(atoi(argv[5]));
	if (strcmp(mode, "zoo") == 0)
		return zoo();
	return 2;
}
