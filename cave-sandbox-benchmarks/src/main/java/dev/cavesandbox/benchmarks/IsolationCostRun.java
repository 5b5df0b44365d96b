package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the whole set in one go (a few minutes on two cores) and prints a Markdown summary
 * with the ratios that BENCHMARKS.md reports: latency (median, p99) and throughput at 1,
 * 2 and 8 threads of spawning {@code /bin/true} raw (with and without the native
 * launcher) and through the executor for each mechanism available here, the cost split of
 * the executor's own steps, the output path, and the startup probe.
 * <p>
 * Arguments: {@code --quick} for shorter iterations (a smoke run, not for figures);
 * {@code --summary FILE} to also write the summary to FILE.
 */
public final class IsolationCostRun {

	private static final int[] THREADS = { 1, 2, 8 };

	private static final Path TMPFS = Path.of("/dev/shm");

	private static final double LATENCY_GOAL = 1.10;

	private static final double THROUGHPUT_GOAL = 0.90;

	private static final double LAUNCHER_GOAL_MS = 0.5;

	private final boolean quick;

	private final List<String> mechanisms;

	private final int rounds;

	private final StringBuilder summary = new StringBuilder();

	private IsolationCostRun(boolean quick, List<String> mechanisms) {
		this.quick = quick;
		this.mechanisms = mechanisms;
		this.rounds = quick ? 1 : 2;
	}

