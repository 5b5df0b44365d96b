/* The Landlock layer (landlock(7)), only without a mount namespace (launcher.h). */
#include "launcher.h"

/* Landlock (linux/landlock.h, landlock(7)): the system calls have the same numbers on
 * every architecture. */
#define NR_LANDLOCK_CREATE_RULESET 444
#define NR_LANDLOCK_ADD_RULE 445
#define NR_LANDLOCK_RESTRICT_SELF 446
#define CAVE_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define CAVE_LANDLOCK_RULE_PATH_BENEATH 1
#define CAVE_LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define CAVE_LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define CAVE_LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define CAVE_LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define CAVE_LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define CAVE_LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#define CAVE_LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#define CAVE_LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
/* What a read path gives; and the rights a rule on a file other than a directory may
 * carry (landlock_add_rule(2): EINVAL otherwise). */
#define CAVE_LANDLOCK_READS \
	(CAVE_LANDLOCK_ACCESS_FS_EXECUTE | CAVE_LANDLOCK_ACCESS_FS_READ_FILE | CAVE_LANDLOCK_ACCESS_FS_READ_DIR)
#define CAVE_LANDLOCK_FILE_RIGHTS \
	(CAVE_LANDLOCK_ACCESS_FS_EXECUTE | CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE | CAVE_LANDLOCK_ACCESS_FS_READ_FILE \
	 | CAVE_LANDLOCK_ACCESS_FS_TRUNCATE)
#define CAVE_LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define CAVE_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define CAVE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define CAVE_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

struct cave_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct cave_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* What the layer gave, for --check: abi 0 when the kernel has no Landlock. */
static struct {
	int abi;
	int unavailable;
	uint64_t handled_net;
	uint64_t scoped;
	uint64_t handled_fs;
} landlock;

/* fstat(2) fd, or fail naming path. */
static void stat_for_rule(int fd, const char *path, struct stat *status)
{
	if (fstat(fd, status) != 0) {
		fail("cannot stat %s for the Landlock ruleset: %s", path, strerror(errno));
	}
}

/*
 * Add a rule for what fd names, whose mode is mode (a directory: beneath it; any other
 * file: that file, with the file rights of access only). path is for the messages.
 */
static void add_rule(int ruleset, int fd, mode_t mode, const char *path, uint64_t access)
{
	if (!S_ISDIR(mode)) {
		access &= CAVE_LANDLOCK_FILE_RIGHTS;
	}
	struct cave_landlock_path_beneath_attr beneath = { access, fd };
	if (access != 0 && syscall(NR_LANDLOCK_ADD_RULE, ruleset, CAVE_LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
		fail("cannot add the Landlock rule of %s: %s", path, strerror(errno));
	}
}

/*
 * Allow access beneath a path, opened without following any symbolic link. A path that
 * is not there (or is a link) is skipped unless required: for the device files and
 * /proc, which only narrows what the command gets.
 */
static void allow_beneath(int ruleset, const char *path, uint64_t access, int required)
{
	int fd = open_path_no_symlinks(path, 0);
	if (fd < 0) {
		if (!required && (errno == ENOENT || errno == ENXIO || errno == ELOOP)) {
			return;
		}
		fail("cannot open %s for the Landlock ruleset without following symbolic links: %s", path,
		     strerror(errno));
	}
	struct stat status;
	stat_for_rule(fd, path, &status);
	add_rule(ruleset, fd, status.st_mode, path, access);
	close(fd);
}

/* Whether path lies strictly beneath directory (both absolute and normalized). */
static int lies_beneath(const char *path, const char *directory)
{
	size_t length = strlen(directory);
	if (length == 1) {
		return path[1] != '\0';
	}
	return strncmp(path, directory, length) == 0 && path[length] == '/';
}

/*
 * Allow reading what fd names (path, of the given mode), but no masked path: a masked
 * path itself gets no rule, a directory with a masked path beneath it gets one rule per
 * entry instead (recursively, so only along the masked paths' ancestors), and no rule of
 * its own. Symbolic links among the entries get none either: Landlock judges the file a
 * link leads to where it resolves. An entry gone since the directory was listed is
 * skipped (there is nothing to allow). Each entry is opened and stat'ed once: its mode
 * goes down to its rule. Closes fd.
 */
static void allow_reading(int ruleset, int fd, mode_t mode, const char *path, const struct options *options,
			  uint64_t access)
{
	int beneath = 0;
	for (size_t i = 0; i < options->mask_count; i++) {
		if (strcmp(options->masks[i], path) == 0) {
			close(fd);
			return;
		}
		beneath |= lies_beneath(options->masks[i], path);
	}
	if (!beneath || !S_ISDIR(mode)) {
		add_rule(ruleset, fd, mode, path, access);
		close(fd);
		return;
	}
	int listing = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *directory = (listing < 0) ? NULL : fdopendir(listing);
	if (directory == NULL) {
		fail("cannot list %s, which holds a masked path, for the Landlock ruleset: %s", path, strerror(errno));
	}
	struct dirent *entry;
	struct stat status;
	for (errno = 0; (entry = readdir(directory)) != NULL; errno = 0) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
			continue;
		}
		char child[4096];
		int length = snprintf(child, sizeof child, "%s/%s", (path[1] == '\0') ? "" : path, entry->d_name);
		if (length < 0 || (size_t) length >= sizeof child) {
			fail("the path of an entry of %s is too long for the Landlock ruleset", path);
		}
		int entry_fd = openat(fd, entry->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (entry_fd < 0 && errno == ENOENT) {
			continue;
		}
		if (entry_fd < 0 || fstat(entry_fd, &status) != 0) {
			fail("cannot open %s for the Landlock ruleset: %s", child, strerror(errno));
		}
		if (S_ISLNK(status.st_mode)) {
			close(entry_fd);
			continue;
		}
		allow_reading(ruleset, entry_fd, status.st_mode, child, options, access);
	}
	if (errno != 0) {
		fail("cannot list %s for the Landlock ruleset: %s", path, strerror(errno));
	}
	closedir(directory);
	close(fd);
}

