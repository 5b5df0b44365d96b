/* The egress bridge (--egress-port; launcher.h). */
#include "launcher.h"

/* Write all of length bytes; 0, or -1 when the other end is gone. */
static int send_all(int fd, const char *buffer, size_t length)
{
	while (length > 0) {
		ssize_t sent = send(fd, buffer, length, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR) {
			continue;
		}
		if (sent <= 0) {
			return -1;
		}
		buffer += sent;
		length -= (size_t) sent;
	}
	return 0;
}

/*
 * Relay bytes both ways between a client of the bridge and the proxy until both ends
 * have finished: an end that reaches end of file shuts down the other's writing half,
 * so that a request half-closed by its client still gets its whole answer.
 */
static void relay(int client, int proxy)
{
	static char buffer[65536];
	struct pollfd ends[2] = { { client, POLLIN, 0 }, { proxy, POLLIN, 0 } };
	int open_ends = 2;
	while (open_ends > 0) {
		if (poll(ends, 2, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			return;
		}
		for (int side = 0; side < 2; side++) {
			if (ends[side].fd < 0 || ends[side].revents == 0) {
				continue;
			}
			int to = (side == 0) ? proxy : client;
			ssize_t length = read(ends[side].fd, buffer, sizeof buffer);
			if (length < 0 && errno == EINTR) {
				continue;
			}
			if (length <= 0) {
				shutdown(to, SHUT_WR);
				ends[side].fd = -1;
				open_ends--;
			}
			else if (send_all(to, buffer, (size_t) length) != 0) {
				return;
			}
		}
	}
}

/*
 * The bridge's process: accepts each connection to 127.0.0.1:PORT of the sandbox's own
 * network namespace and relays it, in a process of its own, to the JVM's egress proxy,
 * the unix socket EGRESS_SOCKET in the egress directory (EGRESS_FD, its working
 * directory from here on: the socket is reached through outer's descriptor, whatever
 * the sandbox's mounts or Landlock show of the host). It decides nothing: the proxy
 * checks every destination, so a command that reaches the socket without the bridge
 * gains nothing. It runs as the command's user without any capability, with
 * no_new_privs, not dumpable (the command can neither ptrace it, which the filter also
 * refuses, nor write its memory through /proc), and under the filter of a mechanism with a
 * mount namespace and a private loopback (socket(AF_UNIX) allowed, for the proxy), but
 * without the command's Landlock ruleset.
 */
static void bridge(int listener, const struct options *options) __attribute__((noreturn));

static void bridge(int listener, const struct options *options)
{
	if (fchdir(EGRESS_FD) != 0) {
		_exit(EXIT_SETUP);
	}
	close(EGRESS_FD);
	/* It serves the command through the grace period that PID 1's SIGTERM starts, and
	 * dies with the namespace. */
	signal(SIGTERM, SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
		_exit(EXIT_SETUP);
	}
	close(null);
	if (options->command_user >= 0 && getuid() != (uid_t) options->command_user) {
		switch_user(options);
	}
	drop_capabilities(0, 0);
	struct options filter = { .allow_inet = 1, .command_user = -1 };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		_exit(EXIT_SETUP);
	}
	load_filter(&filter);
	/* Each connection's process is reaped by the kernel. */
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (client < 0) {
			continue;
		}
		pid_t connection = fork();
		if (connection == 0) {
			close(listener);
			int proxy = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_un address = { .sun_family = AF_UNIX, .sun_path = EGRESS_SOCKET };
			if (proxy < 0 || connect(proxy, (struct sockaddr *) &address, sizeof address) != 0) {
				_exit(1);
			}
			relay(client, proxy);
			_exit(0);
		}
		close(client);
	}
}

/*
 * --egress-port: listen on 127.0.0.1:PORT (the command's own loopback) before the
 * command runs, so that its first connection finds the bridge ready, and start the
 * bridge with that socket. With exec the bridge is not the command's child (a shell's
 * wait(1) without arguments would wait for it): an intermediate child forks it and
 * exits, and PID 1 of the sandbox's PID namespace inherits it; it dies with that
 * namespace. With init it is PID 1's child, and dies the same way.
 */
void start_bridge(const struct options *options, int start, int pid1)
{
	struct stat status;
	if (fstat(EGRESS_FD, &status) != 0 || !S_ISDIR(status.st_mode)) {
		fail("--egress-port needs the egress directory that outer opens for --egress at descriptor %d", EGRESS_FD);
	}
	int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int reuse = 1;
	struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t) options->egress_port),
				       .sin_addr = { htonl(INADDR_LOOPBACK) } };
	if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse) != 0
	    || bind(listener, (struct sockaddr *) &address, sizeof address) != 0 || listen(listener, 128) != 0) {
		fail("cannot listen on 127.0.0.1:%lu for the egress bridge: %s (is loopback up?)", options->egress_port,
		     strerror(errno));
	}
	pid_t child = fork();
	if (child < 0) {
		fail("cannot fork the egress bridge: %s", strerror(errno));
	}
	if (child == 0) {
		if (start >= 0) {
			close(start);
		}
		if (!pid1) {
			pid_t grandchild = fork();
			if (grandchild != 0) {
				_exit(grandchild < 0 ? EXIT_SETUP : 0);
			}
		}
		bridge(listener, options);
	}
	close(listener);
	close(EGRESS_FD);
	if (!pid1) {
		int child_status;
		while (waitpid(child, &child_status, 0) < 0) {
			if (errno != EINTR) {
				fail("lost the egress bridge's parent: %s", strerror(errno));
			}
		}
		if (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0) {
			fail("cannot fork the egress bridge");
		}
	}
}
