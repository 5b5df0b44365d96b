package dev.cavesandbox;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A session of its own for a process of a test's command. The launcher's filter refuses
 * {@code setsid(2)} with EPERM on every Linux mechanism (launcher 13; the seccomp
 * mechanism also {@code setpgid(2)}, since launcher 10): the whole tree stays in one
 * session, so in one scheduler autogroup, and on the seccomp mechanism in the process
 * group that {@code contain} ends with one {@code kill(2)}. A test whose daemon wanted a
 * session of its own attempts it, asserts the refusal and runs the same daemon in the
 * command's session: it never drops the daemon.
 */
public final class NewSession {

	/**
	 * What setsid(1) prints, before it exits 1, on a mechanism that refuses a new
	 * session.
	 */
	static final String REFUSED = "setsid failed: Operation not permitted";

	private NewSession() {
	}

	/**
	 * Whether a mechanism refuses its command a session of its own: every mechanism of
	 * the launcher, as the probe verified them.
	 * @param mechanism the mechanism
	 * @return whether {@code setsid(2)} fails there with EPERM
	 */
	public static boolean refused(MechanismChoice mechanism) {
		return mechanism != MechanismChoice.SANDBOX_EXEC;
	}

	/**
	 * One shell command that runs {@code command} in a session of its own
	 * ({@code setsid command}) or, where the mechanism refuses one, attempts it first
	 * ({@code setsid -w true}, whose message goes to the shell's stderr) and runs
	 * {@code command} only once the attempt has failed, in the command's process group.
	 * The caller puts it in the background or double-forks it.
	 * @param refused whether the mechanism refuses a new session ({@link #refused})
	 * @param command the shell words of the daemon
	 * @return the shell command
	 */
	public static String setsid(boolean refused, String command) {
		return refused ? "{ setsid -w true || " + command + "; }" : "setsid " + command;
	}

	/**
	 * Assert what the attempt of {@link #setsid} wrote to stderr: the refusal where the
	 * mechanism refuses a new session, nothing of {@code setsid} where it gives one.
	 * @param refused whether the mechanism refuses a new session
	 * @param stderr what the command wrote to stderr
	 */
	public static void assertAttempted(boolean refused, String stderr) {
		if (refused) {
			assertThat(stderr).as("setsid refused").contains(REFUSED);
		}
		else {
			assertThat(stderr).as("setsid allowed in a PID namespace").doesNotContain("setsid");
		}
	}

}
