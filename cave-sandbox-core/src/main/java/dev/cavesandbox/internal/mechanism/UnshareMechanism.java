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

import static dev.cavesandbox.internal.mechanism.ShellQuoting.quote;

/**
 * Builds the command line of the util-linux mechanism: {@code unshare(1)} with new user,
 * network, mount, IPC and PID namespaces behind {@code setpriv(1) --pdeathsig KILL}, a
 * short {@code sh} script as PID 1 that sets up the mounts ({@link UnshareMountScript}),
 * and a nested user namespace that gives the command the caller's uid back. A pure
 * function of its inputs; nothing here touches the host.
 * <ul>
 * <li>{@code unshare --user --map-root-user --net --mount --ipc --pid --fork --kill-child
 * --mount-proc}: the caller is root of a new user namespace that owns the new network,
 * mount, IPC and PID namespaces, so it may mount there (user_namespaces(7)). The only
 * interface is {@code lo}, down unless a private loopback is requested (then
 * {@code ip link set lo up}). The script is PID 1 of the new PID namespace
 * ({@link Pid1Script}); when the command exits, or {@code unshare} dies, the kernel kills
 * every process left in it (pid_namespaces(7)).</li>
 * <li>Then {@code unshare --user --map-user=UID --map-group=GID} (util-linux 2.38+): a
 * nested user namespace in which the command has the caller's uid and no capability over
 * the namespaces above, so it cannot unmount the tmpfs to reach the host sockets beneath.
 * With older util-linux, {@code keepUid} is false: the command stays uid 0 of the outer
 * namespace, without capabilities (the launcher drops them, as it drops a root
 * caller's).</li>
 * <li>{@code setpriv --pdeathsig KILL}: {@code unshare} gets SIGKILL when the JVM thread
 * that spawned it ends (prctl(2), PR_SET_PDEATHSIG), so a killed JVM leaves no sandbox
 * behind.</li>
 * <li>The whole command line runs behind {@link Launcher#outer(Path, boolean, List)},
 * which opens the working directory and the listed paths without following symbolic
 * links; the command runs behind the launcher's {@code exec}.</li>
 * </ul>
 * Each mount is one {@code mount(8)} process, which makes this mechanism slower to start
 * than bubblewrap, which mounts from one process.
 *
 * @param setpriv the {@code setpriv} binary
 * @param unshare the {@code unshare} binary
 * @param launcher the native launcher
 * @param ip the iproute2 {@code ip} binary that brings {@code lo} up for a private
 * loopback, or {@code null} where there is none (no private loopback then)
 * @param filesystem what the command sees of the host's filesystem
 * @param uid the caller's uid, which the command keeps
 * @param gid the caller's gid, which the command keeps
 * @param keepUid whether the command gets the caller's uid back through a nested user
 * namespace (util-linux 2.38+), rather than running as uid 0 without capabilities
 */
public record UnshareMechanism(Path setpriv, Path unshare, @Nullable Path ip, Launcher launcher,
		FilesystemView filesystem, long uid, long gid, boolean keepUid) implements SandboxMechanism {

	/** The name of this mechanism. */
	public static final String NAME = "unshare";

	/**
	 * The masks of the kernel's key lists ({@code unshare-key-lists.sh}), with
	 * {@link Launcher#KEY_LISTS} put in.
	 */
	private static final String KEY_LISTS = ShellScripts.fill(ShellScripts.load("unshare-key-lists.sh"), "@KEY_LISTS@",
			String.join(" ", Launcher.KEY_LISTS));

	/** A root caller's read-only sysctls ({@code unshare-root-sysctls.sh}). */
	private static final String ROOT_SYSCTLS = ShellScripts.load("unshare-root-sysctls.sh");

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
		if (loopback && this.ip == null) {
			throw new IllegalArgumentException("a private loopback needs the ip binary (iproute2)");
		}
		return Pid1Script.commandLine(this.launcher, workingDirectory, this.setpriv, this.unshare,
				List.of("--net", "--mount", "--ipc", "--pid", "--fork", "--kill-child", "--mount-proc"),
				setupScript(workingDirectory, loopback, limits.tmpfsSize()),
				this.launcher.inside(LauncherContract.EXEC, loopback, check, false, limits, argv),
				this.filesystem.listedPaths().stream().map(FilesystemView.Listed::path).toList());
	}

	/**
	 * Return the script of {@link #setupScript(Path, boolean, Long)} with tmpfs mounts of
	 * the kernel's default size.
	 * @param workingDirectory the working directory, which is also the script's
	 * @param loopback whether to bring {@code lo} up
	 * @return the script
	 */
	String setupScript(Path workingDirectory, boolean loopback) {
		return setupScript(workingDirectory, loopback, null);
	}

	/**
	 * Return the script that the outer namespace's root runs before the command: the
	 * mounts, the kernel's key lists masked, a root caller's sysctls read-only, the
	 * loopback, then the command's argv as {@code "$@"} behind PID 1. Every value in it
	 * is quoted.
	 * @param workingDirectory the working directory, which is also the script's
	 * @param loopback whether to bring {@code lo} up
	 * @param tmpfsSize the size of each tmpfs in bytes, or {@code null} for the kernel's
	 * default (half of the memory)
	 * @return the script
	 */
	String setupScript(Path workingDirectory, boolean loopback, @Nullable Long tmpfsSize) {
		StringBuilder script = new StringBuilder(Pid1Script.start());
		script.append(UnshareMountScript.of(this.filesystem, workingDirectory, tmpfsSize));
		script.append(KEY_LISTS);
		if (this.uid == 0) {
			// A root caller's uid 0 is the host's: global sysctls would be writable
			// through /proc.
			script.append(ROOT_SYSCTLS);
		}
		if (loopback) {
			script.append(quote(this.ip.toString())).append(" link set lo up\n");
		}
		// cd sets OLDPWD, which would reach the command's environment.
		script.append("cd ").append(quote(workingDirectory.toString())).append("\nunset OLDPWD\n");
		script.append(Pid1Script.runCommand(this.unshare, this.uid, this.gid,
				this.keepUid && !this.launcher.hasCommandUser()));
		return script.toString();
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

	@Override
	public boolean supportsPrivateLoopback() {
		return this.ip != null;
	}

	@Override
	public SandboxMechanism withEgress(Launcher.Egress egress) {
		return new UnshareMechanism(this.setpriv, this.unshare, this.ip, this.launcher.withEgress(egress),
				this.filesystem, this.uid, this.gid, this.keepUid);
	}

	@Override
	public SandboxMechanism withPaths(List<Path> readable, List<Path> writable) {
		return (readable.isEmpty() && writable.isEmpty()) ? this
				: new UnshareMechanism(this.setpriv, this.unshare, this.ip, this.launcher,
						this.filesystem.withPaths(readable, writable), this.uid, this.gid, this.keepUid);
	}

}
