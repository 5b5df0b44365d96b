package dev.cavesandbox;

import dev.cavesandbox.mechanism.LinuxNamespace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A session of its own for a process of a test's command, on every rung. Only a rung with
 * a PID namespace ({@code bwrap}, {@code unshare}, {@code namespaces}) lets the command
 * begin one, and the namespace's end kills whatever is in it. The {@code seccomp} rung
 * has no PID namespace: there the launcher's filter refuses {@code setsid(2)} and
 * {@code setpgid(2)} with EPERM (launcher v10), so that the command's process group stays
 * its whole tree, which {@code contain} ends with one {@code kill(2)} of the group that
 * no fork can outrun. A test whose daemon wanted a session of its own keeps it where the
 * rung gives one, and on {@code seccomp} attempts it, asserts the refusal and runs the
 * same daemon in the command's process group: it never drops the daemon.
 */
final class NewSession {

	/** What setsid(1) prints, before it exits 1, on a rung that refuses a new session. */
	static final String REFUSED = "setsid failed: Operation not permitted";

	private NewSession() {
	}

	/**
	 * Whether a rung refuses its command a session of its own: the rungs without a PID
	 * namespace, as the probe verified them.
	 * @param mechanism the rung
	 * @return whether {@code setsid(2)} fails there with EPERM
	 */
	static boolean refused(MechanismChoice mechanism) {
		return !LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.PID);
	}

	/**
	 * One shell command that runs {@code command} in a session of its own
	 * ({@code setsid command}) or, where the rung refuses one, attempts it first
	 * ({@code setsid -w true}, whose message goes to the shell's stderr) and runs
	 * {@code command} only once the attempt has failed, in the command's process group.
	 * The caller puts it in the background or double-forks it.
	 * @param refused whether the rung refuses a new session ({@link #refused})
	 * @param command the shell words of the daemon
	 * @return the shell command
	 */
	static String setsid(boolean refused, String command) {
		return refused ? "{ setsid -w true || " + command + "; }" : "setsid " + command;
	}

	/**
	 * Assert what the attempt of {@link #setsid} wrote to stderr: the refusal where the
	 * rung refuses a new session, nothing of {@code setsid} where it gives one.
	 * @param refused whether the rung refuses a new session
	 * @param stderr what the command wrote to stderr
	 */
	static void assertAttempted(boolean refused, String stderr) {
		if (refused) {
			assertThat(stderr).as("setsid refused on a rung without a PID namespace").contains(REFUSED);
		}
		else {
			assertThat(stderr).as("setsid allowed in a PID namespace").doesNotContain("setsid");
		}
	}

}
