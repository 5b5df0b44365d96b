/* Opening paths on the host without following symbolic links (outer, Landlock). */
#include "launcher.h"

/* openat2(2) (linux/openat2.h). */
#define CAVE_RESOLVE_NO_SYMLINKS 0x04

struct cave_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

/*
 * Open a path as O_PATH without following any symbolic link in any component (openat2(2)
 * RESOLVE_NO_SYMLINKS; component by component with O_NOFOLLOW where openat2 is missing):
 * a link anywhere gives ELOOP. directory: it must be a directory (ENOTDIR otherwise).
 */
int open_path_no_symlinks(const char *path, int directory)
{
	struct cave_open_how how;
	memset(&how, 0, sizeof how);
	how.flags = O_PATH | O_CLOEXEC | (directory ? O_DIRECTORY : 0);
	how.resolve = CAVE_RESOLVE_NO_SYMLINKS;
	int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS) {
		return fd;
	}
	/* Kernels before 5.6: one component at a time, none of them a symbolic link. */
	char *copy = strdup(path);
	if (copy == NULL) {
		return -1;
	}
	fd = open((path[0] == '/') ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *saved = NULL;
	for (char *name = strtok_r(copy, "/", &saved); fd >= 0 && name != NULL; name = strtok_r(NULL, "/", &saved)) {
		int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int error = errno;
		struct stat status;
		if (next >= 0 && fstat(next, &status) == 0 && S_ISLNK(status.st_mode)) {
			close(next);
			next = -1;
			error = ELOOP;
		}
		close(fd);
		fd = next;
		errno = error;
	}
	free(copy);
	struct stat status;
	if (fd >= 0 && directory && (fstat(fd, &status) != 0 || !S_ISDIR(status.st_mode))) {
		close(fd);
		fd = -1;
		errno = ENOTDIR;
	}
	return fd;
}

int open_no_symlinks(const char *path)
{
	return open_path_no_symlinks(path, 1);
}
