/* Capabilities, the command user and its user namespace (--command-user; launcher.h). */
#include "launcher.h"

/* capset(2) (linux/capability.h). */
#define CAVE_CAPABILITY_VERSION_3 0x20080522
/* SECBIT_NO_SETUID_FIXUP and SECBIT_NO_SETUID_FIXUP_LOCKED (linux/securebits.h). */
#define SECBIT_NO_SETUID_FIXUP_BITS ((1UL << 2) | (1UL << 3))

struct cave_capability_header {
	uint32_t version;
	int pid;
};

struct cave_capability_data {
	uint32_t effective;
	uint32_t permitted;
	uint32_t inheritable;
};

/* Empty the bounding set but keep (a mask of capabilities), where this process may
 * (CAP_SETPCAP). */
static void drop_bounding_set(unsigned long long keep)
{
	/* A root command would get the bounding set back at execve(2) (capabilities(7)):
	 * empty it where this process may (CAP_SETPCAP); elsewhere no_new_privs and a uid
	 * other than 0 keep the command's sets empty. */
	for (int capability = 0; capability <= 63; capability++) {
		int present = prctl(PR_CAPBSET_READ, capability, 0, 0, 0);
		if (present < 0) {
			break;
		}
		if (present == 1 && !(keep & (1ULL << capability)) && prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0
		    && geteuid() == 0) {
			fail("cannot drop capability %d from the bounding set: %s", capability, strerror(errno));
		}
	}
}

/* Drop every capability but keep (a mask of capabilities, 0 for none), which stay
 * permitted, effective and inheritable, and with ambient also ambient (the command's
 * after execve(2)). */
void drop_capabilities(unsigned long long keep, int ambient)
{
	drop_bounding_set(keep);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		fail("cannot clear the ambient capabilities: %s", strerror(errno));
	}
	struct cave_capability_header header = { CAVE_CAPABILITY_VERSION_3, 0 };
	struct cave_capability_data sets[2];
	memset(sets, 0, sizeof sets);
	for (int half = 0; half < 2; half++) {
		uint32_t bits = (uint32_t) (keep >> (32 * half));
		sets[half].effective = bits;
		sets[half].permitted = bits;
		sets[half].inheritable = bits;
	}
	if (syscall(SYS_capset, &header, sets) != 0) {
		fail("cannot clear the capability sets: %s", strerror(errno));
	}
	for (int capability = 0; capability <= 63; capability++) {
		if (ambient && (keep & (1ULL << capability))
		    && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, capability, 0, 0) != 0) {
			fail("cannot make capability %d ambient: %s", capability, strerror(errno));
		}
	}
}

/*
 * Become the command user (--command-user): real, effective and saved uid and gid, no
 * supplementary group, keeping the capabilities for drop_capabilities to reduce.
 */
void switch_user(const struct options *options)
{
	uid_t user = (uid_t) options->command_user;
	gid_t group = (gid_t) ((options->command_group >= 0) ? options->command_group : options->command_user);
	/* SECBIT_NO_SETUID_FIXUP (locked): the switch keeps the capability sets, and
	 * access(2), which checks with the real uid, keeps the effective set for a uid other
	 * than 0 too (do_faccessat); without it a command's access(2) to root's working
	 * directory would answer "no" to what open(2) allows (Java's Files.isReadable,
	 * os.access). */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP_BITS, 0, 0, 0) != 0 || setgroups(0, NULL) != 0
	    || setresgid(group, group, group) != 0 || setresuid(user, user, user) != 0) {
		fail("cannot switch to the command user %lu (gid %lu): %s", options->command_user, (unsigned long) group,
		     strerror(errno));
	}
}

/*
 * The process that becomes the command, with --command-user: empty the bounding set but
 * the command user's capabilities while it still may (the switch clears the effective
 * set, CAP_SETPCAP with it), switch, keep those capabilities, ambient too.
 */
