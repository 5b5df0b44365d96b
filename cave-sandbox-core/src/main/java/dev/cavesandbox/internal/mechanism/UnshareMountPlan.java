package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import org.jspecify.annotations.Nullable;

/**
 * The mounts of the {@link UnshareMechanism} as the options of the launcher's
 * {@value LauncherContract#ROOT} mode, which {@code unshare --fork} runs as PID 1 of the
 * new namespaces, as root of the new user namespace, and which makes them itself with
 * mount(2), one process for all (the launcher's {@code launcher.h} says in which order).
 * A pure value: nothing here touches the host.
 * <p>
 * A host view: each hidden directory becomes an empty tmpfs (of the limits' tmpfs size,
 * {@code --hide}, {@code --tmpfs-size}), the listed paths ({@code --bind-listed
 * N:PATH:ro|rw}, checked against the descriptor {@code outer} opened) and the working
 * directory ({@code --workdir}, bound from the launcher's working directory, never from
 * its path) are bound, secrets are masked ({@code --mask-file}, {@code --mask-dir}) and,
 * for a read-only root, every other mount becomes read-only ({@code --read-only}). A
 * {@linkplain FilesystemView#isSystem() system view} builds a new root first
 * ({@code --new-root}, a tmpfs over a hidden directory, {@link #newRoot}) with the system
 * directories ({@code --system}), links ({@code --link LINK=TARGET}), {@code /dev} and a
 * new {@code proc} in it, mounts the rest there, then pivots into it and detaches the
 * host's root. After that: the kernel's key lists masked ({@code --key-list}), a root
 * caller's sysctls read-only ({@code --root-sysctls}), {@code lo} up for a private
 * loopback ({@code --loopback}), and where the command gets the caller's uid back
 * ({@code keepUid}), PID 1 in a user namespace of its own as uid 65534
 * ({@code --pid1-user}) and the command in one nested in it as the caller's uid and gid
 * ({@code --map UID:GID}).
 *
 * @param view what the command sees of the host's filesystem
 * @param workingDirectory the working directory, bound onto its own path
 * @param tmpfsSize the size of each hidden directory's tmpfs in bytes, or {@code null}
 * for the kernel's default (half of the memory)
 * @param rootCaller whether the caller is root of the host (then {@code /proc/sys} and
 * {@code /proc/sysrq-trigger} are read-only)
 * @param loopback whether {@code lo} is brought up
 * @param keepUid whether PID 1 and the command get user namespaces of their own, in which
 * the command has the caller's uid and gid
 * @param uid the caller's uid
 * @param gid the caller's gid
 */
public record UnshareMountPlan(FilesystemView view, Path workingDirectory, @Nullable Long tmpfsSize, boolean rootCaller,
		boolean loopback, boolean keepUid, long uid, long gid) {

	public UnshareMountPlan {
		Objects.requireNonNull(view, "view must not be null");
		Objects.requireNonNull(workingDirectory, "workingDirectory must not be null");
		if (view.isSystem()) {
			newRoot(view);
		}
	}

	/**
	 * Return the launcher's argv of PID 1: {@code [/proc/self/fd/4, root, OPTIONS...,
	 * --]}; the launcher's {@value LauncherContract#EXEC} argv follows.
	 * @return the argv
	 */
	public List<String> commandLine() {
		List<String> command = new ArrayList<>();
		if (this.view.isSystem()) {
			add(command, "--new-root", newRoot(this.view));
			this.view.systemDirectories().forEach((system) -> add(command, "--system", system));
			new TreeMap<>(this.view.systemLinks())
				.forEach((link, target) -> command.addAll(List.of("--link", link + "=" + target)));
		}
		this.view.hiddenDirectories().forEach((hidden) -> add(command, "--hide", hidden));
		if (this.tmpfsSize != null) {
			command.addAll(List.of("--tmpfs-size", this.tmpfsSize.toString()));
		}
		List<FilesystemView.Listed> listedPaths = this.view.listedPaths();
		for (int i = 0; i < listedPaths.size(); i++) {
			FilesystemView.Listed listed = listedPaths.get(i);
			command.addAll(List.of("--bind-listed",
					Launcher.listedDescriptor(i) + ":" + listed.path() + (listed.writable() ? ":rw" : ":ro")));
		}
		add(command, "--workdir", this.workingDirectory);
		this.view.maskedFiles().forEach((file) -> add(command, "--mask-file", file));
		this.view.maskedDirectories().forEach((directory) -> add(command, "--mask-dir", directory));
		Launcher.KEY_LISTS.forEach((keys) -> command.addAll(List.of("--key-list", keys)));
		if (this.view.isSystem() || this.view.readOnlyRoot()) {
			command.add("--read-only");
		}
		if (this.rootCaller) {
			command.add("--root-sysctls");
		}
		return Pid1Script.root(command, this.loopback, this.keepUid, this.uid, this.gid);
	}

	private static void add(List<String> command, String option, Path path) {
		command.add(option);
		command.add(path.toString());
	}

	/**
	 * Return where a system view's new root is mounted before the pivot: the first hidden
	 * directory (its host content is never shown) that holds no directory the launcher
	 * binds from the host and lies in none of them (a recursive bind would copy the new
	 * root into itself).
	 * @param view a system view
	 * @return the directory
	 * @throws IllegalArgumentException if no hidden directory qualifies
	 */
	static Path newRoot(FilesystemView view) {
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

}
