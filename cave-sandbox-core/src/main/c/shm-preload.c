/*
 * libcave-shm.so: POSIX shared memory and named semaphores (shm_overview(7),
 * sem_overview(7)) in a directory of the execution's own, for the mechanisms without a
 * mount namespace. Not part of the launcher: a preload library (ld.so(8) LD_PRELOAD) that
 * the executor puts into the command's environment with CAVE_SANDBOX_SHM=DIR.
 *
 * glibc and musl keep these objects as files in /dev/shm (glibc: /dev/shm/NAME and
 * /dev/shm/sem.NAME), which is the host's on those mechanisms and which Landlock keeps
 * the command from writing (landlock.c): sem_open and shm_open fail with EACCES. This
 * library defines shm_open, shm_unlink, sem_open, sem_close and sem_unlink, which the
 * program's calls bind to before libc's, and keeps the objects as DIR/NAME and
 * DIR/sem.NAME instead; DIR is beneath the execution's write paths, no other execution's.
 * Without CAVE_SANDBOX_SHM (or with an empty one) DIR is /dev/shm, libc's own place.
 *
 * It must load into any dynamically linked program, glibc's or musl's (musl's loader ends
 * a program whose preload does not load): built with -nostdlib -shared, so it needs no
 * library (no DT_NEEDED), and every function it calls is a weak reference, bound to the
 * process's own libc when the process has one and left null otherwise (a missing one makes
 * the call fail with ENOSYS, never the load). A semaphore's memory is initialised by that
 * libc's own sem_init(3) with pshared 1 in a MAP_SHARED mapping of the file, so sem_wait
 * and sem_post of that libc work on it. The file is created under a temporary name,
 * initialised, then linked to its name (link(2)), so that no process opens a semaphore
 * before it is initialised; as glibc does.
 *
 * Names (POSIX, as glibc and musl check them): leading slashes are skipped; an empty name,
 * a name with another '/', "." and ".." are EINVAL; a name longer than NAME_MAX is
 * ENAMETOOLONG. Opening one semaphore (the same file) twice in a process returns the same
 * address, counted, until as many sem_close calls (sem_open(3p)); sem_close of an address
 * this library did not return is EINVAL.
 *
 * Statically linked programs, and programs that make these system calls themselves, are
 * not reached: for them /dev/shm stays refused (the README names this limitation).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DIRECTORY_VARIABLE "CAVE_SANDBOX_SHM"
#define DEFAULT_DIRECTORY "/dev/shm"
#define SEMAPHORE_PREFIX "sem."
/* The size of a semaphore's file and mapping: above sizeof(sem_t) of every libc (glibc
 * 32 bytes, musl 128 on 64-bit), which may not be this compiler's. */
#define SEMAPHORE_SIZE 256
#define PATH_SIZE (PATH_MAX + NAME_MAX + 8)

#define WEAK __attribute__((weak))

/* The process's libc, bound at load time, null where it has none. */
extern long syscall(long number, ...) WEAK;
extern char *getenv(const char *name) WEAK;
extern void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) WEAK;
extern int munmap(void *address, size_t length) WEAK;
extern void *malloc(size_t size) WEAK;
extern void free(void *pointer) WEAK;
extern int sem_init(sem_t *semaphore, int shared, unsigned int value) WEAK;
extern int *__errno_location(void) WEAK;

/* The definitions, visible to the program: what this library is for. */
int shm_open(const char *name, int flags, mode_t mode) __attribute__((visibility("default")));
int shm_unlink(const char *name) __attribute__((visibility("default")));
sem_t *sem_open(const char *name, int flags, ...) __attribute__((visibility("default")));
int sem_close(sem_t *semaphore) __attribute__((visibility("default")));
int sem_unlink(const char *name) __attribute__((visibility("default")));

/* One semaphore this process has open: its file, its mapping and how often it was opened. */
struct opened {
	struct opened *next;
	dev_t device;
	ino_t inode;
	sem_t *address;
	unsigned long count;
};

static struct opened *opened_list;

/* The lock of opened_list: the pid of the process whose thread holds it, 0 when free. A
 * pid other than this process's was inherited through fork(2) from a thread that does not
 * exist here, and is taken over. */
static volatile long opened_lock;

static void set_errno(int error)
{
	if (__errno_location) {
		*__errno_location() = error;
	}
}

static int get_errno(void)
{
	return __errno_location ? *__errno_location() : EIO;
}

/* The system call, or -1 with ENOSYS where the process has no libc to make it. */
#define SYSCALL(...) (syscall ? syscall(__VA_ARGS__) : (set_errno(ENOSYS), -1L))

static size_t length_of(const char *text)
{
	size_t length = 0;
	while (text[length] != '\0') {
		length++;
	}
	return length;
}

