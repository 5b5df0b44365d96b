/* The command line: the options of every mode, checked before anything is done. */
#include "launcher.h"

/* Whether a path is absolute and normalized: no empty, . or .. component, no trailing
 * slash (the masked paths are compared as strings). */
int normalized_path(const char *path)
{
	if (path[0] != '/') {
		return 0;
	}
	if (path[1] == '\0') {
		return 1;
	}
	for (const char *component = path + 1;;) {
		const char *end = strchr(component, '/');
		size_t length = (end == NULL) ? strlen(component) : (size_t) (end - component);
		if (length == 0 || (length == 1 && component[0] == '.')
		    || (length == 2 && component[0] == '.' && component[1] == '.')) {
			return 0;
		}
		if (end == NULL) {
			return 1;
		}
		component = end + 1;
	}
}

/* Parse an option's positive decimal value (a limit, the egress port, a command user or
 * group), small enough for rlim_t (the largest values are RLIM_INFINITY and, for
 * RLIMIT_CPU's hard limit, one below it); the caller checks its own narrower range. */
static unsigned long long positive_number(const char *option, const char *text)
{
	if (text[0] < '0' || text[0] > '9') {
		fail("%s needs a positive decimal number, not '%s'", option, text);
	}
	errno = 0;
	char *end;
	unsigned long long value = strtoull(text, &end, 10);
	if (*end != '\0' || value == 0) {
		fail("%s needs a positive decimal number, not '%s'", option, text);
	}
	if (errno == ERANGE || value >= (unsigned long long) RLIM_INFINITY / 2) {
		fail("%s %s is too large", option, text);
	}
	return value;
}

/* A flag option: 1 if argument is one (and is now set in options), 0 otherwise. */
static int parse_flag(const char *argument, struct options *options)
{
	if (strcmp(argument, "--allow-inet") == 0) {
		options->allow_inet = 1;
	}
	else if (strcmp(argument, "--allow-userns") == 0) {
		options->allow_userns = 1;
	}
	else if (strcmp(argument, "--check") == 0) {
		options->check = 1;
	}
	else if (strcmp(argument, "--no-mount-namespace") == 0) {
		options->no_mount_namespace = 1;
	}
	else if (strcmp(argument, "--handover") == 0) {
		options->handover = 1;
	}
	else {
		return 0;
	}
	return 1;
}

/* An option whose value is a path: 1 if option is one (and value is now in options), 0
 * otherwise. */
static int parse_path(const char *option, const char *value, struct options *options)
{
	if (strcmp(option, "--read") == 0 || strcmp(option, "--mask") == 0 || strcmp(option, "--write") == 0) {
		if (!normalized_path(value)) {
			fail("%s needs an absolute, normalized path without . or .. components, not '%s'", option, value);
		}
		if (option[2] == 'r') {
			options->reads[options->read_count++] = value;
		}
		else if (option[2] == 'm') {
			options->masks[options->mask_count++] = value;
		}
		else {
			options->writes[options->write_count++] = value;
		}
	}
	else if (strcmp(option, "--listed") == 0) {
		if (!normalized_path(value)) {
			fail("--listed needs an absolute, normalized path without . or .. components, not '%s'", value);
		}
		options->listed[options->listed_count++] = value;
	}
	else if (strcmp(option, "--workdir") == 0) {
		options->workdir = value;
	}
	else if (strcmp(option, "--egress") == 0) {
		if (!normalized_path(value)) {
			fail("--egress needs an absolute, normalized path without . or .. components, not '%s'", value);
		}
		options->egress = value;
	}
	else {
		return 0;
	}
	return 1;
}

/* An option with a value (a path, the egress port, an id, a limit), or a failure. */
static void parse_valued(const char *option, const char *value, struct options *options)
{
	if (parse_path(option, value, options)) {
		return;
	}
	if (strcmp(option, "--egress-port") == 0) {
		unsigned long long port = positive_number(option, value);
		if (port > 65535) {
			fail("--egress-port %s is not a port", value);
		}
		options->egress_port = (unsigned long) port;
	}
	else if (strcmp(option, "--command-user") == 0 || strcmp(option, "--command-group") == 0) {
		unsigned long long id = positive_number(option, value);
		if (id > 0x7fffffffULL) {
			fail("%s %s is not an id from 1 to 2147483647", option, value);
		}
		*((strcmp(option, "--command-user") == 0) ? &options->command_user : &options->command_group) = (long) id;
	}
	else {
		size_t limit = 0;
		while (limit < LIMIT_COUNT && strcmp(option, LIMIT_OPTIONS[limit].option) != 0) {
			limit++;
		}
		if (limit == LIMIT_COUNT) {
			fail("unknown option %s", option);
		}
		options->limits[limit] = positive_number(option, value);
	}
}

