/* root, PID 1 of unshare's namespaces: the mounts of the view, then the command's
 * launcher in-process (launcher.h, "root"; newroot.h). */
#include "newroot.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>

/* Whether this is the new user namespace of one mapped id (a wrapper that ran root in the
 * host's namespaces must not change anything there). */
static void check_new_user_namespace(void)
{
	FILE *map = fopen("/proc/self/uid_map", "re");
	unsigned long inside;
	unsigned long outside;
	unsigned long count = 0;
	if (map == NULL || fscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3 || count != 1) {
		fail("root runs only in a new user namespace of one mapped id: not in a new user namespace");
	}
	fclose(map);
	if (getpid() != 1) {
		fail("root must run as PID 1 of a new PID namespace");
	}
}

/* path in the new root before the pivot (path itself without one). */
static char *at_root(const struct root_plan *plan, const char *path)
{
	const char *root = (plan->new_root != NULL) ? plan->new_root : "";
	size_t length = strlen(root) + strlen(path) + 1;
	char *joined = malloc(length);
	if (joined == NULL) {
		fail("out of memory");
	}
	snprintf(joined, length, "%s%s", root, (strcmp(path, "/") == 0 && *root != '\0') ? "" : path);
	return joined;
}

/* mkdir -p: each missing directory of path, mode 0755. */
static void make_directories(const char *path)
{
	char *copy = strdup(path);
	if (copy == NULL) {
		fail("out of memory");
	}
	for (char *slash = strchr(copy + 1, '/');; slash = strchr(slash + 1, '/')) {
		if (slash != NULL) {
			*slash = '\0';
		}
		if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
			fail("cannot make the mount point %s: %s", copy, strerror(errno));
		}
		if (slash == NULL) {
			break;
		}
		*slash = '/';
	}
	free(copy);
}

static void mount_or_fail(const char *source, const char *target, const char *type, unsigned long flags,
			  const char *data)
{
	if (mount(source, target, type, flags, data) != 0) {
		fail("cannot mount %s on %s: %s", (source != NULL) ? source : type, target, strerror(errno));
	}
}

/* A tmpfs, the new root, with every mount point in it, each system directory bound
 * recursively (a user namespace may not bind a mount without its locked submounts,
 * mount_namespaces(7)), the system links, the host's /dev (made read-only by the pass)
 * and a new proc of the PID namespace, which is ours. */