static void copy(char *to, const char *from, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		to[i] = from[i];
	}
}

/*
 * Write the path of an object into path (PATH_SIZE bytes): the directory, '/', the
 * prefix and the name without its leading slashes. 0, or -1 with errno.
 */
static int object_path(char *path, const char *name, const char *prefix)
{
	if (name == NULL) {
		set_errno(EINVAL);
		return -1;
	}
	while (*name == '/') {
		name++;
	}
	size_t length = length_of(name);
	for (size_t i = 0; i < length; i++) {
		if (name[i] == '/') {
			set_errno(EINVAL);
			return -1;
		}
	}
	if (length == 0 || (name[0] == '.' && (length == 1 || (length == 2 && name[1] == '.')))) {
		set_errno(EINVAL);
		return -1;
	}
	size_t prefix_length = length_of(prefix);
	if (length + prefix_length > NAME_MAX) {
		set_errno(ENAMETOOLONG);
		return -1;
	}
	const char *directory = getenv ? getenv(DIRECTORY_VARIABLE) : NULL;
	if (directory == NULL || directory[0] == '\0') {
		directory = DEFAULT_DIRECTORY;
	}
	size_t directory_length = length_of(directory);
	if (directory_length > PATH_MAX) {
		set_errno(ENAMETOOLONG);
		return -1;
	}
	copy(path, directory, directory_length);
	path[directory_length] = '/';
	copy(path + directory_length + 1, prefix, prefix_length);
	copy(path + directory_length + 1 + prefix_length, name, length + 1);
	return 0;
}

int shm_open(const char *name, int flags, mode_t mode)
{
	char path[PATH_SIZE];
	if (object_path(path, name, "") != 0) {
		return -1;
	}
	return (int) SYSCALL(SYS_openat, (long) AT_FDCWD, path, (long) (flags | O_NOFOLLOW | O_CLOEXEC), (long) mode);
}

int shm_unlink(const char *name)
{
	char path[PATH_SIZE];
	if (object_path(path, name, "") != 0) {
		return -1;
	}
	return (int) SYSCALL(SYS_unlinkat, (long) AT_FDCWD, path, 0L);
}

int sem_unlink(const char *name)
{
	char path[PATH_SIZE];
	if (object_path(path, name, SEMAPHORE_PREFIX) != 0) {
		return -1;
	}
	if (SYSCALL(SYS_unlinkat, (long) AT_FDCWD, path, 0L) != 0) {
		/* sem_unlink(3p) knows EACCES, not EPERM (glibc maps it too). */
		if (get_errno() == EPERM) {
			set_errno(EACCES);
		}
		return -1;
	}
	return 0;
}

