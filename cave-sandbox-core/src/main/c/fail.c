/* The set-up failure (exit 125), shared by the launcher and the filter generator. */
#include "launcher.h"

/*
 * outer's own failures end with the launch token that the executor gave it in
 * CAVE_SANDBOX_LAUNCH_TOKEN (and that it takes out of the wrapper's environment): the
 * command, which can write anything on stderr and exit 125, cannot know it, so it cannot
 * pass itself off as a sandbox that was never set up.
 */
const char *launch_token;


void fail(const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	fputs("cave-sandbox-launcher: ", stderr);
	vfprintf(stderr, format, arguments);
	if (launch_token != NULL) {
		fprintf(stderr, " [launch %s]", launch_token);
	}
	fputc('\n', stderr);
	va_end(arguments);
	exit(EXIT_SETUP);
}