void become_command_user(const struct options *options)
{
	unsigned long long keep = COMMAND_USER_CAPABILITIES;
	if (options->host_user) {
		/* contain: a uid of the host, where those capabilities would reach every file. */
		keep = 0;
	}
	else if (options->no_mount_namespace) {
		keep = UNMOUNTED_COMMAND_USER_CAPABILITIES;
	}
	drop_bounding_set(keep);
	switch_user(options);
	drop_capabilities(keep, !options->host_user);
	/* --command-group: the executions' uids differ and share the gid, so what one of
	 * them creates in a working directory they share must be writable by the group for
	 * the next to write it, as it was when they shared one uid: the JVM's umask without
	 * its group-write bit. */
	if (options->command_group >= 0) {
		mode_t mask = umask(0);
		umask(mask & ~(mode_t) S_IWGRP);
	}
}

/* The holder's part (a child of outer): create the user namespace, report the result
 * and its pid as /proc shows it on ready, and hold the namespace until done closes. */
static void hold_user_namespace(int ready, int done) __attribute__((noreturn));

static void hold_user_namespace(int ready, int done)
{
	/* Its pid as /proc shows it, which outer's PID namespace may not (a wrapper's
	 * PID namespace around the JVM): /proc/self names it. */
	long report[2] = { (unshare(CLONE_NEWUSER) == 0) ? 0 : errno, 0 };
	char self[32];
	ssize_t length = readlink("/proc/self", self, sizeof self - 1);
	if (length > 0) {
		self[length] = '\0';
		report[1] = strtol(self, NULL, 10);
	}
	if (write(ready, report, sizeof report) != (ssize_t) sizeof report) {
		_exit(1);
	}
	char byte;
	/* Hold the namespace until outer has joined it (done's write end closes). */
	(void) read(done, &byte, 1);
	_exit(0);
}

/* Map 0 and user to themselves (uid and gid) in the user namespace of process shown. */
static void write_id_maps(long shown, long user)
{
	char map[64];
	snprintf(map, sizeof map, "0 0 1\n%lu %lu 1\n", user, user);
	const char *files[] = { "uid_map", "gid_map" };
	for (size_t i = 0; i < 2; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/%s", shown, files[i]);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t) strlen(map)) {
			fail("cannot write %s of the command user's namespace: %s", files[i], strerror(errno));
		}
		close(fd);
	}
}

/*
 * outer's part of --command-user: create a user namespace that maps 0 and UID to
 * themselves (uid and gid), from a child (a process cannot write the maps of its own new
 * namespace with ids other than its own), and join it.
 */
void join_command_user_namespace(long user)
{
	if (getuid() != 0 || geteuid() != 0) {
		fail("--command-user is for a launcher running as root");
	}
	int ready[2];
	int done[2];
	if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0) {
		fail("cannot create the pipes for the command user's namespace: %s", strerror(errno));
	}
	pid_t holder = fork();
	if (holder < 0) {
		fail("cannot fork for the command user's namespace: %s", strerror(errno));
	}
	if (holder == 0) {
		close(ready[0]);
		close(done[1]);
		hold_user_namespace(ready[1], done[0]);
	}
	close(ready[1]);
	close(done[0]);
	long report[2] = { EIO, 0 };
	if (read(ready[0], report, sizeof report) != (ssize_t) sizeof report || report[0] != 0) {
		/* The wrappers' own wording ("unshare failed: ..."), which names the cause. */
		fail("cannot create the command user's namespace: unshare failed: %s", strerror((int) report[0]));
	}
	if (report[1] <= 0) {
		fail("cannot create the command user's namespace: its holder is not in /proc");
	}
	long shown = report[1];
	write_id_maps(shown, user);
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/ns/user", shown);
	int namespace = open(path, O_RDONLY | O_CLOEXEC);
	if (namespace < 0 || setns(namespace, CLONE_NEWUSER) != 0) {
		fail("cannot join the command user's namespace: %s", strerror(errno));
	}
	close(namespace);
	close(done[1]);
	close(ready[0]);
	int status;
	while (waitpid(holder, &status, 0) < 0) {
		if (errno != EINTR) {
			fail("lost the holder of the command user's namespace: %s", strerror(errno));
		}
	}
}
