package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import dev.cavesandbox.internal.launcher.Launcher;
import org.jspecify.annotations.Nullable;

import static dev.cavesandbox.internal.mechanism.ShellQuoting.quote;

/**
 * The mounts of the {@link UnshareMechanism}'s set-up script: the {@code sh} lines, run
 * as root of the new user namespace, that give the command its {@link FilesystemView}.
 * Every value in them is quoted. Each mount is one {@code mount(8)} process.
 * <p>
 * A host view: each hidden directory becomes an empty tmpfs (of the limits' tmpfs size),
 * the listed paths and the working directory are bound, secrets are masked and, for a
 * read-only root, the other mounts are remounted read-only. A
 * {@linkplain FilesystemView#isSystem() system view} builds a new root first (a tmpfs
 * over a hidden directory, {@link #newRoot}) with the system directories, links,
 * {@code /dev} and a new {@code proc} in it, mounts the rest there, then
 * {@code pivot_root . .} and {@code umount -l .} (pivot_root(2)): the host's root is
 * detached, also from the script (PID 1, whose {@code /proc/1/root} the command could
 * otherwise reach with the same uid). Every binary the script runs after
 * {@code pivot_root} ({@code mount}, {@code setsid}, {@code unshare}, {@code ip}) must
 * lie in the system directories.
 */
final class UnshareMountScript {

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

	private final FilesystemView view;

	private final Path workingDirectory;

	private final @Nullable Long tmpfsSize;

	/**
	 * Where every mount point lies before {@code pivot_root}: a system view's new root,
	 * or {@code ""} for a host view.
	 */
	private final String root;

	private final StringBuilder script = new StringBuilder();

	private UnshareMountScript(FilesystemView view, Path workingDirectory, @Nullable Long tmpfsSize) {
		this.view = view;
		this.workingDirectory = workingDirectory;
		this.tmpfsSize = tmpfsSize;
		this.root = view.isSystem() ? newRoot(view).toString() : "";
	}

	/**
	 * Return the lines that mount a view: the script's functions first, the read-only
	 * pass last.
	 * @param view the view
	 * @param workingDirectory the working directory, which is also the script's
	 * @param tmpfsSize the size of each tmpfs in bytes, or {@code null} for the kernel's
	 * default (half of the memory)
	 * @return the lines
	 * @throws IllegalArgumentException if a system view has no hidden directory for its
	 * new root
	 */
	static String of(FilesystemView view, Path workingDirectory, @Nullable Long tmpfsSize) {
		return new UnshareMountScript(view, workingDirectory, tmpfsSize).build();
	}

	private String build() {
		this.script.append(FUNCTIONS);
		if (this.view.isSystem()) {
			newRootWithSystemDirectories();
		}
		hiddenDirectories();
		listedPaths();
		workingDirectory();
		masks();
		if (this.view.isSystem()) {
			pivotRoot();
		}
		if (this.view.isSystem() || this.view.readOnlyRoot()) {
			// Every writable mount becomes read-only but those that stay writable
			// (unshare-read-only.sh says which and why).
			this.script.append(ShellScripts.fill(READ_ONLY, KEPT_PATHS, keptPatterns()));
		}
		return this.script.toString();
	}

	/**
	 * A tmpfs, the new root, with every mount point in it, each system directory bound
	 * recursively ({@code --rbind}: a user namespace may not bind a mount without its
	 * locked submounts, mount_namespaces(7)), the system links, the host's {@code /dev}
	 * (made read-only by the read-only pass) and a new {@code proc} of the PID namespace,
	 * which is ours.
	 */
	private void newRootWithSystemDirectories() {
		line("mount -n -t tmpfs -o mode=755,nosuid,nodev cave-sandbox " + quote(this.root));
		// Every mount point in one mkdir(1): one process fewer per mount. A hidden
		// directory below /dev is covered by the bind of the host's /dev, where it
		// exists already.
		this.script.append("mkdir -p");
		for (Path point : mountPoints()) {
			this.script.append(' ').append(quote(this.root + point));
		}
		this.script.append('\n');
		for (Path system : this.view.systemDirectories()) {
			line("mount -n -c --rbind " + quote(system.toString()) + " " + quote(this.root + system));
		}
		new TreeMap<>(this.view.systemLinks())
			.forEach((link, target) -> line("ln -s " + quote(target.toString()) + " " + quote(this.root + link)));
		line("mount -n -c --rbind /dev " + quote(this.root + "/dev"));
		line("mount -n -t proc -o nosuid,nodev,noexec proc " + quote(this.root + "/proc"));
	}

	/** An empty tmpfs over each hidden directory, of the limits' tmpfs size. */
	private void hiddenDirectories() {
		for (Path hidden : this.view.hiddenDirectories()) {
			line("mount -n -t tmpfs -o mode=1777,nosuid,nodev"
					+ ((this.tmpfsSize != null) ? ",size=" + this.tmpfsSize : "") + " cave-sandbox "
					+ quote(this.root + hidden));
		}
	}