static void system_directories(const struct root_plan *plan)
{
	mount_or_fail("cave-sandbox", plan->new_root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755");
	for (size_t i = 0; i < plan->system_count; i++) {
		char *target = at_root(plan, plan->systems[i]);
		make_directories(target);
		mount_or_fail(plan->systems[i], target, NULL, MS_BIND | MS_REC, NULL);
		free(target);
	}
	for (size_t i = 0; i < plan->link_count; i++) {
		char *link = at_root(plan, plan->links[i].link);
		if (symlink(plan->links[i].target, link) != 0) {
			fail("cannot make the link %s: %s", plan->links[i].link, strerror(errno));
		}
		free(link);
	}
	char *dev = at_root(plan, "/dev");
	char *proc = at_root(plan, "/proc");
	make_directories(dev);
	make_directories(proc);
	mount_or_fail("/dev", dev, NULL, MS_BIND | MS_REC, NULL);
	mount_or_fail("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	free(proc);
	free(dev);
}

/* An empty tmpfs over each hidden directory, of the limits' tmpfs size. */
static void hidden_directories(const struct root_plan *plan)
{
	char data[64] = "mode=1777";
	if (plan->tmpfs_size != 0) {
		snprintf(data, sizeof data, "mode=1777,size=%llu", plan->tmpfs_size);
	}
	for (size_t i = 0; i < plan->hidden_count; i++) {
		char *target = at_root(plan, plan->hidden[i]);
		make_directories(target);
		mount_or_fail("cave-sandbox", target, "tmpfs", MS_NOSUID | MS_NODEV, data);
		free(target);
	}
}

/*
 * The listed paths, opened in the new mount namespace before anything is mounted (a
 * listed path inside a hidden directory is covered by its tmpfs afterwards), each the file
 * of the descriptor that outer opened without following links (same device and inode: a
 * component swapped for a link since stops the set-up, as bwrap's --bind-fd does).
 * mount(2) refuses to bind outer's descriptor itself, which belongs to the host's mount
 * namespace (EINVAL), not this one.
 */
static void open_listed_sources(const struct root_plan *plan)
{
	for (size_t i = 0; i < plan->listed_count; i++) {
		struct listed_bind *listed = &plan->listed[i];
		struct stat opened;
		struct stat here;
		if (fstat(listed->fd, &opened) != 0) {
			fail("the listed path %s has no descriptor %d: %s", listed->path, listed->fd, strerror(errno));
		}
		listed->source = open(listed->path, O_PATH | O_CLOEXEC);
		if (listed->source < 0 || fstat(listed->source, &here) != 0 || here.st_dev != opened.st_dev
		    || here.st_ino != opened.st_ino) {
			fail("the listed path %s is not the one the launcher opened: it changed during set-up", listed->path);
		}
	}
}

/* Make a missing mount point for a listed path: a directory, or an empty file for a
 * file, by what its descriptor is. */
static void listed_mount_point(const char *target, int directory)
{
	struct stat there;
	if (lstat(target, &there) == 0) {
		return;
	}
	char *parent = strdup(target);
	if (parent == NULL) {
		fail("out of memory");
	}
	*strrchr(parent, '/') = '\0';
	make_directories(directory ? target : parent);
	free(parent);
	if (!directory) {
		int file = open(target, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (file < 0) {
			fail("cannot make the mount point %s: %s", target, strerror(errno));
		}
		close(file);
	}
}

/* The listed paths, parents first, each bound recursively from its source descriptor
 * onto its path and checked against outer's descriptor again; readable ones read-only,
 * writable ones nosuid and nodev. */
static void listed_paths(const struct root_plan *plan)
{
	for (size_t i = 0; i < plan->listed_count; i++) {
		const struct listed_bind *listed = &plan->listed[i];
		struct stat opened;
		struct stat there;
		char source[32];
		if (fstat(listed->fd, &opened) != 0) {
			fail("the listed path %s has no descriptor %d: %s", listed->path, listed->fd, strerror(errno));
		}
		char *target = at_root(plan, listed->path);
		listed_mount_point(target, S_ISDIR(opened.st_mode));
		snprintf(source, sizeof source, "/proc/self/fd/%d", listed->source);
		mount_or_fail(source, target, NULL, MS_BIND | MS_REC, NULL);
		if (lstat(target, &there) != 0 || there.st_dev != opened.st_dev || there.st_ino != opened.st_ino) {
			fail("the listed path %s is not the one the launcher opened: it changed during set-up", listed->path);
		}
		set_mount_attributes(target, !listed->writable, listed->writable);
		close(listed->source);
		free(target);
	}
}

/* The working directory, which outer entered without following links (unshare(2) moved
 * it into the new mount namespace), bound onto its path nosuid and nodev: the path is
 * never bound from the host. */
static void working_directory(const struct root_plan *plan)
{
	if (plan->workdir == NULL) {
		return;
	}
	char *target = at_root(plan, plan->workdir);
	struct stat there;
	if (lstat(target, &there) != 0) {
		make_directories(target);
	}
	mount_or_fail(".", target, NULL, MS_BIND, NULL);
	set_mount_attributes(target, 0, 1);
	free(target);
}

/* After every bind, so that no listed path (such as /etc) covers them: each masked file
 * is the host's /dev/null (reads as empty), each masked directory an empty read-only
 * tmpfs. */
static void masks(const struct root_plan *plan)
{
	for (size_t i = 0; i < plan->mask_file_count; i++) {
		char *target = at_root(plan, plan->mask_files[i]);
		mount_or_fail("/dev/null", target, NULL, MS_BIND, NULL);
		free(target);
	}
	for (size_t i = 0; i < plan->mask_dir_count; i++) {
		char *target = at_root(plan, plan->mask_dirs[i]);
		mount_or_fail("cave-sandbox", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755");
		free(target);
	}
}

/* The new root becomes the root of the mount namespace and the host's root is detached:
 * PID 1 keeps none of it (pivot_root(2): "new_root and put_old may be the same
 * directory"). */
static void pivot(const struct root_plan *plan)
{
	if (chdir(plan->new_root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0
	    || chdir("/") != 0) {
		fail("cannot pivot into the new root %s: %s", plan->new_root, strerror(errno));
	}
}

/* The kernel's key lists, which are not namespaced; for a root caller, whose uid 0 is the
 * host's, /proc/sys and /proc/sysrq-trigger read-only. */
static void proc_masks(const struct root_plan *plan)
{
	for (size_t i = 0; i < plan->key_list_count; i++) {
		if (access(plan->key_lists[i], F_OK) == 0) {
			mount_or_fail("/dev/null", plan->key_lists[i], NULL, MS_BIND, NULL);
		}
	}
	if (plan->root_sysctls) {
		static const char *const SYSCTLS[] = { "/proc/sys", "/proc/sysrq-trigger" };
		for (size_t i = 0; i < 2; i++) {
			if (i == 0 || access(SYSCTLS[i], F_OK) == 0) {
				mount_or_fail(SYSCTLS[i], SYSCTLS[i], NULL, MS_BIND, NULL);
				set_mount_attributes(SYSCTLS[i], 1, 0);
			}
		}
	}
}

/* lo up (what ip link set lo up does; the kernel gives it 127.0.0.1 and ::1). */
static void loopback_up(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq request;
	memset(&request, 0, sizeof request);
	strcpy(request.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &request) != 0) {
		fail("cannot read the flags of lo: %s", strerror(errno));
	}
	request.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &request) != 0) {
		fail("cannot bring lo up: %s", strerror(errno));
	}
	close(fd);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t length = strlen(text);
	if (fd < 0 || write(fd, text, length) != (ssize_t) length) {
		fail("cannot write %s: %s", path, strerror(errno));
	}
	close(fd);
}

/* A user namespace of one's own in which this process is uid:gid, mapped to its ids in
 * the current one (setgroups denied), as unshare --map-user --map-group does. Dumpable
 * while it writes its maps: the /proc files of a process that is not belong to root of
 * its memory's user namespace, which PID 1's does not map, so its command child could
 * not write them; nothing of the command runs yet. */
static void enter_user_namespace(long uid, long gid)
{
	char map[64];
	uid_t outer_uid = geteuid();
	gid_t outer_gid = getegid();
	if (unshare(CLONE_NEWUSER) != 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
		fail("cannot create a user namespace: %s", strerror(errno));
	}
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof map, "%ld %u 1\n", uid, (unsigned) outer_uid);
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof map, "%ld %u 1\n", gid, (unsigned) outer_gid);
	write_file("/proc/self/gid_map", map);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		fail("cannot make the launcher non-dumpable: %s", strerror(errno));
	}
}