/* The ruleset's attributes for this kernel's ABI: rights the ABI does not know are dropped,
 * as landlock(7)'s example does. */
static struct cave_landlock_ruleset_attr ruleset_attributes(long abi, const struct options *options)
{
	int view = options->read_count > 0;
	uint64_t writes = CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE | CAVE_LANDLOCK_ACCESS_FS_REMOVE_DIR
			  | CAVE_LANDLOCK_ACCESS_FS_REMOVE_FILE | CAVE_LANDLOCK_ACCESS_FS_MAKE_CHAR
			  | CAVE_LANDLOCK_ACCESS_FS_MAKE_DIR | CAVE_LANDLOCK_ACCESS_FS_MAKE_REG
			  | CAVE_LANDLOCK_ACCESS_FS_MAKE_SOCK | CAVE_LANDLOCK_ACCESS_FS_MAKE_FIFO
			  | CAVE_LANDLOCK_ACCESS_FS_MAKE_BLOCK | CAVE_LANDLOCK_ACCESS_FS_MAKE_SYM
			  | CAVE_LANDLOCK_ACCESS_FS_REFER | CAVE_LANDLOCK_ACCESS_FS_TRUNCATE;
	struct cave_landlock_ruleset_attr attributes = { writes | (view ? CAVE_LANDLOCK_READS : 0), 0, 0 };
	if (!options->allow_inet) {
		attributes.handled_access_net = CAVE_LANDLOCK_ACCESS_NET_BIND_TCP | CAVE_LANDLOCK_ACCESS_NET_CONNECT_TCP;
	}
	attributes.scoped = CAVE_LANDLOCK_SCOPE_SIGNAL | CAVE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	if (abi < 2) {
		attributes.handled_access_fs &= ~CAVE_LANDLOCK_ACCESS_FS_REFER;
	}
	if (abi < 3) {
		attributes.handled_access_fs &= ~CAVE_LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	if (abi < 4) {
		attributes.handled_access_net = 0;
	}
	if (abi < 6) {
		attributes.scoped = 0;
	}
	return attributes;
}

/* The rules: all (the handled file-system rights) beneath the working directory and the
 * write paths, reading beneath the read paths, and the device files; with read paths,
 * reading /proc and /sys/fs/cgroup. */
static void add_rules(int ruleset, uint64_t all, const struct options *options)
{
	int view = options->read_count > 0;
	allow_beneath(ruleset, ".", all, 1);
	/* The caller resolved every listed path as existing: one that is gone or became a
	 * link since then is a failure, not a narrower view than the one promised. */
	for (size_t i = 0; i < options->write_count; i++) {
		allow_beneath(ruleset, options->writes[i], all, 1);
	}
	for (size_t i = 0; i < options->read_count; i++) {
		int fd = open_path_no_symlinks(options->reads[i], 0);
		if (fd < 0) {
			fail("cannot open %s for the Landlock ruleset without following symbolic links: %s",
			     options->reads[i], strerror(errno));
		}
		struct stat status;
		stat_for_rule(fd, options->reads[i], &status);
		allow_reading(ruleset, fd, status.st_mode, options->reads[i], options, CAVE_LANDLOCK_READS);
	}
	static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random",
					       "/dev/urandom" };
	uint64_t device_access = all
				 & (CAVE_LANDLOCK_ACCESS_FS_WRITE_FILE | CAVE_LANDLOCK_ACCESS_FS_TRUNCATE
				    | CAVE_LANDLOCK_ACCESS_FS_READ_FILE);
	/* The host view: the four write targets of before; reads are not handled. */
	size_t device_count = view ? sizeof devices / sizeof devices[0] : 4;
	for (size_t i = 0; i < device_count; i++) {
		allow_beneath(ruleset, devices[i], device_access, 0);
	}
	if (view) {
		uint64_t read = CAVE_LANDLOCK_ACCESS_FS_READ_FILE | CAVE_LANDLOCK_ACCESS_FS_READ_DIR;
		allow_beneath(ruleset, "/proc", read, 0);
		/* The cgroup's limits: a child JVM (and Go, Node) sizes its heap and threads by
		 * them; without them it takes the host's memory in a container and is killed. */
		allow_beneath(ruleset, "/sys/fs/cgroup", read, 0);
	}
}

