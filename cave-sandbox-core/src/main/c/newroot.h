/* root (newroot.c, readonly.c): the plan of the unshare mechanism's mounts, as its
 * options give it (launcher.h, "root"). */
#ifndef CAVE_SANDBOX_NEWROOT_H
#define CAVE_SANDBOX_NEWROOT_H

#include "launcher.h"

/* A listed path (--bind-listed N:PATH:ro|rw): the descriptor outer opened it at, and
 * the one root opened it at in the new mount namespace before mounting anything. */
struct listed_bind {
	int fd;
	int source;
	const char *path;
	int writable;
};

/* A system link (--link LINK=TARGET). */
struct system_link {
	const char *link;
	const char *target;
};

struct root_plan {
	/* --new-root: where the new root's tmpfs is mounted before pivot_root; NULL: the
	 * host's root stays (a host view). */
	const char *new_root;
	const char **systems;
	size_t system_count;
	struct system_link *links;
	size_t link_count;
	const char **hidden;
	size_t hidden_count;
	/* --tmpfs-size: the size of each hidden directory's tmpfs in bytes; 0: the kernel's
	 * default. */
	unsigned long long tmpfs_size;
	struct listed_bind *listed;
	size_t listed_count;
	/* --workdir: where the working directory (".") is bound. */
	const char *workdir;
	const char **mask_files;
	size_t mask_file_count;
	const char **mask_dirs;
	size_t mask_dir_count;
	/* --key-list: files of /proc masked after the pivot where they exist. */
	const char **key_lists;
	size_t key_list_count;
	int read_only;
	int root_sysctls;
	int loopback;
	/* --pid1-user: the uid and gid of PID 1 in a user namespace of its own; -1: none. */
	long pid1_user;
	/* --map UID:GID: the command's ids in a user namespace of its own; -1: none. */
	long map_uid;
	long map_gid;
};

/* rootoptions.c */
int parse_root_options(int argc, char **argv, struct root_plan *plan);

/* readonly.c */
int path_within(const char *path, const char *directory);
void set_mount_attributes(const char *path, int read_only, int nosuid_nodev);
void read_only_pass(const struct root_plan *plan);

#endif
