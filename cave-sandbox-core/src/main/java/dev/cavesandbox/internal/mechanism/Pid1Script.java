package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;

import static dev.cavesandbox.internal.mechanism.ShellQuoting.quote;

/**
 * The command line of the mechanisms built on util-linux {@code unshare}, shared by the
 * {@link UnshareMechanism} (the launcher's {@value LauncherContract#ROOT} as PID 1) and
 * the {@link NamespacesMechanism}, and the parts of the latter's {@code sh} script that
 * is PID 1 of the PID namespace which {@code unshare} creates.
 */
final class Pid1Script {

	/**
	 * The uid and gid of PID 1 in its own user namespace ({@link #runCommand}): any id
	 * but 0.
	 */
	static final long PID1_UID = 65534;

	private static final String START = ShellScripts.load("pid1-start.sh");

	private Pid1Script() {
	}

	/**
	 * Return the whole command line of a mechanism built on util-linux {@code unshare}:
	 * {@link Launcher#outer(Path)}, {@code setpriv --pdeathsig KILL}, then
	 * {@code unshare --user --map-root-user} with the mechanism's other options, PID 1's
	 * argv, and the launcher's inside argv as its last arguments.
	 * @param launcher the native launcher
	 * @param workingDirectory the working directory
	 * @param setpriv the {@code setpriv} binary
	 * @param unshare the {@code unshare} binary
	 * @param options the options of {@code unshare} after {@code --map-root-user}
	 * @param pid1 PID 1's argv: a script's {@code sh -c SCRIPT NAME}, or the launcher's
	 * {@value LauncherContract#ROOT} with its options
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
	 * Return the first lines ({@code pid1-start.sh}): stop on any error, and run nothing
	 * unless this is the new user namespace of one mapped id (a wrapper that ran the
	 * script in the host's namespaces must not change anything there).
	 * @return the lines
	 */
	static String start() {
		return START;
	}

	/**
	 * Return the last line, which replaces the shell with the launcher's
	 * {@value LauncherContract#PID1} mode as PID 1: it runs the command ({@code "$@"},
	 * the launcher's inside argv) as PID 2 in a session of its own, not as PID 1 in place
	 * of the shell (a PID 1 command could clear the parent-death signal that ties the
	 * namespace to the JVM, prctl(2); without a new session it could push input into the
	 * JVM's terminal, TIOCSTI), keeps none of the sandbox's descriptors (the egress
	 * directory, {@link LauncherContract#EGRESS_FD}, stays with the command's launcher
	 * alone) and is not dumpable, so that the command never reads them through
	 * {@code /proc}. It ignores SIGTERM (pid_namespaces(7)), passes on the command's exit
	 * status, and its exit takes the namespace down.
	 * <p>
	 * Where the command gets the caller's uid back ({@code keepUid}), PID 1 first enters
	 * a user namespace of its own that maps no root, as uid {@value #PID1_UID} (the
	 * namespace's uid 0 is the caller's): a process that is not dumpable has its
	 * {@code /proc} files owned by root of its memory's user namespace, or by the host's
	 * root where that namespace maps none (proc(5), task_dump_owner). In the namespace of
	 * {@code --map-root-user} they would belong to the caller's uid, the command's, which
	 * could then write PID 1's {@code autogroup} (nice 19 for the session of the
	 * sandbox's teardown: sched(7)), {@code comm} or {@code timerslack_ns}. The command's
	 * namespace is then nested in PID 1's.
	 * @param unshare the {@code unshare} binary
	 * @param uid the caller's uid
	 * @param gid the caller's gid
	 * @param keepUid whether a nested user namespace gives the command the caller's uid
	 * back ({@code --map-user}, util-linux 2.38+)
	 * @return the line
	 */
	static String runCommand(Path unshare, long uid, long gid, boolean keepUid) {
		StringBuilder script = new StringBuilder("exec ");
		if (keepUid) {
			script.append(mapUser(unshare, PID1_UID, PID1_UID));
		}
		script.append(LauncherContract.INSIDE).append(' ').append(LauncherContract.PID1).append(" -- ");
		if (keepUid) {
			script.append(mapUser(unshare, uid, gid));
		}
		return script.append("\"$@\"\n").toString();
	}

	private static String mapUser(Path unshare, long uid, long gid) {
		return quote(unshare.toString()) + " --user --map-user=" + uid + " --map-group=" + gid + " -- ";
	}

}
