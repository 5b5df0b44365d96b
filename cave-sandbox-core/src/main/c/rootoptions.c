/* root's options (launcher.h, "root"; newroot.h), checked before anything is mounted. */
#include "newroot.h"

/* A decimal id or size, all digits, below limit; -1 if it is not one. */
static long long decimal(const char *text, const char *end, unsigned long long limit)
{
	unsigned long long value = 0;
	if (text == end) {
		return -1;
	}
	for (const char *c = text; c < end; c++) {
		if (*c < '0' || *c > '9' || value > limit / 10) {
			return -1;
		}
		value = value * 10 + (unsigned long long) (*c - '0');
	}
	return (value > limit) ? -1 : (long long) value;
}

static const char *checked_path(const char *option, const char *path)
{
	if (!normalized_path(path)) {
		fail("%s needs an absolute, normalized path without . or .. components, not '%s'", option, path);
	}
	return path;
}

static void parse_listed(const char *value, struct listed_bind *listed)
{
	/* N:PATH:ro or N:PATH:rw */
	const char *colon = strchr(value, ':');
	size_t length = strlen(value);
	long long fd = (colon == NULL) ? -1 : decimal(value, colon, 65535);
	if (fd < LISTED_FD || length < 4 || value[length - 3] != ':'
	    || (strcmp(value + length - 2, "ro") != 0 && strcmp(value + length - 2, "rw") != 0)
	    || colon >= value + length - 3) {
		fail("--bind-listed needs N:PATH:ro or N:PATH:rw with N from %d, not '%s'", LISTED_FD, value);
	}
	char *path = strndup(colon + 1, (size_t) (value + length - 3 - (colon + 1)));
	if (path == NULL) {
		fail("out of memory");
	}
	listed->fd = (int) fd;
	listed->path = checked_path("--bind-listed", path);
	listed->writable = value[length - 1] == 'w';
}

static void parse_ids(const char *option, const char *value, long *uid, long *gid)
{
	const char *colon = strchr(value, ':');
	long long first = decimal(value, (colon == NULL) ? value + strlen(value) : colon, 0x7fffffffULL);
	long long second = (colon == NULL) ? first : decimal(colon + 1, colon + 1 + strlen(colon + 1), 0x7fffffffULL);
	if (first < 0 || second < 0) {
		fail("%s needs an id or UID:GID from 0 to 2147483647, not '%s'", option, value);
	}
	*uid = (long) first;
	*gid = (long) second;
}

/* One option with a value into plan, or a failure. */
static void parse_valued_root(const char *option, const char *value, struct root_plan *plan)
{
	if (strcmp(option, "--new-root") == 0) {
		plan->new_root = checked_path(option, value);
	}
	else if (strcmp(option, "--system") == 0) {
		plan->systems[plan->system_count++] = checked_path(option, value);
	}
	else if (strcmp(option, "--link") == 0) {
		char *equals = strchr(value, '=');
		char *link = (equals == NULL) ? NULL : strndup(value, (size_t) (equals - value));
		if (link == NULL || equals[1] == '\0') {
			fail("--link needs LINK=TARGET, not '%s'", value);
		}
		plan->links[plan->link_count++] = (struct system_link) { checked_path(option, link), equals + 1 };
	}
	else if (strcmp(option, "--hide") == 0) {
		plan->hidden[plan->hidden_count++] = checked_path(option, value);
	}
	else if (strcmp(option, "--tmpfs-size") == 0) {
		long long size = decimal(value, value + strlen(value), 1ULL << 62);
		if (size <= 0) {
			fail("--tmpfs-size needs a positive decimal number, not '%s'", value);
		}
		plan->tmpfs_size = (unsigned long long) size;
	}
	else if (strcmp(option, "--bind-listed") == 0) {
		parse_listed(value, &plan->listed[plan->listed_count++]);
	}
	else if (strcmp(option, "--workdir") == 0) {
		plan->workdir = checked_path(option, value);
	}
	else if (strcmp(option, "--mask-file") == 0) {
		plan->mask_files[plan->mask_file_count++] = checked_path(option, value);
	}
	else if (strcmp(option, "--mask-dir") == 0) {
		plan->mask_dirs[plan->mask_dir_count++] = checked_path(option, value);
	}
	else if (strcmp(option, "--key-list") == 0) {
		plan->key_lists[plan->key_list_count++] = checked_path(option, value);
	}
	else if (strcmp(option, "--pid1-user") == 0) {
		long gid;
		parse_ids(option, value, &plan->pid1_user, &gid);
	}
	else if (strcmp(option, "--map") == 0) {
		parse_ids(option, value, &plan->map_uid, &plan->map_gid);
	}
	else {
		fail("unknown option %s", option);
	}
}

static int parse_flag_root(const char *argument, struct root_plan *plan)
{
	int *flag = (strcmp(argument, "--read-only") == 0)	 ? &plan->read_only
		    : (strcmp(argument, "--root-sysctls") == 0) ? &plan->root_sysctls
		    : (strcmp(argument, "--loopback") == 0)	 ? &plan->loopback
								 : NULL;
	if (flag != NULL) {
		*flag = 1;
	}
	return flag != NULL;
}

/* The plan from root's options; returns the index of the "--" that ends them. */
int parse_root_options(int argc, char **argv, struct root_plan *plan)
{
	size_t room = (size_t) argc;
	*plan = (struct root_plan) { .pid1_user = -1, .map_uid = -1, .map_gid = -1 };
	plan->systems = calloc(room, sizeof *plan->systems);
	plan->links = calloc(room, sizeof *plan->links);
	plan->hidden = calloc(room, sizeof *plan->hidden);
	plan->listed = calloc(room, sizeof *plan->listed);
	plan->mask_files = calloc(room, sizeof *plan->mask_files);
	plan->mask_dirs = calloc(room, sizeof *plan->mask_dirs);
	plan->key_lists = calloc(room, sizeof *plan->key_lists);
	if (plan->systems == NULL || plan->links == NULL || plan->hidden == NULL || plan->listed == NULL
	    || plan->mask_files == NULL || plan->mask_dirs == NULL || plan->key_lists == NULL) {
		fail("out of memory");
	}
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (parse_flag_root(argv[i], plan)) {
			continue;
		}
		if (i + 1 >= argc) {
			fail("unknown option %s", argv[i]);
		}
		parse_valued_root(argv[i], argv[i + 1], plan);
		i++;
	}
	if (i + 2 >= argc || strcmp(argv[i + 2], "exec") != 0) {
		fail("root needs the launcher's exec after --: LAUNCHER exec [OPTIONS] -- CMD ARGS...");
	}
	if (plan->new_root != NULL && plan->workdir == NULL) {
		fail("--new-root needs --workdir: the command's working directory is bound into it");
	}
	return i;
}
