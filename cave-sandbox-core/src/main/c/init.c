/* init, PID 1 of bubblewrap's PID namespace (bwrap --as-pid-1; launcher.h). */
#include "launcher.h"

/* init: the set-up, then PID 1 forks the command and reaps every orphan until it ends. */
int init(const struct options *options, char **argv)
{
	if (getpid() != 1) {
		fail("init must run as PID 1 of a new PID namespace");
	}
	catch_terminate(pass_on_to_namespace);
	int start = set_up(options, 1);
	/* The command in a session of its own (bwrap's --new-session would have taken PID 1
	 * out of the wrapper's process group, which outer's SIGTERM reaches): it cannot push
	 * input into the JVM's terminal (TIOCSTI). */
	pid_t command = fork_command();
	if (command == 0) {
		load_session_filter();
		if (options->command_user >= 0) {
			become_command_user(options);
		}
		if (options->check) {
			check(options);
		}
		/* The limits are the command's, not PID 1's: its reaping must not fail. A failure
		 * here ends PID 1 too, before the start byte. */
		set_limits(options, 0);
		start_command(options, start, argv);
	}
	if (start >= 0) {
		close(start);
	}
	if (options->command_user >= 0) {
		drop_capabilities(PID1_CAPABILITIES, 0);
	}
	/* The kernel kills whatever is left in the namespace when PID 1 exits. */
	return reap_until(command);
}