/* The mounts, in the order of launcher.h's description. */
static void build_view(const struct root_plan *plan)
{
	open_listed_sources(plan);
	if (plan->new_root != NULL) {
		system_directories(plan);
	}
	hidden_directories(plan);
	listed_paths(plan);
	working_directory(plan);
	masks(plan);
	if (plan->new_root != NULL) {
		pivot(plan);
	}
	if (plan->read_only) {
		read_only_pass(plan);
	}
	proc_masks(plan);
	if (plan->loopback) {
		loopback_up();
	}
	if (plan->workdir != NULL && chdir(plan->workdir) != 0) {
		fail("cannot enter the working directory %s: %s", plan->workdir, strerror(errno));
	}
}

/* PID 1 in a user namespace that maps no root (--pid1-user), exec'd again so that its
 * memory belongs to that namespace: a process that is not dumpable has its /proc files
 * owned by root of its memory's user namespace (set at execve(2)), or by the host's root
 * where that namespace maps none (proc(5)); in the caller's namespace they would be the
 * command's to write (autogroup, comm, timerslack_ns). */
static void become_pid1_user(const struct root_plan *plan, char **argv, int end)
{
	enter_user_namespace(plan->pid1_user, plan->pid1_user);
	char map[48];
	snprintf(map, sizeof map, "%ld:%ld", plan->map_uid, plan->map_gid);
	int count = end;
	while (argv[count] != NULL) {
		count++;
	}
	char **again = calloc((size_t) count + 8, sizeof *again);
	int n = 0;
	if (again == NULL) {
		fail("out of memory");
	}
	again[n++] = argv[0];
	again[n++] = argv[1];
	if (plan->map_uid >= 0) {
		again[n++] = "--map";
		again[n++] = map;
	}
	for (int i = end; argv[i] != NULL; i++) {
		again[n++] = argv[i];
	}
	char self[32];
	snprintf(self, sizeof self, "/proc/self/fd/%d", SELF_FD);
	execv(self, again);
	fail("cannot execute the launcher again: %s", strerror(errno));
}

/* root (launcher.h): the view, then PID 1 forks the command's launcher, which goes on
 * into exec in-process, and reaps every orphan until it ends. */
int new_root(int argc, char **argv)
{
	struct root_plan plan;
	int end = parse_root_options(argc, argv, &plan);
	struct options options;
	char **command = parse_options(argc - end - 1, &argv[end + 1], &options);
	check_options("exec", &options);
	check_new_user_namespace();
	build_view(&plan);
	if (plan.pid1_user >= 0) {
		become_pid1_user(&plan, argv, end);
	}
	catch_terminate(pass_on_to_namespace);
	pid_t child = fork_command();
	if (child == 0) {
		signal(SIGTERM, SIG_DFL);
		if (plan.map_uid >= 0) {
			enter_user_namespace(plan.map_uid, plan.map_gid);
		}
		exec_mode(&options, command);
	}
	close_above_stderr();
	/* PID 1 keeps CAP_KILL for a command user's tree only (init's rule). */
	drop_capabilities((options.command_user >= 0) ? PID1_CAPABILITIES : 0, 0);
	return reap_until(child);
}
