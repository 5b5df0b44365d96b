/*
 * POSIX shared memory and named semaphores, as a sandboxed command uses them
 * (SharedMemoryTests), built with gcc (glibc) and musl-gcc (dynamic).
 *
 *   shared-memory own NAME           semaphore and shared memory between this process and a
 *                                    forked child; prints "own: ok" or the step that failed
 *
 * The semaphore is NAME-sem, the shared memory NAME (musl keeps both kinds as /dev/shm/NAME,
 * so one name for both would collide there).
 *   shared-memory hold NAME SECRET   creates both objects, SECRET in the memory, prints
 *                                    "held DIR" (CAVE_SANDBOX_SHM, or -) and waits for stdin
 *                                    to end
 *   shared-memory reach NAME PATH... tries the objects by name and each PATH by open(2), for
 *                                    reading and for writing; prints "what: OPENED <text>"
 *                                    or "what: <errno name>" per attempt
 *   shared-memory rules NAME         the POSIX rules of names, flags, modes, repeated opens and
 *                                    closes; prints "rule: outcome" per rule
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *error_name(int error)
{
	switch (error) {
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case EROFS:
		return "EROFS";
	case EINVAL:
		return "EINVAL";
	case EEXIST:
		return "EEXIST";
	case ENAMETOOLONG:
		return "ENAMETOOLONG";
	default:
		return strerror(error);
	}
}

static int fail(const char *step)
{
	printf("own: %s: %s\n", step, error_name(errno));
	return 1;
}

/* The semaphore's name beside the shared memory's NAME. */
static const char *semaphore_name(const char *name)
{
	static char buffer[512];
	snprintf(buffer, sizeof buffer, "%s-sem", name);
	return buffer;
}

static int own(const char *name)
{
	sem_t *semaphore = sem_open(semaphore_name(name), O_CREAT | O_EXCL, 0600, 0);
	if (semaphore == SEM_FAILED) {
		return fail("sem_open");
	}
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0) {
		return fail("shm_open");
	}
	if (ftruncate(fd, 4096) != 0) {
		return fail("ftruncate");
	}
	char *memory = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (memory == MAP_FAILED) {
		return fail("mmap");
	}
	pid_t child = fork();
	if (child == 0) {
		sem_t *again = sem_open(semaphore_name(name), 0);
		int other = shm_open(name, O_RDWR, 0);
		char *mapped = (other < 0) ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, other, 0);
		if (again == SEM_FAILED || mapped == MAP_FAILED) {
			_exit(3);
		}
		strcpy(mapped, "from the child");
		sem_post(again);
		_exit(0);
	}
	if (sem_wait(semaphore) != 0) {
		return fail("sem_wait");
	}
	int status = 0;
	waitpid(child, &status, 0);
	if (strcmp(memory, "from the child") != 0) {
		printf("own: the child's write did not arrive (status %d)\n", status);
		return 1;
	}
	if (sem_close(semaphore) != 0 || sem_unlink(semaphore_name(name)) != 0 || shm_unlink(name) != 0) {
		return fail("close and unlink");
	}
	printf("own: ok\n");
	return 0;
}

static int hold(const char *name, const char *secret)
{
	sem_t *semaphore = sem_open(semaphore_name(name), O_CREAT | O_EXCL, 0666, 0);
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0666);
	if (semaphore == SEM_FAILED || fd < 0 || write(fd, secret, strlen(secret)) < 0) {
		return fail("hold");
	}
	const char *directory = getenv("CAVE_SANDBOX_SHM");
	printf("held %s\n", (directory == NULL) ? "-" : directory);
	fflush(stdout);
	char buffer[64];
	while (read(0, buffer, sizeof buffer) > 0) {
	}
	return 0;
}

static void attempt(const char *what, int fd)
{
	if (fd < 0) {
		printf("%s: %s\n", what, error_name(errno));
		return;
	}
	char text[128] = { 0 };
	ssize_t length = pread(fd, text, sizeof text - 1, 0);
	printf("%s: OPENED %s\n", what, (length > 0) ? text : "");
	close(fd);
}

