package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.LandlockView;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * Builds the command line of the mechanism for hosts that allow user namespaces but
 * refuse mounts in them (containerd's AppArmor profile under Kubernetes: bubblewrap fails
 * with {@code Failed to make / slave}, unshare with
 * {@code cannot change root filesystem propagation}): {@code unshare(1)} with new user,
 * network, IPC and PID namespaces and no mount namespace. A pure function of its inputs;
 * nothing here touches the host.
 * <ul>
 * <li>{@code unshare --user --map-root-user --net --ipc --pid --fork --kill-child} behind
 * {@code setpriv --pdeathsig KILL}, as the {@link UnshareMechanism} does, without
 * {@code --mount} and {@code --mount-proc}: the network namespace has only {@code lo},
 * brought up (by the launcher) only for a private loopback; the launcher's
 * {@value LauncherContract#ROOT}, without mounts, is PID 1 of the new PID namespace, runs
 * the command in a session of its own and takes the namespace down when it exits
 * (pid_namespaces(7)); a nested user namespace gives the command the caller's uid back
 * ({@link Pid1Script#root}).</li>
 * <li>Without a mount namespace nothing can be hidden: the host's filesystem, its unix
 * sockets and its {@code /proc} (with the JVM's processes) stay where they are; in a
 * system view Landlock keeps everything but the view's paths from being read. The
 * launcher therefore runs the command with {@code --no-mount-namespace}: its seccomp
 * filter refuses unix datagram sockets as well, the launcher's {@code exec} process stays
 * as the supervisor that performs the command's unix {@code connect(2)} and
 * {@code bind(2)} itself, only beneath the working directory (abstract names: the network
 * namespace's own), and a Landlock ruleset (landlock(7)) limits writes to the working
 * directory and keeps the command from the memory, environment and signals of every
 * process outside its domain, the JVM's included.</li>
 * <li>The whole command line runs behind {@link Launcher#outer(Path)}; the working
 * directory is the one the launcher opened without following symbolic links.</li>
 * </ul>
 *
 * @param setpriv the {@code setpriv} binary
 * @param unshare the {@code unshare} binary
 * @param launcher the native launcher
 * @param filesystem what the command sees of the host's files: without a mount namespace
 * the launcher builds it with Landlock ({@link LandlockView#options(FilesystemView)}),
 * its hidden directories stay as they are
 * @param uid the caller's uid, which the command keeps
 * @param gid the caller's gid, which the command keeps
 * @param keepUid whether the command gets the caller's uid back through a nested user
 * namespace, rather than running as uid 0 without capabilities
 */
public record NamespacesMechanism(Path setpriv, Path unshare, Launcher launcher, FilesystemView filesystem, long uid,
		long gid, boolean keepUid) implements SandboxMechanism {

	/** The name of this mechanism. */
	public static final String NAME = "namespaces";

	public NamespacesMechanism {
		Objects.requireNonNull(setpriv, "setpriv must not be null");
		Objects.requireNonNull(unshare, "unshare must not be null");
		Objects.requireNonNull(launcher, "launcher must not be null");
		Objects.requireNonNull(filesystem, "filesystem must not be null");
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback, boolean check,
			ResourceLimits limits) {
		return Pid1Script.commandLine(this.launcher, workingDirectory, this.setpriv, this.unshare,
				List.of("--net", "--ipc", "--pid", "--fork", "--kill-child"),
				Pid1Script.root(List.of(), loopback, this.keepUid && !this.launcher.hasCommandUser(), this.uid,
						this.gid),
				this.launcher.inside(LauncherContract.EXEC, loopback, check, true, this.filesystem, limits, argv),
				List.of());
	}

	@Override
	public Set<LinuxNamespace> namespaces() {
		return EnumSet.of(LinuxNamespace.NETWORK, LinuxNamespace.PID, LinuxNamespace.IPC);
	}

	@Override
	public List<Path> binaries() {
		return List.of(this.launcher.path(), this.setpriv, this.unshare);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Always: the launcher brings {@code lo} up itself.
	 */
	@Override
	public boolean supportsPrivateLoopback() {
		return true;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Without a mount namespace nothing is hidden by mounts: in a system view Landlock
	 * refuses reading what lies outside it; in a host view every file stays readable.
	 */
	@Override
	public boolean hides(Path path) {
		return this.filesystem.isSystem() && this.filesystem.hides(path);
	}

	@Override
	public SandboxMechanism withEgress(Launcher.Egress egress) {
		return new NamespacesMechanism(this.setpriv, this.unshare, this.launcher.withEgress(egress), this.filesystem,
				this.uid, this.gid, this.keepUid);
	}

	@Override
	public SandboxMechanism withPaths(List<Path> readable, List<Path> writable) {
		return (readable.isEmpty() && writable.isEmpty()) ? this : new NamespacesMechanism(this.setpriv, this.unshare,
				this.launcher, this.filesystem.withPaths(readable, writable), this.uid, this.gid, this.keepUid);
	}

}