static void lock_opened(void)
{
	long self = SYSCALL(SYS_getpid);
	for (;;) {
		long holder = 0;
		if (__atomic_compare_exchange_n(&opened_lock, &holder, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			return;
		}
		if (holder != self
		    && __atomic_compare_exchange_n(&opened_lock, &holder, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			return;
		}
		SYSCALL(SYS_sched_yield);
	}
}

static void unlock_opened(void)
{
	__atomic_store_n(&opened_lock, 0L, __ATOMIC_RELEASE);
}

/* Close fd, keeping errno. */
static void close_keeping_errno(int fd)
{
	int error = get_errno();
	SYSCALL(SYS_close, (long) fd);
	set_errno(error);
}

/*
 * Create the semaphore at path, initialised to value, unless a file is there: a file
 * under a temporary name beside it, initialised, then linked to path. The open
 * descriptor, or -1 with errno (EEXIST where path exists).
 */
static int create_semaphore(const char *path, mode_t mode, unsigned int value)
{
	if (mmap == NULL || munmap == NULL || sem_init == NULL) {
		set_errno(ENOSYS);
		return -1;
	}
	char temporary[PATH_SIZE + 32];
	size_t length = length_of(path);
	copy(temporary, path, length);
	static const char digits[] = "0123456789abcdef";
	unsigned long seed = (unsigned long) SYSCALL(SYS_gettid) * 2654435761UL ^ (unsigned long) &length;
	int fd = -1;
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		char *end = temporary + length;
		copy(end, ".tmp.", 5);
		end += 5;
		unsigned long bits = seed + (unsigned long) attempt * 0x9e3779b97f4a7c15UL;
		for (int i = 0; i < 16; i++, bits >>= 4) {
			*end++ = digits[bits & 15];
		}
		*end = '\0';
		fd = (int) SYSCALL(SYS_openat, (long) AT_FDCWD, temporary,
				   (long) (O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC), (long) mode);
		if (fd < 0 && get_errno() != EEXIST) {
			return -1;
		}
	}
	if (fd < 0) {
		return -1;
	}
	int result = -1;
	void *memory = MAP_FAILED;
	if (SYSCALL(SYS_ftruncate, (long) fd, (long) SEMAPHORE_SIZE) == 0) {
		memory = mmap(NULL, SEMAPHORE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	}
	if (memory != MAP_FAILED && sem_init((sem_t *) memory, 1, value) == 0
	    && SYSCALL(SYS_linkat, (long) AT_FDCWD, temporary, (long) AT_FDCWD, path, 0L) == 0) {
		result = fd;
	}
	int error = get_errno();
	if (memory != MAP_FAILED) {
		munmap(memory, SEMAPHORE_SIZE);
	}
	SYSCALL(SYS_unlinkat, (long) AT_FDCWD, temporary, 0L);
	if (result < 0) {
		SYSCALL(SYS_close, (long) fd);
	}
	set_errno(error);
	return result;
}

/* Open the semaphore at path as sem_open's flags say: its descriptor, or -1 with errno. */
static int open_semaphore(const char *path, int flags, mode_t mode, unsigned int value)
{
	if ((flags & O_CREAT) && (flags & O_EXCL)) {
		return create_semaphore(path, mode, value);
	}
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd = (int) SYSCALL(SYS_openat, (long) AT_FDCWD, path, (long) (O_RDWR | O_NOFOLLOW | O_CLOEXEC), 0L);
		if (fd >= 0 || get_errno() != ENOENT || !(flags & O_CREAT)) {
			return fd;
		}
		fd = create_semaphore(path, mode, value);
		if (fd >= 0 || get_errno() != EEXIST) {
			return fd;
		}
		/* Another process created it meanwhile: open that one. */
	}
	set_errno(EAGAIN);
	return -1;
}

/* Map the semaphore fd, or count another open of the mapping this process has of it. */
static sem_t *map_semaphore(int fd)
{
	struct stat status;
	if (SYSCALL(SYS_fstat, (long) fd, &status) != 0) {
		return SEM_FAILED;
	}
	if (!S_ISREG(status.st_mode) || status.st_size < 1) {
		/* Not a semaphore (a file planted under its name): its mapping would not work,
		 * or fault (SIGBUS) where no byte of the file is beneath it. */
		set_errno(EINVAL);
		return SEM_FAILED;
	}
	lock_opened();
	sem_t *address = SEM_FAILED;
	for (struct opened *entry = opened_list; entry != NULL; entry = entry->next) {
		if (entry->device == status.st_dev && entry->inode == status.st_ino) {
			entry->count++;
			address = entry->address;
			break;
		}
	}
	if (address == SEM_FAILED) {
		struct opened *entry = malloc ? malloc(sizeof *entry) : NULL;
		void *memory = (entry == NULL || mmap == NULL)
				       ? MAP_FAILED
				       : mmap(NULL, SEMAPHORE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (memory == MAP_FAILED) {
			int error = (entry == NULL) ? ENOMEM : get_errno();
			if (entry != NULL) {
				free(entry);
			}
			set_errno(error);
		} else {
			entry->device = status.st_dev;
			entry->inode = status.st_ino;
			entry->address = (sem_t *) memory;
			entry->count = 1;
			entry->next = opened_list;
			opened_list = entry;
			address = entry->address;
		}
	}
	unlock_opened();
	return address;
}

sem_t *sem_open(const char *name, int flags, ...)
{
	mode_t mode = 0;
	unsigned int value = 0;
	if (flags & O_CREAT) {
		va_list arguments;
		va_start(arguments, flags);
		mode = (mode_t) va_arg(arguments, unsigned int);
		value = va_arg(arguments, unsigned int);
		va_end(arguments);
		if (value > SEM_VALUE_MAX) {
			set_errno(EINVAL);
			return SEM_FAILED;
		}
	}
	char path[PATH_SIZE];
	if (object_path(path, name, SEMAPHORE_PREFIX) != 0) {
		return SEM_FAILED;
	}
	int fd = open_semaphore(path, flags, mode, value);
	if (fd < 0) {
		return SEM_FAILED;
	}
	sem_t *address = map_semaphore(fd);
	close_keeping_errno(fd);
	return address;
}

int sem_close(sem_t *semaphore)
{
	lock_opened();
	struct opened **link = &opened_list;
	while (*link != NULL && (*link)->address != semaphore) {
		link = &(*link)->next;
	}
	struct opened *entry = *link;
	if (entry == NULL) {
		unlock_opened();
		set_errno(EINVAL);
		return -1;
	}
	if (--entry->count == 0) {
		*link = entry->next;
	} else {
		entry = NULL;
	}
	unlock_opened();
	if (entry != NULL) {
		munmap(entry->address, SEMAPHORE_SIZE);
		free(entry);
	}
	return 0;
}
