package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import dev.cavesandbox.internal.process.ProcFs;

/**
 * Thrown when processes of the command's tree were still alive after its teardown (the
 * timeout's or a cancellation's SIGTERM, the kill grace period, SIGKILL, and half a
 * second more, up to five more while any of them is dying): the result would otherwise
 * say the tree was killed. A process in an uninterruptible sleep (state {@code D}, for
 * example on a hung network filesystem) dies only when it wakes (signal(7)); one marked
 * dying (exiting, or SIGKILL pending) is still freeing its memory, which takes kernel
 * time in proportion to what it mapped; any other survivor is a defect of the sandbox's
 * teardown. Its code is {@value #CODE}.
 */
public class ProcessTreeSurvivedException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_process_tree_survived";

	private final List<Long> pids;

	/**
	 * Create an exception naming the survivors.
	 * @param pids the pids of the processes still alive
	 */
	public ProcessTreeSurvivedException(List<Long> pids) {
		super(CODE,
				pids.size() + " process(es) of the command's tree outlived its teardown (SIGKILL and the kill "
						+ "grace period): " + describe(pids) + ". A process in an uninterruptible sleep (state D in "
						+ "/proc/PID/status) dies when it wakes, one marked dying is still freeing its memory (a tree "
						+ "that maps much memory in many processes takes seconds of kernel time to die: lower its "
						+ "memory or process limit); anything else is a defect of the sandbox, please report it",
				null);
		this.pids = List.copyOf(pids);
	}

	/**
	 * Describe each pid as {@code /proc/PID/status} shows it when the exception is made:
	 * {@code pid (name, state, PPid n, Uid n)}, or only the pid when it is gone.
	 */
	private static String describe(List<Long> pids) {
		return pids.stream().map(ProcessTreeSurvivedException::describe).collect(Collectors.joining(", "));
	}

	private static String describe(long pid) {
		try {
			List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"));
			return pid + " ("
					+ lines.stream()
						.filter((line) -> line.startsWith("Name:") || line.startsWith("State:")
								|| line.startsWith("PPid:") || line.startsWith("Uid:"))
						.map((line) -> line.replaceAll("\\s+", " ").trim())
						.collect(Collectors.joining(", "))
					+ (ProcessHandle.of(pid).map(ProcFs::dying).orElse(false) ? ", dying" : "") + ")";
		}
		catch (IOException | RuntimeException ex) {
			return Long.toString(pid);
		}
	}

	/**
	 * Return the pids of the processes that were still alive.
	 * @return the pids
	 */
	public List<Long> pids() {
		return this.pids;
	}

}
