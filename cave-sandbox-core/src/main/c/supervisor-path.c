/* The supervisor of unix sockets (supervisor.h): where a pathname leads, resolved without
 * following links. */
#include "supervisor.h"

/* Whether directory lies beneath the working directory (or is it), by walking "..". */
static int beneath_workdir(int directory)
{
	int current = dup(directory);
	for (int depth = 0; current >= 0 && depth < 4096; depth++) {
		struct stat status;
		if (fstat(current, &status) != 0) {
			break;
		}
		if (status.st_dev == supervisor.workdir_status.st_dev && status.st_ino == supervisor.workdir_status.st_ino) {
			close(current);
			return 1;
		}
		int parent = openat(current, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat parent_status;
		if (parent < 0 || fstat(parent, &parent_status) != 0
		    || (parent_status.st_dev == status.st_dev && parent_status.st_ino == status.st_ino)) {
			if (parent >= 0) {
				close(parent);
			}
			break;
		}
		close(current);
		current = parent;
	}
	if (current >= 0) {
		close(current);
	}
	return 0;
}

/* Whether directory is the host's /tmp. */
static int is_tmp(int directory)
{
	struct stat status;
	return supervisor.tmp_status.st_ino != 0 && fstat(directory, &status) == 0
	       && status.st_dev == supervisor.tmp_status.st_dev && status.st_ino == supervisor.tmp_status.st_ino;
}

/*
 * The private socket directory, PRIVATE_SOCKETS in the working directory, made on first
 * use for the target's uid and gid (mode 0700): a program that puts its socket directly in
 * /tmp whatever TMPDIR says (LibreOffice: sal/osl/unx/pipe.cxx takes /tmp whenever
 * access(2) calls it writable, which Landlock does not change) gets it there, and a
 * connect(2) to a name in /tmp reaches only what the command made there, never the
 * host's /tmp. Opened without following a link; -1 when it cannot be had.
 */
static int private_sockets(const struct job *job)
{
	int directory = openat(supervisor.workdir, PRIVATE_SOCKETS, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (directory < 0 && errno == ENOENT) {
		if (mkdirat(supervisor.workdir, PRIVATE_SOCKETS, 0700) != 0 && errno != EEXIST) {
			return -1;
		}
		directory = openat(supervisor.workdir, PRIVATE_SOCKETS, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat status;
		if (directory >= 0 && fstat(directory, &status) == 0
		    && (status.st_uid != job->uid || status.st_gid != job->gid)
		    && fchownat(directory, "", job->uid, job->gid, AT_EMPTY_PATH) != 0) {
			close(directory);
			return -1;
		}
	}
	return directory;
}

/*
 * A pathname: its directory, resolved without following any symbolic link (openat2(2)
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from the root or the target's working
 * directory, must lie beneath the working directory; its last component must be a name.
 */
int supervisor_check_path(struct job *job)
{
	const struct sockaddr_un *address = (const struct sockaddr_un *) &job->address;
	size_t length = strnlen(address->sun_path, job->length - offsetof(struct sockaddr_un, sun_path));
	char path[sizeof address->sun_path + 1];
	memcpy(path, address->sun_path, length);
	path[length] = '\0';
	char *slash = strrchr(path, '/');
	const char *name = (slash == NULL) ? path : slash + 1;
	if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		return EACCES;
	}
	const char *directory = ".";
	if (slash == path) {
		directory = "/";
	}
	else if (slash != NULL) {
		*slash = '\0';
		directory = path;
	}
	int base = AT_FDCWD;
	if (path[0] != '/') {
		char cwd[64];
		snprintf(cwd, sizeof cwd, "/proc/%d/cwd", (int) job->proc_pid);
		base = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (base < 0) {
			return ESRCH;
		}
		job->base = base;
	}
	struct cave_open_how how = { O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				     CAVE_RESOLVE_NO_SYMLINKS | CAVE_RESOLVE_NO_MAGICLINKS };
	int parent = (int) syscall(SYS_openat2, base, directory, &how, sizeof how);
	if (parent < 0) {
		return (errno == ELOOP || errno == EXDEV) ? EACCES : errno;
	}
	int private = is_tmp(parent);
	if (private) {
		close(parent);
		parent = private_sockets(job);
		if (parent < 0) {
			return EACCES;
		}
	}
	int error = beneath_workdir(parent) ? 0 : EACCES;
	if (error == 0 && job->connect) {
		job->file = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat status;
		if (job->file < 0) {
			error = errno;
		}
		else if (fstat(job->file, &status) != 0 || S_ISLNK(status.st_mode)) {
			error = EACCES;
		}
		else if (!S_ISSOCK(status.st_mode)) {
			/* unix_find_bsd: a file that is not a socket. */
			error = ECONNREFUSED;
		}
		job->action = CONNECT_FILE;
	}
	else if (error == 0 && private) {
		/* Kept open for the bind through /proc/self/fd (perform). */
		struct sockaddr_un *address = (struct sockaddr_un *) &job->address;
		int length = snprintf(address->sun_path, sizeof address->sun_path, "/proc/self/fd/%d/%s", parent, name);
		if (length < 0 || (size_t) length >= sizeof address->sun_path) {
			error = ENAMETOOLONG;
		}
		job->length = sizeof *address;
		job->file = parent;
		job->action = BIND_PRIVATE;
		return error;
	}
	else {
		job->action = BIND_PATH;
	}
	close(parent);
	return error;
}
