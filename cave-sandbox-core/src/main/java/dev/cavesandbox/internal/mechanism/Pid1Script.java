package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;

/**
 * The command line of the mechanisms built on util-linux {@code unshare}, shared by the
 * {@link UnshareMechanism} and the {@link NamespacesMechanism}: {@code unshare} creates
 * the namespaces, and the launcher's {@value LauncherContract#ROOT} is PID 1 of the new
 * PID namespace.
 */
final class Pid1Script {

	/**
	 * The uid and gid of PID 1 in its own user namespace ({@link #root}): any id but 0.
	 */
	static final long PID1_UID = 65534;

	private Pid1Script() {
	}

	/**
	 * Return the whole command line of a mechanism built on util-linux {@code unshare}:
	 * {@link Launcher#outer(Path)}, {@code setpriv --pdeathsig KILL}, then
	 * {@code unshare --user --map-root-user} with the mechanism's other options, PID 1's
	 * argv ({@link #root}), and the launcher's inside argv as its last arguments.
	 * @param launcher the native launcher
	 * @param workingDirectory the working directory
	 * @param setpriv the {@code setpriv} binary
	 * @param unshare the {@code unshare} binary
	 * @param options the options of {@code unshare} after {@code --map-root-user}
	 * @param pid1 PID 1's argv
	 * @param inside the launcher's argv inside the sandbox, with the command
	 * @param listed the paths {@code outer} opens for PID 1's binds, in their order
	 * @return the command line
	 */
	static List<String> commandLine(Launcher launcher, Path workingDirectory, Path setpriv, Path unshare,
			List<String> options, List<String> pid1, List<String> inside, List<Path> listed) {
		List<String> command = new ArrayList<>(launcher.outer(workingDirectory, true, listed));
		command.addAll(List.of(setpriv.toString(), "--pdeathsig", "KILL", "--", unshare.toString()));
		if (!launcher.hasCommandUser()) {
			// With a command user, outer has joined the user namespace already.
			command.addAll(List.of("--user", "--map-root-user"));
		}
		command.addAll(options);
		command.add("--");
		command.addAll(pid1);
		command.addAll(inside);
		return command;
	}

	/**
	 * Return PID 1's argv: the launcher's {@value LauncherContract#ROOT} with the mounts'
	 * options, if any, then what both mechanisms share. {@code --loopback}: {@code lo}
	 * up. With {@code keepUid}, {@code --pid1-user} {@value #PID1_UID}: PID 1 enters a
	 * user namespace of its own that maps no root, as uid {@value #PID1_UID} (the
	 * namespace's uid 0 is the caller's), and executes itself again there: a process that
	 * is not dumpable has its {@code /proc} files owned by root of its memory's user
	 * namespace, or by the host's root where that namespace maps none (proc(5),
	 * task_dump_owner). In the namespace of {@code --map-root-user} they would belong to
	 * the caller's uid, the command's, which could then write PID 1's {@code autogroup}
	 * (nice 19 for the session of the sandbox's teardown: sched(7)), {@code comm} or
	 * {@code timerslack_ns}. And {@code --map UID:GID}: the command's launcher enters a
	 * user namespace nested in PID 1's in which it has the caller's uid and gid and no
	 * capability over the namespaces above. PID 1 runs the command's launcher as PID 2 in
	 * a session of its own (a PID 1 command could clear the parent-death signal that ties
	 * the namespace to the JVM, prctl(2); without a new session it could push input into
	 * the JVM's terminal, TIOCSTI), keeps none of the sandbox's descriptors, is not
	 * dumpable, passes SIGTERM on, passes on the command's exit status, and its exit
	 * takes the namespace down.
	 * @param mounts the mounts' options ({@link UnshareMountPlan}), or none
	 * @param loopback whether to bring {@code lo} up
	 * @param keepUid whether PID 1 and the command get user namespaces of their own (not
	 * with a command user, whose user namespace {@code outer} made)
	 * @param uid the caller's uid
	 * @param gid the caller's gid
	 * @return {@code [/proc/self/fd/4, root, OPTIONS..., --]}
	 */
	static List<String> root(List<String> mounts, boolean loopback, boolean keepUid, long uid, long gid) {
		List<String> command = new ArrayList<>(List.of(LauncherContract.INSIDE, LauncherContract.ROOT));
		command.addAll(mounts);
		if (loopback) {
			command.add("--loopback");
		}
		if (keepUid) {
			command.addAll(List.of("--pid1-user", String.valueOf(PID1_UID), "--map", uid + ":" + gid));
		}
		command.add("--");
		return List.copyOf(command);
	}

}
