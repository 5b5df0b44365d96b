/* main: the modes' dispatch (launcher.h describes each mode). */
#include "launcher.h"

static void become_non_dumpable(void)
{
	/* Not dumpable from the first step on (prctl(2)), whatever the mode: /proc shows a
	 * process's descriptors, working directory, environment and memory only to whoever
	 * may ptrace it (proc(5), PTRACE_MODE_READ), and a process of the command's own uid
	 * may unless the target is not dumpable. The descriptors this process inherited were
	 * open before it ran, but no command existed yet in its PID namespace (init, root,
	 * and exec's processes are started before the command; outer and contain run on the
	 * host, where the command user differs from a root JVM's uid and Landlock scopes
	 * ptrace). execve(2) makes the command dumpable again. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		fail("cannot make the launcher non-dumpable: %s", strerror(errno));
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cave-sandbox-launcher %s\n", LAUNCHER_VERSION);
		return 0;
	}
	become_non_dumpable();
	/* root parses its own options (newroot.c), then its command's exec options. */
	if (argc >= 2 && strcmp(argv[1], "root") == 0) {
		return new_root(argc, argv);
	}
	struct options options;
	char **command = parse_options(argc, argv, &options);
	const char *mode = argv[1];
	check_options(mode, &options);
	if (strcmp(mode, "outer") == 0) {
		return outer(&options, command);
	}
	if (strcmp(mode, "init") == 0) {
		return init(&options, command);
	}
	if (strcmp(mode, "contain") == 0) {
		return contain_mode(&options, command);
	}
	if (strcmp(mode, "exec") == 0) {
		exec_mode(&options, command);
	}
	fail("unknown mode %s", mode);
}
