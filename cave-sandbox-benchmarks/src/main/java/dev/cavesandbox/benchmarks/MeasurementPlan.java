package dev.cavesandbox.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * What {@link IsolationCostRun} measures: the JMH configuration of each section, for the
 * mechanisms available here, shorter with {@code --quick}. Every configuration runs in 1
 * fork and fails on a benchmark's error.
 */
final class MeasurementPlan {

	/** The thread counts of the spawn throughput. */
	static final int[] THREADS = { 1, 2, 8 };

	/** The path of {@link SpawnBenchmark} without the native launcher. */
	static final String RAW_NO_LAUNCHER = "raw-no-launcher";

	private static final Path TMPFS = Path.of("/dev/shm");

	private final boolean quick;

	private final List<String> mechanisms;

	MeasurementPlan(boolean quick, List<String> mechanisms) {
		this.quick = quick;
		this.mechanisms = mechanisms;
	}

	boolean quick() {
		return this.quick;
	}

	/** The mechanisms measured: those available here, {@code none} first. */
	List<String> mechanisms() {
		return this.mechanisms;
	}

	/** How many interleaved rounds the spawn and output configurations run in. */
	int rounds() {
		return this.quick ? 1 : 2;
	}

	// Spawning /bin/true: latency and throughput, raw and through the executor.

	/**
	 * The paths of {@link SpawnBenchmark}, from the rawest to the executor, each adding a
	 * step; {@code executor-tmpfs-workdir} where {@code /dev/shm} is writable. A
	 * mechanism is measured on those of {@link #spawnPaths(String, List)}.
	 */
	List<String> spawnPaths() {
		List<String> paths = new ArrayList<>(List.of(RAW_NO_LAUNCHER, "raw", "raw-threads", "executor-shared-dir"));
		if (Files.isDirectory(TMPFS) && Files.isWritable(TMPFS)) {
			paths.add("executor-tmpfs-workdir");
		}
		paths.add("executor");
		return paths;
	}

	/**
	 * The paths a mechanism is measured on: all of them, but {@code raw-no-launcher} only
	 * where the mechanism has a command line without the launcher
	 * ({@link BenchmarkMechanism#hasLineWithoutLauncher(String)}: not for
	 * {@code unshare}, whose mounts the launcher makes).
	 * @param mechanism the mechanism's name
	 * @param paths the paths, as {@link #spawnPaths()}
	 * @return the paths, in the same order
	 */
	static List<String> spawnPaths(String mechanism, List<String> paths) {
		return BenchmarkMechanism.hasLineWithoutLauncher(mechanism) ? paths
				: paths.stream().filter((path) -> !path.equals(RAW_NO_LAUNCHER)).toList();
	}

	/**
	 * Latency of every path at 1 thread, then throughput at each of {@link #THREADS}:
	 * every path at 8 threads, raw and executor only below. Each of those runs as one
	 * configuration per set of paths of {@link #spawnPaths(String, List)} (JMH measures
	 * every mechanism on every path of a configuration).
	 */
	List<ChainedOptionsBuilder> spawning(List<String> paths) {
		List<ChainedOptionsBuilder> configurations = new ArrayList<>(
				byPaths(paths, () -> spawn().mode(Mode.SampleTime).timeUnit(TimeUnit.MILLISECONDS).threads(1)));
		for (int threads : THREADS) {
			configurations.addAll(byPaths((threads == 8) ? paths : List.of("raw", "executor"),
					() -> spawn().mode(Mode.Throughput).timeUnit(TimeUnit.SECONDS).threads(threads)));
		}
		return configurations;
	}

	private List<ChainedOptionsBuilder> byPaths(List<String> paths, Supplier<ChainedOptionsBuilder> options) {
		Map<List<String>, List<String>> mechanismsByPaths = new LinkedHashMap<>();
		for (String mechanism : this.mechanisms) {
			mechanismsByPaths.computeIfAbsent(spawnPaths(mechanism, paths), (key) -> new ArrayList<>()).add(mechanism);
		}
		return mechanismsByPaths.entrySet()
			.stream()
			.map((group) -> options.get()
				.param("mechanism", names(group.getValue()))
				.param("path", names(group.getKey())))
			.toList();
	}

