/* root's read-only pass and mount attributes (launcher.h, "root"; newroot.h). */
#include "newroot.h"

#include <sys/mount.h>

/* mount_setattr(2) (linux/mount.h; Linux 5.12). */
#define CAVE_MOUNT_ATTR_RDONLY 0x00000001ULL
#define CAVE_MOUNT_ATTR_NOSUID 0x00000002ULL
#define CAVE_MOUNT_ATTR_NODEV 0x00000004ULL
#define CAVE_AT_RECURSIVE 0x8000
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

struct cave_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

/* Whether mount_setattr(2) is missing (ENOSYS once: then the remounts, as before it). */
static int no_mount_setattr;

/* Whether path is directory or lies beneath it (both normalized). */
int path_within(const char *path, const char *directory)
{
	size_t length = strlen(directory);
	if (strcmp(directory, "/") == 0) {
		return 1;
	}
	return strncmp(path, directory, length) == 0 && (path[length] == '\0' || path[length] == '/');
}

static int mount_setattr_at(const char *path, unsigned int flags, uint64_t set)
{
	if (no_mount_setattr) {
		return -1;
	}
	struct cave_mount_attr attributes = { .attr_set = set };
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &attributes, sizeof attributes) == 0) {
		return 0;
	}
	if (errno != ENOSYS) {
		fail("cannot change the mount attributes of %s: %s", path, strerror(errno));
	}
	no_mount_setattr = 1;
	return -1;
}

/*
 * Make the topmost mount at path read-only and/or nosuid,nodev, keeping its other flags:
 * mount_setattr(2) changes only what it is given; before Linux 5.12 a remount
 * (MS_REMOUNT | MS_BIND) must repeat the mount's nosuid, nodev, noexec and atime flags,
 * which a user namespace inherited locked with the mount (mount_namespaces(7)), read
 * with statvfs(2).
 */
void set_mount_attributes(const char *path, int read_only, int nosuid_nodev)
{
	uint64_t set = (read_only ? CAVE_MOUNT_ATTR_RDONLY : 0)
		       | (nosuid_nodev ? (CAVE_MOUNT_ATTR_NOSUID | CAVE_MOUNT_ATTR_NODEV) : 0);
	if (mount_setattr_at(path, AT_SYMLINK_NOFOLLOW, set) == 0) {
		return;
	}
	struct statvfs status;
	if (statvfs(path, &status) != 0) {
		fail("cannot statvfs %s: %s", path, strerror(errno));
	}
	unsigned long flags = MS_REMOUNT | MS_BIND | (read_only ? MS_RDONLY : 0)
			      | (nosuid_nodev ? (MS_NOSUID | MS_NODEV) : 0);
	flags |= ((status.f_flag & ST_RDONLY) ? MS_RDONLY : 0) | ((status.f_flag & ST_NOSUID) ? MS_NOSUID : 0)
		 | ((status.f_flag & ST_NODEV) ? MS_NODEV : 0) | ((status.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0)
		 | ((status.f_flag & ST_NOATIME) ? MS_NOATIME : 0) | ((status.f_flag & ST_NODIRATIME) ? MS_NODIRATIME : 0);
	if ((status.f_flag & (ST_RELATIME | ST_NOATIME)) == 0) {
		flags |= MS_STRICTATIME;
	}
	if (mount(NULL, path, NULL, flags, NULL) != 0) {
		fail("cannot remount %s: %s", path, strerror(errno));
	}
}

/* Decode mountinfo's octal escapes (\040 for a blank, \134 for a backslash) in place. */
static void decode(char *field)
{
	char *out = field;
	for (char *in = field; *in != '\0'; out++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0'
		    && in[3] <= '7') {
			*out = (char) (((in[1] - '0') << 6) | ((in[2] - '0') << 3) | (in[3] - '0'));
			in += 4;
		}
		else {
			*out = *in++;
		}
	}
	*out = '\0';
}