	/**
	 * The listed paths, after the hidden directories, parents first
	 * ({@link FilesystemView#listedPaths()}): readable ones read-only, writable ones
	 * {@code nosuid} and {@code nodev}. {@code outer} opened each without following
	 * symbolic links; the script binds the path (mount(2) refuses to bind a descriptor
	 * opened in the host's mount namespace: EINVAL) and {@code bind} compares the mount's
	 * device and inode with the descriptor's, so a component swapped after {@code outer}
	 * opened it stops the set-up before the command runs, as bwrap's {@code --bind-fd}
	 * does.
	 */
	private void listedPaths() {
		List<FilesystemView.Listed> listedPaths = this.view.listedPaths();
		for (int i = 0; i < listedPaths.size(); i++) {
			FilesystemView.Listed listed = listedPaths.get(i);
			line("bind " + Launcher.listedDescriptor(i) + " " + quote(listed.path().toString()) + " "
					+ quote(this.root + listed.path()) + (listed.writable() ? " ,nosuid,nodev" : " ,ro"));
		}
	}

	/**
	 * The shell's working directory is the one the launcher opened without following
	 * symbolic links, also where a tmpfs now hides its path: it is bound onto its path
	 * ({@code -c}: {@code .} must not be canonicalized to the path), {@code nosuid} and
	 * {@code nodev}; the path is never bound from the host.
	 */
	private void workingDirectory() {
		String target = quote(this.root + this.workingDirectory);
		if (this.view.isSystem() || this.view.covers(this.workingDirectory)) {
			line("mkdir -p " + target);
		}
		line("mount -n -c --bind . " + target);
		line("flags " + target + "; remount " + target + " \"$f\" ,nosuid,nodev");
	}

	/**
	 * After every bind, so that no listed path (such as {@code /etc}) covers them: each
	 * masked file is the host's {@code /dev/null} (reads as empty), each masked directory
	 * an empty read-only tmpfs.
	 */
	private void masks() {
		for (Path file : this.view.maskedFiles()) {
			line("mount -n -c --bind /dev/null " + quote(this.root + file));
		}
		for (Path masked : this.view.maskedDirectories()) {
			line("mount -n -t tmpfs -o ro,mode=755,nosuid,nodev,noexec cave-sandbox " + quote(this.root + masked));
		}
	}

	/**
	 * The new root becomes the root of the mount namespace and the host's root is
	 * detached: PID 1 (this shell, whose {@code /proc/1/root} the command could reach)
	 * keeps none of it (pivot_root(2): "new_root and put_old may be the same directory").
	 */
	private void pivotRoot() {
		this.script.append("cd ").append(quote(this.root)).append("\npivot_root . .\numount -n -l .\n");
	}

	private void line(String line) {
		this.script.append(line).append('\n');
	}

	/**
	 * Return where a system view's new root is mounted before {@code pivot_root}: the
	 * first hidden directory (its host content is never shown) that holds no directory
	 * the script binds from the host and lies in none of them (a recursive bind would
	 * copy the new root into itself).
	 * @return the directory
	 * @throws IllegalArgumentException if no hidden directory qualifies
	 */
	private static Path newRoot(FilesystemView view) {
		List<Path> sources = new ArrayList<>(view.systemDirectories());
		sources.addAll(List.of(Path.of("/dev"), Path.of("/proc")));
		view.listedPaths().forEach((listed) -> sources.add(listed.path()));
		for (Path hidden : view.hiddenDirectories()) {
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
	private List<Path> mountPoints() {
		List<Path> points = new ArrayList<>(this.view.systemDirectories());
		points.add(Path.of("/dev"));
		points.add(Path.of("/proc"));
		points.addAll(this.view.hiddenDirectories());
		return points;
	}

	/**
	 * The case patterns of the mounts the read-only pass keeps writable: the writable
	 * paths, the masked files (the host's {@code /dev/null}: what is written there is
	 * gone either way, and one remount fewer each), the hidden directories and the
	 * working directory with what lies below them.
	 */
	private String keptPatterns() {
		List<String> patterns = new ArrayList<>();
		for (Path writable : this.view.writablePaths()) {
			patterns.add(quote(writable.toString()));
		}
		for (Path masked : this.view.maskedFiles()) {
			patterns.add(quote(masked.toString()));
		}
		List<Path> kept = new ArrayList<>(this.view.hiddenDirectories());
		kept.add(this.workingDirectory);
		for (Path path : kept) {
			String quoted = quote(path.toString());
			patterns.add(quoted);
			patterns.add(quoted + "/*");
		}
		return String.join("|", patterns);
	}

}
