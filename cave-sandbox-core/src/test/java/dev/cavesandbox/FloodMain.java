package dev.cavesandbox;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.process.ProcessRunnerTests;

/**
 * Run in a child JVM with a small heap by {@link ProcessRunnerTests}, with the mechanism
 * as its argument: a sandboxed command writes 1 GiB to stdout and to stderr; prints the
 * result and the peak heap use.
 */
public final class FloodMain {

	private FloodMain() {
	}

	public static void main(String[] args) {
		SandboxSettings settings = SandboxSettings.builder().mechanism(MechanismChoice.valueOf(args[0])).build();
		try (IsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings,
				new NetworkIsolationProbe(settings).probe())) {
			System.gc();
			long before = heapUsed();
			ManagementFactory.getMemoryPoolMXBeans().forEach(MemoryPoolMXBean::resetPeakUsage);
			ExecutionResult result = executor.execute("sh", "-c",
					"head -c 1073741824 /dev/zero & head -c 1073741824 /dev/zero >&2; wait");
			long peak = ManagementFactory.getMemoryPoolMXBeans()
				.stream()
				.filter((pool) -> pool.getType() == MemoryType.HEAP)
				.mapToLong((pool) -> pool.getPeakUsage().getUsed())
				.sum();
			System.out.println("exit=" + result.exitCode() + " stdout=" + result.stdout().length + " stderr="
					+ result.stderr().length + " truncated=" + result.stdoutTruncated() + "," + result.stderrTruncated()
					+ " wallMillis=" + result.wallTime().toMillis() + " heapBefore=" + before + " heapPeak=" + peak);
		}
	}

	private static long heapUsed() {
		return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
	}

}