static int reach(const char *name, char **paths, int count)
{
	sem_t *semaphore = sem_open(semaphore_name(name), 0);
	printf("sem_open %s: %s\n", semaphore_name(name), (semaphore == SEM_FAILED) ? error_name(errno) : "OPENED");
	attempt("shm_open read", shm_open(name, O_RDONLY, 0));
	attempt("shm_open write", shm_open(name, O_RDWR, 0));
	for (int i = 0; i < count; i++) {
		char what[4200];
		snprintf(what, sizeof what, "read %s", paths[i]);
		attempt(what, open(paths[i], O_RDONLY | O_CLOEXEC));
		snprintf(what, sizeof what, "write %s", paths[i]);
		attempt(what, open(paths[i], O_RDWR | O_CLOEXEC));
	}
	return 0;
}

static void rule(const char *what, int failed)
{
	printf("%s: %s\n", what, failed ? error_name(errno) : "ok");
}

static int rules(const char *name)
{
	char other[600];
	rule("sem_open inner slash", sem_open("/a/b", O_CREAT, 0600, 0) == SEM_FAILED);
	rule("sem_open empty", sem_open("/", O_CREAT, 0600, 0) == SEM_FAILED);
	rule("sem_open dot", sem_open("/.", O_CREAT, 0600, 0) == SEM_FAILED);
	rule("sem_open dot dot", sem_open("..", O_CREAT, 0600, 0) == SEM_FAILED);
	memset(other, 'x', 300);
	other[300] = '\0';
	rule("sem_open too long", sem_open(other, O_CREAT, 0600, 0) == SEM_FAILED);
	rule("shm_open too long", shm_open(other, O_CREAT | O_RDWR, 0600) < 0);
	rule("shm_open inner slash", shm_open("/a/b", O_CREAT | O_RDWR, 0600) < 0);
	rule("sem_open missing", sem_open(name, 0) == SEM_FAILED);
	rule("sem_open above SEM_VALUE_MAX", sem_open(name, O_CREAT, 0600, (unsigned int) SEM_VALUE_MAX + 1u) == SEM_FAILED);
	umask(0);
	sem_t *first = sem_open(name, O_CREAT | O_EXCL, 0640, 1);
	rule("sem_open create", first == SEM_FAILED);
	rule("sem_open create again exclusive", sem_open(name, O_CREAT | O_EXCL, 0640, 1) == SEM_FAILED);
	sem_t *second = sem_open(name, O_CREAT, 0600, 5);
	printf("same address: %s\n", (second == first) ? "yes" : "no");
	int value = -1;
	sem_getvalue(second, &value);
	printf("value kept: %d\n", value);
	struct stat status;
	snprintf(other, sizeof other, "%s/sem.%s", getenv("CAVE_SANDBOX_SHM"), name + 1);
	printf("mode: %o\n", (stat(other, &status) == 0) ? (unsigned int) (status.st_mode & 07777) : 0u);
	rule("sem_close first", sem_close(first) != 0);
	rule("sem_close second", sem_close(second) != 0);
	rule("sem_close third", sem_close(first) != 0);
	rule("sem_unlink", sem_unlink(name) != 0);
	rule("sem_unlink again", sem_unlink(name) != 0);
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0604);
	rule("shm_open create", fd < 0);
	rule("shm_open create again exclusive", shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600) < 0);
	snprintf(other, sizeof other, "%s/%s", getenv("CAVE_SANDBOX_SHM"), name + 1);
	printf("mode: %o\n", (stat(other, &status) == 0) ? (unsigned int) (status.st_mode & 07777) : 0u);
	int flags = fcntl(fd, F_GETFD);
	printf("close-on-exec: %s\n", (flags >= 0 && (flags & FD_CLOEXEC)) ? "yes" : "no");
	rule("shm_unlink", shm_unlink(name) != 0);
	rule("shm_unlink again", shm_unlink(name) != 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "rules") == 0) {
		return rules(argv[2]);
	}
	if (argc >= 3 && strcmp(argv[1], "own") == 0) {
		return own(argv[2]);
	}
	if (argc == 4 && strcmp(argv[1], "hold") == 0) {
		return hold(argv[2], argv[3]);
	}
	if (argc >= 3 && strcmp(argv[1], "reach") == 0) {
		return reach(argv[2], argv + 3, argc - 3);
	}
	fprintf(stderr, "usage: shared-memory own NAME | hold NAME SECRET | reach NAME PATH...\n");
	return 2;
}
