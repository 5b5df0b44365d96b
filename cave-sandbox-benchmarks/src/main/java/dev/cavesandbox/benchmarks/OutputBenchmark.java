package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Draining 256 MiB that a child writes to stdout
 * ({@code dd if=/dev/zero bs=1M count=256}), behind the same mechanism, by each path:
 * <ul>
 * <li>{@code raw-discard}: {@code Process.getInputStream()} read to its end into one 64
 * KiB buffer (the executor's chunk size) and dropped. The floor.</li>
 * <li>{@code raw-memory}: {@code readAllBytes()}: all 256 MiB on the heap.</li>
 * <li>{@code executor-default-cap}: the executor with the default 1 MiB cap: keeps 1 MiB,
 * reads and discards the rest.</li>
 * <li>{@code executor-large-cap}: the executor with a cap above 256 MiB: all of it in the
 * result.</li>
 * <li>{@code executor-sink}: the executor with a cap above 256 MiB streaming to a sink
 * that discards.</li>
 * </ul>
 * Each execution also reports {@code heapPeakGrowthMiB}: the sum of the heap pools' peak
 * usage during the execution minus the heap used after a full GC before it. It is an
 * upper bound of what the execution held at once: garbage not yet collected counts too.
 * (JMH's console shows the sum over the iterations; {@link IsolationCostRun} reports the
 * largest single execution.)
 * <p>
 * On a VM, a pipe between two CPUs is several times slower than a pipe within one (each
 * 64 KiB the writer and the reader wake each other across CPUs), and the scheduler picks
 * either at random: unpinned runs are bimodal. So every fork pins itself and its children
 * with {@code taskset}: {@code same-cpu} puts the JVM and the child on CPU 0 (the copying
 * cost), {@code split-cpus} puts the JVM on CPU 0 and the child on CPU 1 (the wake-up
 * cost).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(java.util.concurrent.TimeUnit.MILLISECONDS)
public class OutputBenchmark {

	static final long SIZE = 256L * 1024 * 1024;

	private static final String TASKSET = "/usr/bin/taskset";

	private static final String[] COMMAND = { "/usr/bin/dd", "if=/dev/zero", "bs=1M", "count=256", "status=none" };

	@Param("unshare")
	public String mechanism;

	@Param({ "same-cpu", "split-cpus" })
	public String placement;

	@Param({ "raw-discard", "raw-memory", "executor-default-cap", "executor-large-cap", "executor-sink" })
	public String path;

	private List<String> commandLine;

	private Path directory;

	private IsolatedExecutor executor;

	private ExecutionRequest request;

	private final CountingSink sink = new CountingSink();

	@Setup
	public void setUp() throws IOException, InterruptedException {
		pinThisJvm("0");
		String[] command = switch (this.placement) {
			case "same-cpu" -> COMMAND;
			case "split-cpus" ->
				Stream.concat(Stream.of(TASKSET, "-c", "1"), Stream.of(COMMAND)).toArray(String[]::new);
			default -> throw new IllegalArgumentException("unknown placement " + this.placement);
		};
		BenchmarkMechanism resolved = BenchmarkMechanism.resolve(this.mechanism);
		this.directory = Files.createTempDirectory("cave-sandbox-benchmark-");
		this.commandLine = resolved.commandLine(this.directory, command);
		if (this.path.startsWith("executor")) {
			this.executor = resolved.executor(resolved.settings());
			ExecutionRequest.Builder builder = ExecutionRequest.builder(command);
			switch (this.path) {
				case "executor-default-cap" -> {
				}
				case "executor-large-cap" -> builder.maxOutputBytes(SIZE + 1);
				case "executor-sink" -> builder.maxOutputBytes(SIZE + 1).stdoutSink(this.sink);
				default -> throw new IllegalArgumentException("unknown path " + this.path);
			}
			this.request = builder.build();
		}
	}

	@Benchmark
	public long drain256MiB(HeapWatch heap) throws IOException, InterruptedException {
		long kept = switch (this.path) {
			case "raw-discard" -> raw(false);
			case "raw-memory" -> raw(true);
			default -> executor();
		};
		heap.sample();
		return kept;
	}

	/**
	 * Pin every thread of this JVM to the given CPUs; threads and processes started later
	 * inherit it from the thread that starts them.
	 */
	private static void pinThisJvm(String cpus) throws IOException, InterruptedException {
		String pid = String.valueOf(ProcessHandle.current().pid());
		BenchmarkMechanism.Raw.run(List.of(TASKSET, "-a", "-p", "-c", cpus, pid), Path.of("/"));
		String status = Files.readString(Path.of("/proc/thread-self/status"));
		expect(status.contains("Cpus_allowed_list:\t" + cpus + "\n"), "not pinned to CPU " + cpus);
	}

	private long raw(boolean keep) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(this.commandLine).directory(this.directory.toFile()).start();
		process.getOutputStream().close();
		long read = keep ? process.getInputStream().readAllBytes().length : discard(process.getInputStream());
		byte[] stderr = process.getErrorStream().readAllBytes();
		BenchmarkMechanism.Raw.exited(process, stderr);
		expect(read == SIZE, "read " + read + " bytes");
		return read;
	}

	private static long discard(InputStream in) throws IOException {
		byte[] chunk = new byte[64 * 1024];
		long read = 0;
		int n;
		while ((n = in.read(chunk)) != -1) {
			read += n;
		}
		return read;
	}

	private long executor() {
		this.sink.count = 0;
		ExecutionResult result = this.executor.execute(this.request);
		expect(result.succeeded(), result + ": " + result.stderrText());
		switch (this.path) {
			case "executor-default-cap" ->
				expect(result.stdout().length == 1024 * 1024 && result.stdoutTruncated(), result.toString());
			case "executor-large-cap" -> expect(result.stdout().length == SIZE, result.toString());
			default -> expect(this.sink.count == SIZE, "sink got " + this.sink.count + " bytes");
		}
		return (this.path.equals("executor-sink")) ? this.sink.count : result.stdout().length;
	}

	private static void expect(boolean condition, String detail) {
		if (!condition) {
			throw new IllegalStateException("unexpected output: " + detail);
		}
	}

	@TearDown
	public void tearDown() throws IOException {
		if (this.executor != null) {
			this.executor.close();
		}
		Files.deleteIfExists(this.directory);
	}

	private static final class CountingSink extends OutputStream {

		private volatile long count;

		@Override
		public void write(int b) {
			this.count++;
		}

		@Override
		public void write(byte[] b, int off, int len) {
			this.count += len;
		}

	}

	/**
	 * Heap growth of one execution, reported by JMH next to the time.
	 */
	@State(Scope.Thread)
	@AuxCounters(AuxCounters.Type.EVENTS)
	public static class HeapWatch {

		/** Peak heap growth of the last execution, in MiB. */
		public double heapPeakGrowthMiB;

		private long baseline;

		private final List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans()
			.stream()
			.filter((pool) -> pool.getType() == MemoryType.HEAP)
			.toList();

		@Setup(Level.Invocation)
		public void collect() {
			System.gc();
			this.baseline = this.pools.stream().mapToLong((pool) -> pool.getUsage().getUsed()).sum();
			this.pools.forEach(MemoryPoolMXBean::resetPeakUsage);
		}

		void sample() {
			long peak = this.pools.stream().mapToLong((pool) -> pool.getPeakUsage().getUsed()).sum();
			this.heapPeakGrowthMiB = (peak - this.baseline) / (1024.0 * 1024.0);
		}

	}

}