	public static void main(String[] args) throws RunnerException, IOException {
		boolean quick = false;
		Path summaryFile = null;
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--quick")) {
				quick = true;
			}
			else if (args[i].equals("--summary") && i + 1 < args.length) {
				summaryFile = Path.of(args[++i]);
			}
			else {
				System.err.println("Unknown argument " + args[i] + ". Usage: [--quick] [--summary FILE]. "
						+ "For single benchmarks use JMH itself: java -cp benchmarks.jar org.openjdk.jmh.Main -h");
				System.exit(2);
			}
		}
		String loadBefore = loadAverage();
		long start = System.nanoTime();
		IsolationCostRun run = new IsolationCostRun(quick, BenchmarkMechanism.available());
		run.header(loadBefore);
		run.spawning();
		run.paired();
		run.pairedThroughput();
		run.output();
		run.probe();
		run.steps();
		run.line("");
		run.line("Load average before: %s; after: %s. Whole run: %d s.", loadBefore, loadAverage(),
				TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
		String text = run.summary.toString();
		System.out.println();
		System.out.println(text);
		if (summaryFile != null) {
			Files.createDirectories(summaryFile.toAbsolutePath().getParent());
			Files.writeString(summaryFile, text);
			System.out.println("Summary written to " + summaryFile);
		}
	}

	private void header(String load) {
		line("# Benchmark run %s", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
		line("");
		line("- Machine: %d CPUs (%s), Linux %s, %s", Runtime.getRuntime().availableProcessors(), cpuModel(),
				System.getProperty("os.version"), memory());
		line("- JDK: %s %s (%s)", System.getProperty("java.vm.vendor"), System.getProperty("java.runtime.version"),
				System.getProperty("java.vm.name"));
		line("- JMH 1.37; spawn and output configurations run in %d interleaved rounds of 1 fork each, merged%s",
				this.rounds, this.quick ? " (--quick: smoke run, not for figures)" : "");
		line("- Mechanisms measured: %s", String.join(", ", this.mechanisms));
		line("- Load average at start: %s", load);
	}

	// Spawning /bin/true: latency and throughput, raw and through the executor.

	private void spawning() throws RunnerException {
		List<String> paths = new ArrayList<>(List.of("raw-no-launcher", "raw", "raw-threads", "executor-shared-dir"));
		if (Files.isDirectory(TMPFS) && Files.isWritable(TMPFS)) {
			paths.add("executor-tmpfs-workdir");
		}
		paths.add("executor");
		List<ChainedOptionsBuilder> configurations = new ArrayList<>();
		configurations.add(spawn().mode(Mode.SampleTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.threads(1)
			.param("mechanism", names(this.mechanisms))
			.param("path", names(paths)));
		for (int threads : THREADS) {
			configurations.add(spawn().mode(Mode.Throughput)
				.timeUnit(TimeUnit.SECONDS)
				.threads(threads)
				.param("mechanism", names(this.mechanisms))
				.param("path", (threads == 8) ? names(paths) : new String[] { "raw", "executor" }));
		}
		Rounds rounds = inRounds(configurations);
		List<RunResult> latency = rounds.merged(Mode.SampleTime);
		List<RunResult> throughput = rounds.merged(Mode.Throughput);
		line("");
		line("## Spawning /bin/true");
		line("");
		line("Latency at 1 thread (JMH SampleTime), throughput in spawns/s (JMH Throughput) at 1, 2 and 8 threads.");
		line("");
		line("| mechanism | path | median ms | p99 ms | samples | 1 thread /s | 2 threads /s | 8 threads /s |");
		line("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			for (String path : paths) {
				RunResult sampled = find(latency, mechanism, path, 1).orElseThrow();
				StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %s | %s | %.3f | %.3f | %d |",
						mechanism, path, percentile(sampled, 50), percentile(sampled, 99),
						sampled.getPrimaryResult().getStatistics().getN()));
				for (int threads : THREADS) {
					Optional<RunResult> result = find(throughput, mechanism, path, threads);
					row.append(result.map((r) -> String.format(Locale.ROOT, " %.0f ± %.0f |", score(r), error(r)))
						.orElse(" |"));
				}
				line("%s", row);
			}
		}
		line("");
		line("### Goals: executor over the raw command line of its own mechanism");
		line("");
		line("Merged over the rounds; each round's own ratio in brackets.");
		line("");
		line("| mechanism | median executor / raw (goal <= %.2f) | throughput at 8 threads executor / raw (goal >= %.2f) |",
				LATENCY_GOAL, THROUGHPUT_GOAL);
		line("| --- | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			double latencyRatio = latencyRatio(latency, mechanism);
			double throughputRatio = throughputRatio(throughput, mechanism);
			String latencyRounds = rounds.each()
				.stream()
				.map((round) -> String.format(Locale.ROOT, "%.2f", latencyRatio(round, mechanism)))
				.collect(Collectors.joining(", "));
			String throughputRounds = rounds.each()
				.stream()
				.map((round) -> String.format(Locale.ROOT, "%.2f", throughputRatio(round, mechanism)))
				.collect(Collectors.joining(", "));
			line("| %s | %.3f %s [%s] | %.3f %s [%s] |", mechanism, latencyRatio, verdict(latencyRatio <= LATENCY_GOAL),
					latencyRounds, throughputRatio, verdict(throughputRatio >= THROUGHPUT_GOAL), throughputRounds);
		}
		line("");
		line("### Where the executor's time goes (medians at 1 thread, ms; throughput at 8 threads, /s)");
		line("");
		line("In brackets: the difference of each median to the column before it.");
		line("");
		line("| mechanism | %s |", String.join(" | ", paths));
		line("| --- |%s", " ---: |".repeat(paths.size()));
		for (String mechanism : this.mechanisms) {
			StringBuilder row = new StringBuilder("| " + mechanism + " |");
			double previous = Double.NaN;
			for (String path : paths) {
				double median = percentile(find(latency, mechanism, path, 1).orElseThrow(), 50);
				double perSecond = find(throughput, mechanism, path, 8).map(IsolationCostRun::score).orElse(Double.NaN);
				row.append(Double.isNaN(previous) ? String.format(Locale.ROOT, " %.3f ms, %.0f/s |", median, perSecond)
						: String.format(Locale.ROOT, " %.3f ms (%+.3f), %.0f/s |", median, median - previous,
								perSecond));
				previous = median;
			}
			line("%s", row);
		}
		if (this.mechanisms.contains("unshare")) {
			double plain = percentile(find(latency, "none", "raw", 1).orElseThrow(), 50);
			line("");
			line("Isolation itself (raw command line over plain /bin/true, medians): %s.",
					String.join(", ",
							this.mechanisms.stream()
								.filter((m) -> !m.equals("none"))
								.map((m) -> String.format(Locale.ROOT, "%s %.2fx", m,
										percentile(find(latency, m, "raw", 1).orElseThrow(), 50) / plain))
								.toList()));
		}
	}

	private static double latencyRatio(Collection<RunResult> results, String mechanism) {
		Collection<RunResult> sampled = results.stream()
			.filter((r) -> r.getParams().getMode() == Mode.SampleTime)
			.toList();
		return percentile(find(sampled, mechanism, "executor", 1).orElseThrow(), 50)
				/ percentile(find(sampled, mechanism, "raw", 1).orElseThrow(), 50);
	}

	private static double throughputRatio(Collection<RunResult> results, String mechanism) {
		Collection<RunResult> counted = results.stream()
			.filter((r) -> r.getParams().getMode() == Mode.Throughput)
			.toList();
		return score(find(counted, mechanism, "executor", 8).orElseThrow())
				/ score(find(counted, mechanism, "raw", 8).orElseThrow());
	}

	private ChainedOptionsBuilder spawn() {
		return options(SpawnBenchmark.class.getName() + ".spawnTrue").warmupIterations(1)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.quick ? 1 : 2)
			.measurementTime(TimeValue.seconds(1));
	}

	// The same, measured in pairs within one fork.

	private void paired() throws RunnerException {
		Collection<RunResult> results = run(options(PairedSpawnBenchmark.class.getName()).warmupIterations(1)
			.warmupBatchSize(1)
			.measurementIterations(this.quick ? 1 : 2)
			.measurementBatchSize(1)
			.param("mechanism", names(this.mechanisms))
			.param("pairs", this.quick ? "40" : "150"));
		line("");
		line("### Paired: raw and executor measured alternately within one fork");
		line("");
		line("Medians in ms over %s rounds per iteration (each round runs every variant once, in an order shuffled for each round), "
				+ "averaged over the iterations. raw is the command line the executor spawns, launcher included; "
				+ "raw-no-launcher the same wrapper without it; launcher added: the median of each round's "
				+ "raw minus raw-no-launcher (goal <= %.1f ms). The private directory steps are timed around a "
				+ "raw spawn in java.io.tmpdir (%s); mean in brackets.", this.quick ? "40" : "150", LAUNCHER_GOAL_MS,
				System.getProperty("java.io.tmpdir"));
		line("");
		line("| mechanism | raw-no-launcher | raw | launcher added | raw / raw-no-launcher | executor | executor / raw | raw-threads / raw | executor-shared-dir / raw | raw in a private dir | create dir | delete dir |");
		line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			RunResult result = results.stream()
				.filter((r) -> mechanism.equals(r.getParams().getParam("mechanism")))
				.findFirst()
				.orElseThrow();
			double raw = counter(result, "rawUs");
			double withoutLauncher = counter(result, "rawNoLauncherUs");
			double added = counter(result, "launcherAddedUs") / 1000;
			line("| %s | %.3f | %.3f | %.3f %s | %.3f | %.3f | %.3f %s | %.3f | %.3f | %.3f | %.3f (%.3f) | %.3f (%.3f) |",
					mechanism, withoutLauncher / 1000, raw / 1000, added,
					mechanism.equals("none") ? "(no launcher)" : verdict(added <= LAUNCHER_GOAL_MS),
					raw / withoutLauncher, counter(result, "executorUs") / 1000, counter(result, "executorUs") / raw,
					verdict(counter(result, "executorUs") / raw <= LATENCY_GOAL), counter(result, "rawThreadsUs") / raw,
					counter(result, "executorSharedDirUs") / raw, counter(result, "rawInPrivateDirUs") / 1000,
					counter(result, "createDirUs") / 1000, counter(result, "meanCreateDirUs") / 1000,
					counter(result, "deleteDirUs") / 1000, counter(result, "meanDeleteDirUs") / 1000);
		}
	}

	private void pairedThroughput() throws RunnerException {
		Collection<RunResult> results = run(options(PairedThroughputBenchmark.class.getName()).warmupIterations(0)
			.measurementIterations(1)
			.measurementBatchSize(1)
			.param("mechanism", names(this.mechanisms))
			.param("cycles", this.quick ? "2" : "5")
			.param("phaseMillis", this.quick ? "300" : "500"));
		line("");
		line("Throughput at 8 threads in alternating phases of %s ms within one fork (%s cycles; median rate of each, "
				+ "spawns/s):", this.quick ? "300" : "500", this.quick ? "2" : "5");
		line("");
		line("| mechanism | raw-no-launcher /s | raw /s | raw / raw-no-launcher | executor /s | executor / raw (goal >= %.2f) | executor-shared-dir / raw | executor-tmpfs-workdir / raw |",
				THROUGHPUT_GOAL);
		line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			RunResult result = results.stream()
				.filter((r) -> mechanism.equals(r.getParams().getParam("mechanism")))
				.findFirst()
				.orElseThrow();
			double raw = counter(result, "rawPerSecond");
			double executor = counter(result, "executorPerSecond");
			double withoutLauncher = counter(result, "rawNoLauncherPerSecond");
			line("| %s | %.0f | %.0f | %.3f | %.0f | %.3f %s | %.3f | %.3f |", mechanism, withoutLauncher, raw,
					raw / withoutLauncher, executor, executor / raw, verdict(executor / raw >= THROUGHPUT_GOAL),
					counter(result, "executorSharedDirPerSecond") / raw,
					counter(result, "executorTmpfsWorkdirPerSecond") / raw);
		}
	}

	private static double counter(RunResult result, String name) {
		return result.getSecondaryResults().get(name).getStatistics().getMean();
	}

	// Output: 256 MiB through the executor and from a raw Process.

	private void output() throws RunnerException {
		String mechanism = this.mechanisms.contains("unshare") ? "unshare" : "none";
		List<String> paths = List.of("raw-discard", "raw-memory", "executor-default-cap", "executor-large-cap",
				"executor-sink");
		// split-cpus is left to manual runs: on a shared VM, its cross-CPU wake-ups swing
		// by seconds.
		String[] placements = { "same-cpu" };
		Rounds rounds = inRounds(List.of(
				outputOptions(mechanism).jvmArgsAppend("-Xms2g", "-Xmx2g")
					.param("placement", placements)
					.param("path", names(paths)),
				outputOptions(mechanism).jvmArgsAppend("-Xmx32m")
					.param("placement", "same-cpu")
					.param("path", "executor-default-cap")));
		line("");
		line("## Output: 256 MiB on stdout (%s, dd bs=1M), -Xmx2g", mechanism);
		line("");
		line("Throughput ratios against raw-discard (read into a 64 KiB buffer and dropped) and raw-memory "
				+ "(readAllBytes) at the same placement. Heap: the largest growth of a single execution.");
		line("");
		line("| placement | path | ms per run (mean) | MiB/s | / raw-discard | / raw-memory | heap peak growth MiB |");
		line("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
		for (String placement : placements) {
			List<RunResult> results = rounds.merged()
				.stream()
				.filter((r) -> r.getParams().getJvmArgs().contains("-Xmx2g")
						&& placement.equals(r.getParams().getParam("placement")))
				.toList();
			double floor = mebibytesPerSecond(find(results, mechanism, "raw-discard", 1).orElseThrow());
			double inMemory = mebibytesPerSecond(find(results, mechanism, "raw-memory", 1).orElseThrow());
			for (String path : paths) {
				RunResult result = find(results, mechanism, path, 1).orElseThrow();
				double rate = mebibytesPerSecond(result);
				line("| %s | %s | %.0f | %.0f | %.2f | %.2f | %.1f |", placement, path, score(result), rate,
						rate / floor, rate / inMemory, heapGrowth(result));
			}
		}
		RunResult small = rounds.merged()
			.stream()
			.filter((r) -> r.getParams().getJvmArgs().contains("-Xmx32m"))
			.findFirst()
			.orElseThrow();
		line("| same-cpu | executor-default-cap at -Xmx32m | %.0f | %.0f | | | %.1f |", score(small),
				mebibytesPerSecond(small), heapGrowth(small));
	}

	private ChainedOptionsBuilder outputOptions(String mechanism) {
		return options(OutputBenchmark.class.getName()).mode(Mode.SingleShotTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.warmupIterations(1)
			.measurementIterations(this.quick ? 2 : 4)
			.param("mechanism", mechanism);
	}

	// The startup probe.

	private void probe() throws RunnerException {
		if (this.mechanisms.size() < 2) {
			line("");
			line("## Startup probe: skipped, isolation is not available here");
			return;
		}
		String name = ProbeBenchmark.class.getName();
		RunResult warm = run(options(name).mode(Mode.SampleTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.warmupIterations(1)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.quick ? 1 : 2)
			.measurementTime(TimeValue.seconds(2))).iterator().next();
		RunResult cold = run(options(name).mode(Mode.SingleShotTime)
			.timeUnit(TimeUnit.MILLISECONDS)
			.forks(this.quick ? 2 : 5)
			.warmupIterations(0)
			.measurementIterations(1)).iterator().next();
		line("");
		line("## Startup probe (NetworkIsolationProbe.probe() with the default settings: mechanism auto)");
		line("");
		line("| | median ms | p99 ms | mean ms | runs |");
		line("| --- | ---: | ---: | ---: | ---: |");
		line("| warm (SampleTime) | %.3f | %.3f | %.3f | %d |", percentile(warm, 50), percentile(warm, 99),
				warm.getPrimaryResult().getStatistics().getMean(), warm.getPrimaryResult().getStatistics().getN());
		line("| cold (first call in a fresh JVM) | %.3f | %.3f | %.3f | %d |", percentile(cold, 50),
				percentile(cold, 99), cold.getPrimaryResult().getStatistics().getMean(),
				cold.getPrimaryResult().getStatistics().getN());
	}

	// The executor's steps alone.

	private void steps() throws RunnerException {
		Collection<RunResult> results = run(options(ExecutorStepsBenchmark.class.getName()).warmupIterations(1)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(this.quick ? 1 : 3)
			.measurementTime(TimeValue.seconds(1)));
		line("");
		line("## The executor's steps alone, without a spawn (1 thread, µs per call)");
		line("");
		line("| step | µs |");
		line("| --- | ---: |");
		for (RunResult result : results) {
			BenchmarkParams params = result.getParams();
			String step = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
			String workDirectory = params.getParam("workDirectory");
			line("| %s%s | %.2f ± %.2f |", step, (workDirectory != null) ? " in " + workDirectory : "", score(result),
					error(result));
		}
	}

	// Helpers.

	private static ChainedOptionsBuilder options(String include) {
		return new OptionsBuilder().include("^" + include.replace(".", "\\.") + "(\\..*)?$")
			.forks(1)
			.shouldFailOnError(true);
	}

	private static Collection<RunResult> run(ChainedOptionsBuilder options) throws RunnerException {
		return new Runner(options.build()).run();
	}

	/**
	 * Run every configuration once per round, one after the other, and merge the forks of
	 * each configuration: a change of load on this shared machine then weighs on all of
	 * them alike.
	 */
	private Rounds inRounds(List<ChainedOptionsBuilder> configurations) throws RunnerException {
		Map<String, List<RunResult>> byConfiguration = new LinkedHashMap<>();
		List<List<RunResult>> rounds = new ArrayList<>();
		for (int round = 0; round < this.rounds; round++) {
			List<RunResult> results = new ArrayList<>();
			for (ChainedOptionsBuilder configuration : configurations) {
				results.addAll(run(configuration));
			}
			results
				.forEach((result) -> byConfiguration.computeIfAbsent(key(result.getParams()), (k) -> new ArrayList<>())
					.add(result));
			rounds.add(results);
		}
		List<RunResult> merged = byConfiguration.values().stream().map((results) -> {
			List<BenchmarkResult> forks = new ArrayList<>();
			results.forEach((result) -> forks.addAll(result.getBenchmarkResults()));
			return new RunResult(results.get(0).getParams(), forks);
		}).toList();
		return new Rounds(merged, rounds);
	}

	/**
	 * The results of every configuration, merged over the rounds, and those of each
	 * round.
	 */
	private record Rounds(List<RunResult> merged, List<List<RunResult>> each) {

		List<RunResult> merged(Mode mode) {
			return this.merged.stream().filter((r) -> r.getParams().getMode() == mode).toList();
		}

	}

	private static String key(BenchmarkParams params) {
		return params.getBenchmark() + " " + params.getMode() + " " + params.getThreads() + " "
				+ params.getParamsKeys().stream().map((k) -> k + "=" + params.getParam(k)).toList() + " "
				+ params.getJvmArgs();
	}

	private static Optional<RunResult> find(Collection<RunResult> results, String mechanism, String path, int threads) {
		return results.stream().filter((result) -> {
			BenchmarkParams params = result.getParams();
			return mechanism.equals(params.getParam("mechanism")) && path.equals(params.getParam("path"))
					&& params.getThreads() == threads;
		}).findFirst();
	}

	private static double percentile(RunResult result, double percentile) {
		return result.getPrimaryResult().getStatistics().getPercentile(percentile);
	}

	private static double score(RunResult result) {
		return result.getPrimaryResult().getScore();
	}

	private static double error(RunResult result) {
		double error = result.getPrimaryResult().getScoreError();
		return Double.isNaN(error) ? 0 : error;
	}

	private static double mebibytesPerSecond(RunResult result) {
		return (OutputBenchmark.SIZE / (1024.0 * 1024.0)) / (score(result) / 1000.0);
	}

	private static double heapGrowth(RunResult result) {
		Result<?> growth = result.getSecondaryResults().get("heapPeakGrowthMiB");
		return (growth != null) ? growth.getStatistics().getMax() : Double.NaN;
	}

	private static String verdict(boolean met) {
		return met ? "(met)" : "(MISSED)";
	}

	private static String[] names(List<String> values) {
		return values.toArray(String[]::new);
	}

	private void line(String format, Object... args) {
		this.summary.append(String.format(Locale.ROOT, format, args)).append('\n');
	}

	private static String loadAverage() {
		return read("/proc/loadavg").map((text) -> String.join(" ", List.of(text.trim().split(" ")).subList(0, 3)))
			.orElse("unknown");
	}

	private static String cpuModel() {
		return read("/proc/cpuinfo")
			.flatMap((text) -> text.lines()
				.filter((l) -> l.startsWith("model name"))
				.map((l) -> l.substring(l.indexOf(':') + 1).trim())
				.findFirst())
			.orElse("unknown CPU");
	}

	private static String memory() {
		return read("/proc/meminfo")
			.flatMap((text) -> text.lines()
				.filter((l) -> l.startsWith("MemTotal:"))
				.map((l) -> Long.parseLong(l.replaceAll("[^0-9]", "")) / (1024 * 1024) + " GiB RAM")
				.findFirst())
			.orElse("");
	}

	private static Optional<String> read(String file) {
		try {
			return Optional.of(Files.readString(Path.of(file)));
		}
		catch (IOException ex) {
			return Optional.empty();
		}
	}

}