/* The pseudo file systems below /sys that stay as they are (sysfs itself is remounted). */
static int pseudo_below_sys(const char *type)
{
	static const char *const TYPES[] = { "sysfs", "cgroup", "cgroup2", "securityfs", "debugfs", "tracefs",
					     "pstore", "bpf", "configfs", "fusectl", "efivarfs", "selinuxfs",
					     "binfmt_misc", "hugetlbfs", "mqueue", "autofs" };
	for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
		if (strcmp(type, TYPES[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Whether point is a masked file's: kept only to spare a remount each. */
static int masked_file(const struct root_plan *plan, const char *point)
{
	for (size_t i = 0; i < plan->mask_file_count; i++) {
		if (strcmp(point, plan->mask_files[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

/* The mounts that stay writable: the writable listed paths and the masked files (the
 * host's /dev/null: what is written there is gone either way), each exactly; the hidden
 * directories and the working directory with what lies beneath them. */
static int kept(const struct root_plan *plan, const char *point)
{
	for (size_t i = 0; i < plan->listed_count; i++) {
		if (plan->listed[i].writable && strcmp(point, plan->listed[i].path) == 0) {
			return 1;
		}
	}
	if (masked_file(plan, point)) {
		return 1;
	}
	for (size_t i = 0; i < plan->hidden_count; i++) {
		if (path_within(point, plan->hidden[i])) {
			return 1;
		}
	}
	return plan->workdir != NULL && path_within(point, plan->workdir);
}

/* Whether a mount at point stays as it is: /proc and /dev/pts, the pseudo file systems
 * below /sys, and the kept ones. */
static int left_alone(const struct root_plan *plan, const char *point, const char *type)
{
	return path_within(point, "/proc") || strcmp(point, "/dev/pts") == 0
	       || (path_within(point, "/sys") && strcmp(point, "/sys") != 0 && pseudo_below_sys(type))
	       || kept(plan, point);
}

/* Whether a system directory can be made read-only with all beneath it at once: nothing
 * left alone lies in it but masked files, which may become read-only too (checked
 * against every mount, since a kept one may be a mount point only: a writable path, the
 * working directory). */
static int whole_subtree(const struct root_plan *plan, const char *system, char **points, char **types, size_t count)
{
	if (no_mount_setattr || path_within(system, "/proc") || path_within(system, "/dev") || path_within(system, "/sys")) {
		return 0;
	}
	for (size_t i = 0; i < count; i++) {
		if (path_within(points[i], system) && left_alone(plan, points[i], types[i])
		    && !masked_file(plan, points[i])) {
			return 0;
		}
	}
	return plan->workdir == NULL || !path_within(plan->workdir, system);
}

static char *read_mountinfo(void)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail("cannot open /proc/self/mountinfo: %s", strerror(errno));
	}
	size_t size = 0;
	size_t capacity = 65536;
	char *text = malloc(capacity + 1);
	for (ssize_t n; text != NULL; size += (size_t) n) {
		if (size == capacity) {
			capacity *= 2;
			char *larger = realloc(text, capacity + 1);
			if (larger == NULL) {
				break;
			}
			text = larger;
		}
		n = read(fd, text + size, capacity - size);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n < 0) {
			fail("cannot read /proc/self/mountinfo: %s", strerror(errno));
		}
		if (n == 0) {
			break;
		}
	}
	if (text == NULL) {
		fail("out of memory");
	}
	close(fd);
	text[size] = '\0';
	return text;
}

/*
 * After the pivot (or in a host view with a read-only root): every writable mount
 * becomes read-only but those left alone (left_alone). A system directory with nothing
 * left alone beneath it goes at once (mount_setattr(2) with AT_RECURSIVE); every other
 * mount of /proc/self/mountinfo one by one, the topmost at its mount point. /dev is the
 * host's devtmpfs here: a root JVM's command could leave files in it, and fill it;
 * device nodes stay usable on a read-only mount.
 */
void read_only_pass(const struct root_plan *plan)
{
	char *text = read_mountinfo();
	size_t lines = 1;
	for (const char *c = text; *c != '\0'; c++) {
		lines += (*c == '\n');
	}
	char **points = calloc(lines, sizeof *points);
	char **options = calloc(lines, sizeof *options);
	char **types = calloc(lines, sizeof *types);
	if (points == NULL || options == NULL || types == NULL) {
		fail("out of memory");
	}
	size_t count = 0;
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		/* ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER */
		char *separator = strstr(line, " - ");
		if (separator == NULL) {
			fail("cannot read /proc/self/mountinfo: no separator in '%s'", line);
		}
		*separator = '\0';
		char *fields[6];
		char *save = NULL;
		char *field = strtok_r(line, " ", &save);
		for (int i = 0; i < 6 && field != NULL; i++, field = strtok_r(NULL, " ", &save)) {
			fields[i] = field;
		}
		char *type = strtok_r(separator + 3, " ", &save);
		if (fields[5] == NULL || type == NULL) {
			fail("cannot read /proc/self/mountinfo");
		}
		decode(fields[4]);
		points[count] = fields[4];
		options[count] = fields[5];
		types[count] = type;
		count++;
	}
	int *recursive = calloc(plan->system_count + 1, sizeof *recursive);
	if (recursive == NULL) {
		fail("out of memory");
	}
	for (size_t s = 0; s < plan->system_count; s++) {
		if (whole_subtree(plan, plan->systems[s], points, types, count)
		    && mount_setattr_at(plan->systems[s], AT_SYMLINK_NOFOLLOW | CAVE_AT_RECURSIVE, CAVE_MOUNT_ATTR_RDONLY)
			       == 0) {
			recursive[s] = 1;
		}
	}
	for (size_t i = 0; i < count; i++) {
		if (strcmp(options[i], "ro") == 0 || strncmp(options[i], "ro,", 3) == 0
		    || left_alone(plan, points[i], types[i])) {
			continue;
		}
		int done = 0;
		for (size_t s = 0; s < plan->system_count && !done; s++) {
			done = recursive[s] && path_within(points[i], plan->systems[s]);
		}
		if (!done) {
			set_mount_attributes(points[i], 1, 0);
		}
	}
	free(recursive);
	free(types);
	free(options);
	free(points);
	free(text);
}
