package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Throughput at 8 threads, raw and through the executor, in alternating phases within one
 * fork: 8 threads spawn {@code /bin/true} as fast as they can for one phase with the raw
 * command line, then one with the raw command line without the native launcher
 * ({@link BenchmarkMechanism#commandLineWithoutLauncher(Path, String...)}; skipped for a
 * mechanism without one, {@link BenchmarkMechanism#hasLineWithoutLauncher()}, whose
 * {@code rawNoLauncherPerSecond} is then NaN), one phase through the executor, one
 * through the executor with a shared working directory, and one through an executor whose
 * work directory is the tmpfs {@code /dev/shm}, in rotating order, several times over.
 * The median rate of each (spawns/s) goes to JMH as an auxiliary counter. Like
 * {@link PairedSpawnBenchmark}, it keeps a change of load on a shared machine from
 * weighing on one side only.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PairedThroughputBenchmark {

	private static final int THREADS = 8;

	@Param({ "none", "unshare", "bwrap" })
	public String mechanism;

	@Param("5")
	public int cycles;

	@Param("500")
	public int phaseMillis;

	private List<String> commandLine;

	/** {@code null} where the mechanism has none. */
	private List<String> commandLineWithoutLauncher;

	private IsolatedExecutor executor;

	private IsolatedExecutor tmpfsExecutor;

	private final ExecutionRequest request = ExecutionRequest.of("/bin/true");

	private ExecutionRequest sharedDirectoryRequest;

	private Path sharedDirectory;

	private ExecutorService threads;

	@Setup
	public void setUp() throws IOException, InterruptedException {
		BenchmarkMechanism resolved = BenchmarkMechanism.resolve(this.mechanism);
		this.executor = resolved.executor(resolved.settings());
		this.tmpfsExecutor = resolved.executor(resolved.settings(Path.of("/dev/shm")));
		this.sharedDirectory = Files.createTempDirectory("cave-sandbox-benchmark-");
		this.commandLine = resolved.commandLine(this.sharedDirectory, "/bin/true");
		if (resolved.hasLineWithoutLauncher()) {
			this.commandLineWithoutLauncher = resolved.commandLineWithoutLauncher(this.sharedDirectory, "/bin/true");
			resolved.verifyWithoutLauncher(this.sharedDirectory);
		}
		this.sharedDirectoryRequest = ExecutionRequest.builder("/bin/true")
			.workingDirectory(this.sharedDirectory)
			.build();
		this.threads = Executors.newFixedThreadPool(THREADS);
	}

	@Benchmark
	public double phases(Rates rates) throws Exception {
		List<Callable<Object>> variants = new ArrayList<>(
				List.of(() -> BenchmarkMechanism.Raw.run(this.commandLine, this.sharedDirectory),
						() -> check(this.executor.execute(this.request)),
						() -> check(this.executor.execute(this.sharedDirectoryRequest)),
						() -> check(this.tmpfsExecutor.execute(this.request))));
		if (this.commandLineWithoutLauncher != null) {
			variants.add(() -> BenchmarkMechanism.Raw.run(this.commandLineWithoutLauncher, this.sharedDirectory));
		}
		double[][] perSecond = new double[variants.size()][this.cycles];
		for (int cycle = 0; cycle < this.cycles; cycle++) {
			for (int step = 0; step < variants.size(); step++) {
				int variant = (cycle + step) % variants.size();
				perSecond[variant][cycle] = phase(variants.get(variant));
			}
		}
		rates.rawPerSecond = median(perSecond[0]);
		rates.executorPerSecond = median(perSecond[1]);
		rates.executorSharedDirPerSecond = median(perSecond[2]);
		rates.executorTmpfsWorkdirPerSecond = median(perSecond[3]);
		rates.rawNoLauncherPerSecond = (this.commandLineWithoutLauncher != null) ? median(perSecond[4]) : Double.NaN;
		return rates.executorPerSecond / rates.rawPerSecond;
	}

	private double phase(Callable<Object> variant) throws Exception {
		return ThroughputPhase.run(this.threads, THREADS, this.phaseMillis, () -> {
			variant.call();
			return true;
		}).perSecond();
	}

	private static Object check(ExecutionResult result) {
		if (!result.succeeded()) {
			throw new IllegalStateException(result + ": " + result.stderrText());
		}
		return result;
	}

	private static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2];
	}

	@TearDown
	public void tearDown() throws IOException {
		this.threads.shutdownNow();
		this.executor.close();
		this.tmpfsExecutor.close();
		Files.deleteIfExists(this.sharedDirectory);
	}

	/**
	 * The median rates of one measurement iteration, in spawns per second.
	 */
	@State(Scope.Thread)
	@AuxCounters(AuxCounters.Type.EVENTS)
	public static class Rates {

		public double rawPerSecond;

		public double executorPerSecond;

		public double executorSharedDirPerSecond;

		public double executorTmpfsWorkdirPerSecond;

		/** NaN where the mechanism has no command line without the launcher. */
		public double rawNoLauncherPerSecond;

	}

}
