package dev.cavesandbox.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Builds the command line of the Linux mechanism: util-linux {@code unshare(1)} with a new user,
 * network, mount and PID namespace, behind {@code setpriv(1) --pdeathsig KILL}. A pure function of
 * its inputs; nothing here touches the host.
 * <ul>
 * <li>{@code --user} with {@code --map-current-user} (util-linux 2.38+; the child keeps the
 * caller's uid) or {@code --map-root-user} (older util-linux; the child sees uid 0): an
 * unprivileged user may create the other namespaces inside it (user_namespaces(7)).</li>
 * <li>{@code --net}: a new network namespace whose only interface is {@code lo}, down
 * (network_namespaces(7)).</li>
 * <li>{@code --pid --fork --kill-child --mount-proc}: the command is PID 1 of a new PID namespace;
 * when it exits, or when {@code unshare} dies, the kernel kills every process left in the namespace
 * (pid_namespaces(7)).</li>
 * <li>{@code setpriv --pdeathsig KILL}: {@code unshare} gets SIGKILL when the JVM thread that
 * spawned it ends (prctl(2), PR_SET_PDEATHSIG), so a killed JVM leaves no sandbox behind. The
 * executor spawns from dedicated long-lived threads for that reason.</li>
 * </ul>
 *
 * @param setpriv the {@code setpriv} binary
 * @param unshare the {@code unshare} binary
 * @param mapCurrentUser whether to keep the caller's uid ({@code --map-current-user}) rather than
 * map it to root ({@code --map-root-user})
 */
public record UnshareMechanism(Path setpriv, Path unshare, boolean mapCurrentUser) {

	/** The name of this mechanism, as reported in results, health and logs. */
	public static final String NAME = "unshare";

	public UnshareMechanism {
		Objects.requireNonNull(setpriv, "setpriv must not be null");
		Objects.requireNonNull(unshare, "unshare must not be null");
	}

	/**
	 * Return the command line that is put before the argv of every execution, ending with
	 * {@code --}.
	 * @return the prefix
	 */
	public List<String> commandPrefix() {
		return List.of(this.setpriv.toString(), "--pdeathsig", "KILL", "--", this.unshare.toString(), "--user",
				this.mapCurrentUser ? "--map-current-user" : "--map-root-user", "--net", "--pid", "--fork",
				"--kill-child", "--mount-proc", "--");
	}

	/**
	 * Return the binaries that must exist and be executable on the host.
	 * @return the binaries
	 */
	public List<Path> binaries() {
		return List.of(this.setpriv, this.unshare);
	}

}
