package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import org.jspecify.annotations.Nullable;

/**
 * Builds the command line of the util-linux mechanism: {@code unshare(1)} with new user,
 * network, mount, IPC and PID namespaces behind {@code setpriv(1) --pdeathsig KILL}, and
 * the launcher's {@value LauncherContract#ROOT} mode as PID 1, which makes the mounts of
 * the view itself ({@link UnshareMountPlan}) and runs the command through its
 * {@value LauncherContract#EXEC} in-process. A pure function of its inputs; nothing here
 * touches the host.
 * <ul>
 * <li>{@code unshare --user --map-root-user --net --mount --ipc --pid --fork --kill-child
 * --mount-proc}: the caller is root of a new user namespace that owns the new network,
 * mount, IPC and PID namespaces, so it may mount there (user_namespaces(7)). The only
 * interface is {@code lo}, down unless a private loopback is requested (then the launcher
 * brings it up). {@code unshare} still creates the namespaces, so that its refusals keep
 * their words for the probe. The launcher is PID 1 of the new PID namespace; when the
 * command exits, or {@code unshare} dies, the kernel kills every process left in it
 * (pid_namespaces(7)).</li>
 * <li>With {@code keepUid}, PID 1 enters a user namespace of its own that maps no root,
 * and the command one nested in it in which it has the caller's uid and no capability
 * over the namespaces above, so it cannot unmount the tmpfs to reach the host sockets
 * beneath. Without it, the command stays uid 0 of the outer namespace, without
 * capabilities (the launcher drops them, as it drops a root caller's).</li>
 * <li>{@code setpriv --pdeathsig KILL}: {@code unshare} gets SIGKILL when the JVM thread
 * that spawned it ends (prctl(2), PR_SET_PDEATHSIG), so a killed JVM leaves no sandbox
 * behind.</li>
 * <li>The whole command line runs behind {@link Launcher#outer(Path, boolean, List)},
 * which opens the working directory and the listed paths without following symbolic
 * links.</li>
 * </ul>
 *
 * @param setpriv the {@code setpriv} binary
 * @param unshare the {@code unshare} binary
 * @param launcher the native launcher
 * @param filesystem what the command sees of the host's filesystem
 * @param uid the caller's uid, which the command keeps
 * @param gid the caller's gid, which the command keeps
 * @param keepUid whether the command gets the caller's uid back through a nested user
 * namespace, rather than running as uid 0 without capabilities
 */
public record UnshareMechanism(Path setpriv, Path unshare, Launcher launcher, FilesystemView filesystem, long uid,
		long gid, boolean keepUid) implements SandboxMechanism {

	/** The name of this mechanism. */
	public static final String NAME = "unshare";

	public UnshareMechanism {
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
				List.of("--net", "--mount", "--ipc", "--pid", "--fork", "--kill-child", "--mount-proc"),
				mountPlan(workingDirectory, loopback, limits.tmpfsSize()).commandLine(),
				this.launcher.inside(LauncherContract.EXEC, loopback, check, false, limits, argv),
				this.filesystem.listedPaths().stream().map(FilesystemView.Listed::path).toList());
	}

	/**
	 * Return the mounts and the rest of PID 1's set-up: the view, the kernel's key lists
	 * masked, a root caller's sysctls read-only, the loopback, and the user namespaces of
	 * PID 1 and the command where the command keeps the caller's uid (not for a command
	 * user, whose user namespace {@code outer} made).
	 * @param workingDirectory the working directory
	 * @param loopback whether to bring {@code lo} up
	 * @param tmpfsSize the size of each tmpfs in bytes, or {@code null} for the kernel's
	 * default (half of the memory)
	 * @return the plan
	 */
	UnshareMountPlan mountPlan(Path workingDirectory, boolean loopback, @Nullable Long tmpfsSize) {
		return new UnshareMountPlan(this.filesystem, workingDirectory, tmpfsSize, this.uid == 0, loopback,
				this.keepUid && !this.launcher.hasCommandUser(), this.uid, this.gid);
	}

	@Override
	public boolean hides(Path path) {
		return this.filesystem.hides(path);
	}

	@Override
	public Set<LinuxNamespace> namespaces() {
		return EnumSet.allOf(LinuxNamespace.class);
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

	@Override
	public SandboxMechanism withEgress(Launcher.Egress egress) {
		return new UnshareMechanism(this.setpriv, this.unshare, this.launcher.withEgress(egress), this.filesystem,
				this.uid, this.gid, this.keepUid);
	}

	@Override
	public SandboxMechanism withPaths(List<Path> readable, List<Path> writable) {
		return (readable.isEmpty() && writable.isEmpty()) ? this : new UnshareMechanism(this.setpriv, this.unshare,
				this.launcher, this.filesystem.withPaths(readable, writable), this.uid, this.gid, this.keepUid);
	}

}
