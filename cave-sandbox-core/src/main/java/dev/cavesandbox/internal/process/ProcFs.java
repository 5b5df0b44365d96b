package dev.cavesandbox.internal.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What {@code /proc} (proc(5)) tells about the processes of a tree: a sandbox's own
 * processes, whether a process still runs (not a zombie), whether it is dying. Each
 * answer falls back on {@link ProcessHandle} where the files cannot be read (not Linux).
 */
public final class ProcFs {

	/** PF_EXITING in the flags of /proc/PID/stat (include/linux/sched.h). */
	private static final long PF_EXITING = 0x4;

	/** SIGKILL (9) in a pending-signal mask of /proc/PID/status: bit 8. */
	private static final long SIGKILL_BIT = 1L << 8;

	private ProcFs() {
	}

	/**
	 * The sandbox's own processes below its wrapper's launcher: that launcher's children
	 * and theirs (bwrap and its PID 1, unshare and its PID 1, {@code contain} and the
	 * command), each read from {@code /proc/PID/task/PID/children} (proc(5)), a file per
	 * process rather than a scan of every process of the host. Their end is the end of
	 * the tree: PID 1's exit waits for every other process of its namespace
	 * (pid_namespaces(7)), {@code contain} exits once it has reaped its last child.
	 */
	static List<ProcessHandle> sandboxProcesses(Process process) {
		List<ProcessHandle> sandbox = new ArrayList<>();
		for (long child : children(process.pid())) {
			ProcessHandle.of(child).ifPresent(sandbox::add);
			for (long grandchild : children(child)) {
				ProcessHandle.of(grandchild).ifPresent(sandbox::add);
			}
		}
		return sandbox;
	}

	/**
	 * The children of a single-threaded process, from
	 * {@code /proc/PID/task/PID/children}; where that file is missing (a kernel without
	 * {@code CONFIG_PROC_CHILDREN}), a scan.
	 */
	private static List<Long> children(long pid) {
		Path file = Path.of("/proc", Long.toString(pid), "task", Long.toString(pid), "children");
		try {
			String text = Files.readString(file).trim();
			return text.isEmpty() ? List.of() : Arrays.stream(text.split("\\s+")).map(Long::valueOf).toList();
		}
		catch (IOException | RuntimeException ex) {
			return ProcessHandle.of(pid)
				.map((handle) -> handle.children().map(ProcessHandle::pid).toList())
				.orElse(List.of());
		}
	}

	/**
	 * Whether a process is dying: exiting (PF_EXITING in the flags of
	 * {@code /proc/PID/stat}, proc(5) field 9, set once it has begun do_exit) or with a
	 * SIGKILL pending ({@code SigPnd} or {@code ShdPnd} of {@code /proc/PID/status}).
	 * False where the files cannot be read.
	 * @param process the process
	 * @return whether it is dying
	 */
	public static boolean dying(ProcessHandle process) {
		try {
			if ((Long.parseLong(statFields(process.pid())[6]) & PF_EXITING) != 0) {
				return true;
			}
			return Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))
				.stream()
				.filter((line) -> line.startsWith("SigPnd:") || line.startsWith("ShdPnd:"))
				.anyMatch((line) -> (Long.parseUnsignedLong(line.substring(7).trim(), 16) & SIGKILL_BIT) != 0);
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

	/**
	 * Whether a process still runs: alive and not a zombie.
	 * {@link ProcessHandle#isAlive()} counts a zombie, which holds nothing but its pid
	 * until its parent reaps it; an orphan's zombie waits for the host's init, which may
	 * take its time (a container's or a VM's init reaps on its own schedule). Where
	 * {@code /proc/PID/stat} cannot be read (not Linux), the handle's answer.
	 */
	static boolean running(ProcessHandle process) {
		if (!process.isAlive()) {
			return false;
		}
		try {
			return !statFields(process.pid())[0].equals("Z");
		}
		catch (IOException | RuntimeException ex) {
			return process.isAlive();
		}
	}

	/**
	 * The fields of {@code /proc/PID/stat} after the command name, which may hold spaces
	 * and parentheses (proc(5)): the state first, the flags seventh.
	 */
	private static String[] statFields(long pid) throws IOException {
		String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
		return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
	}

}