/*
 * Writes only beneath the working directory, the write paths and to /dev/null,
 * /dev/zero, /dev/full and /dev/tty; with read paths (a system view), reads and
 * execution only beneath the working directory, the read and write paths, /proc (read;
 * programs need /proc/self, while the domain's ptrace scoping keeps other processes'
 * memory and environment out of reach), /sys/fs/cgroup (read: the limits by which a
 * child JVM sizes itself) and those device files and /dev/random and
 * /dev/urandom (read and write); from ABI 4 no TCP bind or connect without --allow-inet;
 * from ABI 6 no signal and no abstract unix socket outside the command's own processes.
 * Any domain also keeps the command from ptrace-mode access (/proc/PID/mem, environ) to
 * processes outside it. Rights the kernel's ABI does not know are dropped, as
 * landlock(7)'s example does.
 */
void restrict_by_landlock(const struct options *options)
{
	long abi = syscall(NR_LANDLOCK_CREATE_RULESET, NULL, 0, CAVE_LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (errno == ENOSYS || errno == EOPNOTSUPP) {
			landlock.unavailable = errno;
			if (options->read_count > 0 && !options->check) {
				fail("the filesystem view needs Landlock, which this kernel does not give: %s", strerror(errno));
			}
			return;
		}
		fail("cannot read the Landlock ABI version: %s", strerror(errno));
	}
	struct cave_landlock_ruleset_attr attributes = ruleset_attributes(abi, options);
	int ruleset = (int) syscall(NR_LANDLOCK_CREATE_RULESET, &attributes, sizeof attributes, 0);
	if (ruleset < 0) {
		fail("cannot create the Landlock ruleset: %s", strerror(errno));
	}
	add_rules(ruleset, attributes.handled_access_fs, options);
	if (syscall(NR_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0) {
		fail("cannot enforce the Landlock ruleset: %s", strerror(errno));
	}
	close(ruleset);
	landlock.abi = (int) abi;
	landlock.handled_net = attributes.handled_access_net;
	landlock.scoped = attributes.scoped;
	landlock.handled_fs = attributes.handled_access_fs;
}

void check_landlock(const struct options *options)
{
	if (landlock.abi == 0) {
		char number[32];
		printf("landlock=unavailable %s\n", errno_name(landlock.unavailable, number, sizeof number));
		return;
	}
	const char *net = options->allow_inet ? "allowed" : (landlock.handled_net != 0) ? "refused" : "unhandled";
	printf("landlock=%d writes=%s reads=%s net=%s scope=%s\n", landlock.abi,
	       (options->write_count > 0) ? "workdir,listed" : "workdir",
	       ((landlock.handled_fs & CAVE_LANDLOCK_READS) == CAVE_LANDLOCK_READS) ? "view" : "host", net,
	       (landlock.scoped != 0) ? "signal,abstract-unix" : "none");
}

/*
 * For the supervisor of unix sockets (supervisor.c): a ruleset that handles only the
 * making of sockets (LANDLOCK_ACCESS_FS_MAKE_SOCK, ABI 1) and allows it beneath the
 * directory fd names. Returns -1 with errno where the kernel has no Landlock.
 */
int socket_ruleset(int directory)
{
	struct cave_landlock_ruleset_attr attributes = { CAVE_LANDLOCK_ACCESS_FS_MAKE_SOCK, 0, 0 };
	/* The first field only: the size of ABI 1's attributes, which every Landlock kernel takes. */
	int ruleset = (int) syscall(NR_LANDLOCK_CREATE_RULESET, &attributes, sizeof(uint64_t), 0);
	if (ruleset < 0) {
		return -1;
	}
	struct cave_landlock_path_beneath_attr beneath = { CAVE_LANDLOCK_ACCESS_FS_MAKE_SOCK, directory };
	if (syscall(NR_LANDLOCK_ADD_RULE, ruleset, CAVE_LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
		int error = errno;
		close(ruleset);
		errno = error;
		return -1;
	}
	return ruleset;
}

/* Enforce ruleset on the calling thread only (landlock_restrict_self(2) restricts the
 * calling thread; no_new_privs too is a flag of the thread). 0, or -1 with errno. */
int restrict_thread(int ruleset)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		return -1;
	}
	return (int) syscall(NR_LANDLOCK_RESTRICT_SELF, ruleset, 0);
}