/*
 * Parse the options between the mode (argv[1]) and "--" into options, and return the
 * command after "--". Every value is checked here (a path normalized, a number positive
 * and in range); which mode takes which option is check_options's.
 */
char **parse_options(int argc, char **argv, struct options *options)
{
	if (argc < 2) {
		fail("usage: cave-sandbox-launcher --version | outer --workdir DIR [--listed PATH]... -- WRAPPER ARGS... | "
		     "root [ROOT OPTIONS] -- LAUNCHER exec ... | "
		     "init|exec|contain [--allow-inet] [--allow-userns] [--check] [--no-mount-namespace] [--command-user UID] "
		     "[--command-group GID (contain)] [--read|--mask|--write PATH]... "
		     "[--limit-memory|--limit-processes|--limit-cpu|--limit-file-size|--limit-open-files N]... "
		     "-- CMD ARGS... | init|exec|contain [OPTIONS]... --handover");
	}
	*options = (struct options) { .command_user = -1, .command_group = -1 };
	/* At most one path per two arguments: room for every --read, --mask and --write. */
	options->reads = calloc((size_t) argc, sizeof *options->reads);
	options->masks = calloc((size_t) argc, sizeof *options->masks);
	options->writes = calloc((size_t) argc, sizeof *options->writes);
	options->listed = calloc((size_t) argc, sizeof *options->listed);
	if (options->reads == NULL || options->masks == NULL || options->writes == NULL || options->listed == NULL) {
		fail("out of memory");
	}
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (parse_flag(argv[i], options)) {
			continue;
		}
		/* Every other option takes a value: without one it is not an option. */
		if (i + 1 >= argc) {
			fail("unknown option %s", argv[i]);
		}
		parse_valued(argv[i], argv[i + 1], options);
		i++;
	}
	/* Hand-over: the command comes in a frame after the set-up (handover.c). */
	if (options->handover) {
		if (i + 1 < argc) {
			fail("--handover takes the command from its frame on stdin: nothing may follow --");
		}
		return &argv[argc];
	}
	if (i + 1 >= argc) {
		fail("no command after --");
	}
	return &argv[i + 1];
}

/* The options that only some modes take, each checked against the mode. */
static void check_mode_options(const char *mode, const struct options *options)
{
	int viewed = options->read_count > 0 || options->mask_count > 0 || options->write_count > 0;
	if (viewed && (!options->no_mount_namespace || strcmp(mode, "init") == 0 || strcmp(mode, "outer") == 0)) {
		fail("--read, --mask and --write are for exec and contain with --no-mount-namespace: a mount namespace "
		     "builds the view with its mounts");
	}
	if (options->listed_count > 0 && strcmp(mode, "outer") != 0) {
		fail("--listed is for outer: the wrapper binds the listed paths through its descriptors");
	}
	if (options->egress != NULL && strcmp(mode, "outer") != 0) {
		fail("--egress is for outer: the bridge reaches the egress directory through its descriptor");
	}
	if (options->egress_port != 0 && (strcmp(mode, "init") != 0 && strcmp(mode, "exec") != 0)) {
		fail("--egress-port is for init and exec: the egress bridge needs the sandbox's own network namespace");
	}
	if (options->egress_port != 0 && !options->allow_inet) {
		fail("--egress-port needs --allow-inet: the command reaches the bridge on its private loopback");
	}
	if (options->mask_count > 0 && options->read_count == 0) {
		fail("--mask needs a --read path that holds it: the host view masks nothing");
	}
	/* Only contain switches to a gid other than the uid: the user namespace of the other
	 * modes maps the command user's uid and gid, nothing else. */
	if (options->command_group >= 0 && (options->command_user < 0 || strcmp(mode, "contain") != 0)) {
		fail("--command-group is for contain with --command-user");
	}
}

/*
 * Check the options against the mode, before the mode does anything. An unknown mode is
 * main's to refuse, after these checks.
 */
void check_options(const char *mode, const struct options *options)
{
	check_mode_options(mode, options);
	if (strcmp(mode, "outer") == 0) {
		for (size_t limit = 0; limit < LIMIT_COUNT; limit++) {
			if (options->limits[limit] != 0) {
				fail("%s is for init, exec and contain: the limits are the command's", LIMIT_OPTIONS[limit].option);
			}
		}
	}
	if (options->handover && strcmp(mode, "init") != 0 && strcmp(mode, "exec") != 0
	    && strcmp(mode, "contain") != 0) {
		fail("--handover is for init, exec and contain: they run the command");
	}
	if (strcmp(mode, "init") == 0 && options->no_mount_namespace) {
		fail("init runs in bubblewrap's mount namespace: --no-mount-namespace is for exec and contain");
	}
}