	private ChainedOptionsBuilder spawn() {
		return options(SpawnBenchmark.class.getName() + ".spawnTrue").warmupIterations(1)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.quick ? 1 : 2)
			.measurementTime(TimeValue.seconds(1));
	}

	// The same, measured in pairs within one fork.

	/** The rounds per iteration of {@link PairedSpawnBenchmark}. */
	String pairs() {
		return this.quick ? "40" : "150";
	}

	ChainedOptionsBuilder paired() {
		return options(PairedSpawnBenchmark.class.getName()).warmupIterations(1)
			.warmupBatchSize(1)
			.measurementIterations(this.quick ? 1 : 2)
			.measurementBatchSize(1)
			.param("mechanism", names(this.mechanisms))
			.param("pairs", pairs());
	}

	/** The cycles of {@link PairedThroughputBenchmark}'s alternating phases. */
	String cycles() {
		return this.quick ? "2" : "5";
	}

	/** The length of each phase of {@link PairedThroughputBenchmark}, in ms. */
	String phaseMillis() {
		return this.quick ? "300" : "500";
	}

	ChainedOptionsBuilder pairedThroughput() {
		return options(PairedThroughputBenchmark.class.getName()).warmupIterations(0)
			.measurementIterations(1)
			.measurementBatchSize(1)
			.param("mechanism", names(this.mechanisms))
			.param("cycles", cycles())
			.param("phaseMillis", phaseMillis());
	}

	// Output: 256 MiB through the executor and from a raw Process.

	/** The one mechanism the output is measured in: unshare where available. */
	String outputMechanism() {
		return this.mechanisms.contains("unshare") ? "unshare" : "none";
	}

	List<String> outputPaths() {
		return List.of("raw-discard", "raw-memory", "executor-default-cap", "executor-large-cap", "executor-sink");
	}

	/**
	 * The CPU placements of the output: split-cpus is left to manual runs, since on a
	 * shared VM its cross-CPU wake-ups swing by seconds.
	 */
	List<String> outputPlacements() {
		return List.of("same-cpu");
	}

	/**
	 * Every output path at {@code -Xmx2g}, then the default cap alone at {@code -Xmx32m}.
	 */
	List<ChainedOptionsBuilder> output() {
		String mechanism = outputMechanism();
		return List.of(
				outputOptions(mechanism).jvmArgsAppend("-Xms2g", "-Xmx2g")
					.param("placement", names(outputPlacements()))
					.param("path", names(outputPaths())),
				outputOptions(mechanism).jvmArgsAppend("-Xmx32m")
					.param("placement", "same-cpu")
					.param("path", "executor-default-cap"));
	}

	private ChainedOptionsBuilder outputOptions(String mechanism) {
		return options(OutputBenchmark.class.getName()).mode(Mode.SingleShotTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.warmupIterations(1)
			.measurementIterations(this.quick ? 2 : 4)
			.param("mechanism", mechanism);
	}

	// The startup probe.

	/** Whether the probe is measured: only where some isolation is available. */
	boolean probes() {
		return this.mechanisms.size() >= 2;
	}

	ChainedOptionsBuilder warmProbe() {
		return options(ProbeBenchmark.class.getName()).mode(Mode.SampleTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.warmupIterations(1)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.quick ? 1 : 2)
			.measurementTime(TimeValue.seconds(2));
	}

	/** The first call in a fresh JVM: one shot per fork. */
	ChainedOptionsBuilder coldProbe() {
		return options(ProbeBenchmark.class.getName()).mode(Mode.SingleShotTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.forks(this.quick ? 2 : 5)
			.warmupIterations(0)
			.measurementIterations(1);
	}

	// The executor's steps alone.

	ChainedOptionsBuilder steps() {
		return options(ExecutorStepsBenchmark.class.getName()).warmupIterations(1)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.quick ? 1 : 3)
			.measurementTime(TimeValue.seconds(1));
	}

	private static ChainedOptionsBuilder options(String include) {
		return new OptionsBuilder().include("^" + include.replace(".", "\\.") + "(\\..*)?$")
			.forks(1)
			.shouldFailOnError(true);
	}

	private static String[] names(List<String> values) {
		return values.toArray(String[]::new);
	}

}
