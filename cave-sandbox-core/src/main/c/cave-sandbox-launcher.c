/*
 * STUB of cave-sandbox-launcher (issue 10), only so that the build's compile and link
 * steps and the Java side that installs and verifies the binary can be built and tested.
 * The real launcher (the lead's cave-sandbox-launcher.c) replaces this file.
 *
 * cave-sandbox-launcher --version             prints "cave-sandbox-launcher 1"
 * cave-sandbox-launcher MODE [OPTIONS] -- CMD  execvp()s CMD; MODE (outer, init, exec)
 *                                              and the options up to "--" are skipped
 */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* Referenced so that the static link against libseccomp is exercised. */
	const struct scmp_version *library = seccomp_version();
	if (library == NULL) {
		fprintf(stderr, "cave-sandbox-launcher: libseccomp reports no version\n");
		return 125;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cave-sandbox-launcher 1\n");
		return 0;
	}
	int command = 1;
	while (command < argc && strcmp(argv[command], "--") != 0) {
		command++;
	}
	command++;
	if (command >= argc) {
		fprintf(stderr, "cave-sandbox-launcher: usage: cave-sandbox-launcher outer|init|exec [OPTIONS] -- CMD [ARGS...]\n");
		return 125;
	}
	execvp(argv[command], &argv[command]);
	int error = errno;
	fprintf(stderr, "cave-sandbox: cannot execute %s: %s\n", argv[command], strerror(error));
	return (error == ENOENT) ? 127 : 126;
}
