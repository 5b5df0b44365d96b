package dev.cavesandbox.internal.mechanism;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import static dev.cavesandbox.internal.mechanism.ShellQuoting.quote;

import dev.cavesandbox.ResourceLimits;

/**
 * Builds the command line of the util-linux mechanism: {@code unshare(1)} with new user,
 * network, mount, IPC and PID namespaces behind {@code setpriv(1) --pdeathsig KILL}, a
 * short {@code sh} script that sets up the mounts, and a nested user namespace that gives
 * the command the caller's uid back. A pure function of its inputs; nothing here touches
 * the host.
 * <ul>
 * <li>Outer
 * {@code unshare --user --map-root-user --net --mount --ipc --pid --fork --kill-child
 * --mount-proc}: the caller is root of a new user namespace that owns the new network,
 * mount, IPC and PID namespaces, so it may mount there (user_namespaces(7)). The only
 * interface is {@code lo}, down unless a private loopback is requested (then
 * {@code ip link set lo up}). The script is PID 1 of the new PID namespace, the command
 * runs in a session of its own below it; when it exits, or {@code unshare} dies, the
 * kernel kills every process left in it (pid_namespaces(7)).</li>
 * <li>The script replaces each hidden directory by an empty tmpfs (of the limits' tmpfs
 * size), binds the working directory back, remounts the host's other mounts read-only
 * (except {@code /proc} and {@code /dev}) and, when the caller is root, makes
 * {@code /proc/sys} and {@code /proc/sysrq-trigger} read-only.</li>
 * <li>A {@linkplain FilesystemView#isSystem() system view}: the script mounts a tmpfs,
 * the new root, over the first hidden directory that holds no directory it binds from the
 * host and lies in none; binds each system directory into it recursively
 * ({@code --rbind}: a user namespace may not bind a mount without its locked submounts,
 * mount_namespaces(7)), recreates the system links, binds the host's {@code /dev} and
 * mounts a new {@code proc} (the PID namespace is ours), masks each secret file with
 * {@code /dev/null} (reads as empty) and each secret directory with an empty read-only
 * tmpfs, mounts the hidden directories and binds the listed paths and the working
 * directory in it; then {@code pivot_root . .} and {@code umount -l .} (pivot_root(2)):
 * the host's root is detached, also from this shell (PID 1, whose {@code /proc/1/root}
 * the command could otherwise reach with the same uid). The read-only pass then covers
 * the new root, the system directories and their submounts and {@code /dev}. Every binary
 * the script runs after {@code pivot_root} ({@code mount}, {@code setsid},
 * {@code unshare}, {@code ip}) must lie in the system directories.</li>
 * <li>In either view, the listed paths are bound after the hidden directories, parents
 * first ({@link FilesystemView#listedPaths()}), readable ones read-only, writable ones
 * {@code nosuid} and {@code nodev} and left out of the read-only pass. {@code outer}
 * opened each without following symbolic links
 * ({@link Launcher#outer(Path, boolean, List)}), so a component swapped for a link after
 * the JVM resolved the path makes it refuse. The script binds the path (mount(2) refuses
 * to bind a descriptor opened in the host's mount namespace: EINVAL), creates a missing
 * mount point by the descriptor's file type, and compares the mount's device and inode
 * with the descriptor's ({@code /proc/self/fd/N}): a component swapped after
 * {@code outer} opened it stops the set-up before the command runs, as bwrap's
 * {@code --bind-fd} does.</li>
 * <li>Then {@code unshare --user --map-user=UID --map-group=GID} (util-linux 2.38+): a
 * nested user namespace in which the command has the caller's uid and no capability over
 * the namespaces above, so it cannot unmount the tmpfs to reach the host sockets beneath
 * (an unprivileged caller has no capability after execve(2); a root caller's, bounding
 * set included, are dropped by the launcher). With older util-linux, {@code keepUid} is
 * false: the command stays uid 0 of the outer namespace, without capabilities.</li>
 * <li>{@code setpriv --pdeathsig KILL}: {@code unshare} gets SIGKILL when the JVM thread
 * that spawned it ends (prctl(2), PR_SET_PDEATHSIG), so a killed JVM leaves no sandbox
 * behind.</li>
 * <li>The whole command line runs behind {@link Launcher#outer(Path)}: the script binds
 * the launcher's working directory ({@code .}, which the launcher entered through a
 * descriptor opened without following symbolic links) onto the directory's path,
 * {@code nosuid} and {@code nodev}, and never binds that path from the host. The command
 * runs behind the launcher's {@code exec}, which also drops a root caller's
 * capabilities.</li>
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
	 * The script's functions ({@code unshare-functions.sh}): {@code flags MOUNT_POINT}
	 * sets {@code f} to the per-mount options of the topmost mount there;
	 * {@code remount MOUNT_POINT FLAGS OPTIONS} remounts it with the options, repeating
	 * its locked flags; {@code bind FD SOURCE TARGET OPTIONS} binds a listed path and
	 * refuses the mount unless it is the file of descriptor FD.
	 */
	private static final String FUNCTIONS = ShellScripts.load("unshare-functions.sh");

	/**
	 * The read-only pass ({@code unshare-read-only.sh}), with {@value #KEPT_PATHS} for
	 * the patterns of the mounts that stay writable.
	 */
	private static final String READ_ONLY = ShellScripts.load("unshare-read-only.sh");

	private static final String KEPT_PATHS = "@KEPT_PATHS@";

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
	 * Return the script that the outer namespace's root runs before the command: every
	 * value in it is quoted, and the command's argv follows as {@code "$@"}.
	 * @param workingDirectory the working directory, which is also the script's
	 * @param loopback whether to bring {@code lo} up
	 * @param tmpfsSize the size of each tmpfs in bytes, or {@code null} for the kernel's
	 * default (half of the memory)
	 * @return the script
	 */
	String setupScript(Path workingDirectory, boolean loopback, @Nullable Long tmpfsSize) {
		FilesystemView view = this.filesystem;
		String directory = quote(workingDirectory.toString());
		StringBuilder script = new StringBuilder(Pid1Script.start()).append(FUNCTIONS);
		// Before pivot_root, every mount point of a system view lies in the new root.
		String root = view.isSystem() ? newRoot().toString() : "";
		if (view.isSystem()) {
			script.append("mount -n -t tmpfs -o mode=755,nosuid,nodev cave-sandbox ").append(quote(root)).append('\n');
			// Every mount point in one mkdir(1): one process fewer per mount. A hidden
			// directory below /dev is covered by the bind of the host's /dev, where it
			// exists already.
			script.append("mkdir -p");
			for (Path point : mountPoints(view)) {
				script.append(' ').append(quote(root + point));
			}
			script.append('\n');
			for (Path system : view.systemDirectories()) {
				script.append("mount -n -c --rbind ").append(quote(system.toString())).append(' ');
				script.append(quote(root + system)).append('\n');
			}
			new TreeMap<>(view.systemLinks()).forEach((link, target) -> script.append("ln -s ")
				.append(quote(target.toString()))
				.append(' ')
				.append(quote(root + link))
				.append('\n'));
			// The host's /dev, made read-only below as in a host view; a new proc of the
			// PID namespace, which is ours.
			script.append("mount -n -c --rbind /dev ").append(quote(root + "/dev")).append('\n');
			script.append("mount -n -t proc -o nosuid,nodev,noexec proc ").append(quote(root + "/proc")).append('\n');
		}
		for (Path hidden : view.hiddenDirectories()) {
			script.append("mount -n -t tmpfs -o mode=1777,nosuid,nodev")
				.append((tmpfsSize != null) ? ",size=" + tmpfsSize : "")
				.append(" cave-sandbox ")
				.append(quote(root + hidden))
				.append('\n');
		}
		List<FilesystemView.Listed> listedPaths = view.listedPaths();
		for (int i = 0; i < listedPaths.size(); i++) {
			FilesystemView.Listed listed = listedPaths.get(i);
			script.append("bind ")
				.append(Launcher.listedDescriptor(i))
				.append(' ')
				.append(quote(listed.path().toString()))
				.append(' ')
				.append(quote(root + listed.path()))
				.append(listed.writable() ? " ,nosuid,nodev\n" : " ,ro\n");
		}
		// The shell's working directory is the one the launcher opened without following
		// symbolic links, also where a tmpfs now hides its path: bind it onto its path
		// (-c: "." must not be canonicalized to the path), nosuid and nodev.
		String target = quote(root + workingDirectory);
		if (view.isSystem() || view.covers(workingDirectory)) {
			script.append("mkdir -p ").append(target).append('\n');
		}
		script.append("mount -n -c --bind . ").append(target).append('\n');
		script.append("flags ").append(target).append("; remount ").append(target).append(" \"$f\" ,nosuid,nodev\n");
		// After every bind, so that no listed path (such as /etc) covers them.
		for (Path file : view.maskedFiles()) {
			script.append("mount -n -c --bind /dev/null ").append(quote(root + file)).append('\n');
		}
		for (Path masked : view.maskedDirectories()) {
			script.append("mount -n -t tmpfs -o ro,mode=755,nosuid,nodev,noexec cave-sandbox ")
				.append(quote(root + masked))
				.append('\n');
		}
		if (view.isSystem()) {
			// The new root becomes the root of the mount namespace, the host's root is
			// detached: PID 1 (this shell, whose /proc/1/root the command could reach)
			// keeps none of it (pivot_root(2): "new_root and put_old may be the same
			// directory").
			script.append("cd ").append(quote(root)).append("\npivot_root . .\numount -n -l .\n");
		}
		if (view.isSystem() || view.readOnlyRoot()) {
			// Every writable mount becomes read-only but those that stay writable
			// (unshare-read-only.sh says which and why).
			script.append(ShellScripts.fill(READ_ONLY, KEPT_PATHS, skipPatterns(workingDirectory)));
		}
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
		script.append("cd ").append(directory).append("\nunset OLDPWD\n");
		script.append(Pid1Script.runCommand(this.unshare, this.uid, this.gid,
				this.keepUid && !this.launcher.hasCommandUser()));
		return script.toString();
	}

	/**
	 * Return where a system view's new root is mounted before {@code pivot_root}: the
	 * first hidden directory (its host content is never shown) that holds no directory
	 * the script binds from the host and lies in none of them (a recursive bind would
	 * copy the new root into itself).
	 * @return the directory
	 * @throws IllegalArgumentException if no hidden directory qualifies
	 */
	private Path newRoot() {
		List<Path> sources = new ArrayList<>(this.filesystem.systemDirectories());
		sources.addAll(List.of(Path.of("/dev"), Path.of("/proc")));
		this.filesystem.listedPaths().forEach((listed) -> sources.add(listed.path()));
		for (Path hidden : this.filesystem.hiddenDirectories()) {
			if (sources.stream().noneMatch((source) -> source.startsWith(hidden) || hidden.startsWith(source))) {
				return hidden;
			}
		}
		throw new IllegalArgumentException("a system view needs a hidden directory (such as /tmp) that holds no "
				+ "system directory or listed path and lies in none, for its new root");
	}

	/**
	 * The directories a system view mounts on, made in its new root before the first
	 * mount: the system directories, {@code /dev}, {@code /proc} and the hidden
	 * directories.
	 */
	private static List<Path> mountPoints(FilesystemView view) {
		List<Path> points = new ArrayList<>(view.systemDirectories());
		points.add(Path.of("/dev"));
		points.add(Path.of("/proc"));
		points.addAll(view.hiddenDirectories());
		return points;
	}

	private String skipPatterns(Path workingDirectory) {
		List<String> patterns = new ArrayList<>();
		for (Path writable : this.filesystem.writablePaths()) {
			patterns.add(quote(writable.toString()));
		}
		// A masked file is the host's /dev/null: what is written there is gone either
		// way, and one remount fewer each.
		for (Path masked : this.filesystem.maskedFiles()) {
			patterns.add(quote(masked.toString()));
		}
		List<Path> kept = new ArrayList<>(this.filesystem.hiddenDirectories());
		kept.add(workingDirectory);
		for (Path path : kept) {
			String quoted = quote(path.toString());
			patterns.add(quoted);
			patterns.add(quoted + "/*");
		}
		return String.join("|", patterns);
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
