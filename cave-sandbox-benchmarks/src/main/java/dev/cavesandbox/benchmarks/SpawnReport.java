package dev.cavesandbox.benchmarks;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;

import static dev.cavesandbox.benchmarks.RunResults.counter;
import static dev.cavesandbox.benchmarks.RunResults.error;
import static dev.cavesandbox.benchmarks.RunResults.find;
import static dev.cavesandbox.benchmarks.RunResults.percentile;
import static dev.cavesandbox.benchmarks.RunResults.score;
import static dev.cavesandbox.benchmarks.Summary.verdict;

/**
 * The sections on spawning {@code /bin/true}: latency and throughput of each path, the
 * executor against the raw command line of its own mechanism with the goals (median at
 * most 1.10 times raw, throughput at 8 threads at least 0.90 times raw, the launcher at
 * most 0.5 ms), where the executor's time goes, and the same measured in pairs within one
 * fork. Where a mechanism has no command line without the launcher
 * ({@link BenchmarkMechanism#hasLineWithoutLauncher(String)}), each figure without it
 * reads {@link BenchmarkMechanism#withoutLauncherNotApplicable(String)}, such as
 * {@code n/a (the launcher makes unshare's mounts)}.
 */
final class SpawnReport {

	private static final double LATENCY_GOAL = 1.10;

	private static final double THROUGHPUT_GOAL = 0.90;

	private static final double LAUNCHER_GOAL_MS = 0.5;

	private final MeasurementPlan plan;

	private final List<String> mechanisms;

	private final Summary summary;

	SpawnReport(MeasurementPlan plan, Summary summary) {
		this.plan = plan;
		this.mechanisms = plan.mechanisms();
		this.summary = summary;
	}

	/**
	 * Report the spawn configurations of the plan.
	 * @param paths the paths measured, as {@link MeasurementPlan#spawnPaths()}
	 * @param rounds the results of {@link MeasurementPlan#spawning(List)}
	 */
	void spawning(List<String> paths, JmhRunner.RoundResults rounds) {
		List<RunResult> latency = rounds.merged(Mode.SampleTime);
		List<RunResult> throughput = rounds.merged(Mode.Throughput);
		pathsTable(paths, latency, throughput);
		goalsTable(rounds, latency, throughput);
		timeTable(paths, latency, throughput);
		if (this.mechanisms.contains("unshare")) {
			isolationItself(latency);
		}
	}

	private void pathsTable(List<String> paths, List<RunResult> latency, List<RunResult> throughput) {
		line("");
		line("## Spawning /bin/true");
		line("");
		line("Latency at 1 thread (JMH SampleTime), throughput in spawns/s (JMH Throughput) at 1, 2 and 8 threads.");
		line("");
		line("| mechanism | path | median ms | p99 ms | samples | 1 thread /s | 2 threads /s | 8 threads /s |");
		line("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			for (String path : paths) {
				if (!MeasurementPlan.spawnPaths(mechanism, paths).contains(path)) {
					line("| %s | %s | %s | | | | | |", mechanism, path,
							BenchmarkMechanism.withoutLauncherNotApplicable(mechanism));
					continue;
				}
				RunResult sampled = find(latency, mechanism, path, 1).orElseThrow();
				StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %s | %s | %.3f | %.3f | %d |",
						mechanism, path, percentile(sampled, 50), percentile(sampled, 99),
						sampled.getPrimaryResult().getStatistics().getN()));
				for (int threads : MeasurementPlan.THREADS) {
					Optional<RunResult> result = find(throughput, mechanism, path, threads);
					row.append(result.map((r) -> String.format(Locale.ROOT, " %.0f ± %.0f |", score(r), error(r)))
						.orElse(" |"));
				}
				line("%s", row);
			}
		}
	}

	private void goalsTable(JmhRunner.RoundResults rounds, List<RunResult> latency, List<RunResult> throughput) {
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
	}

	private void timeTable(List<String> paths, List<RunResult> latency, List<RunResult> throughput) {
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
				if (!MeasurementPlan.spawnPaths(mechanism, paths).contains(path)) {
					row.append(' ').append(BenchmarkMechanism.withoutLauncherNotApplicable(mechanism)).append(" |");
					continue;
				}
				double median = percentile(find(latency, mechanism, path, 1).orElseThrow(), 50);
				double perSecond = find(throughput, mechanism, path, 8).map(RunResults::score).orElse(Double.NaN);
				row.append(Double.isNaN(previous) ? String.format(Locale.ROOT, " %.3f ms, %.0f/s |", median, perSecond)
						: String.format(Locale.ROOT, " %.3f ms (%+.3f), %.0f/s |", median, median - previous,
								perSecond));
				previous = median;
			}
			line("%s", row);
		}
	}

	private void isolationItself(List<RunResult> latency) {
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

	/**
	 * Report {@link MeasurementPlan#paired()}: medians in µs, as counters of each fork.
	 */
	void paired(Collection<RunResult> results) {
		line("");
		line("### Paired: raw and executor measured alternately within one fork");
		line("");
		line("Medians in ms over %s rounds per iteration (each round runs every variant once, in an order shuffled for each round), "
				+ "averaged over the iterations. raw is the command line the executor spawns, launcher included; "
				+ "raw-no-launcher the same wrapper without it (n/a where the launcher builds the sandbox itself); "
				+ "launcher added: the median of each round's "
				+ "raw minus raw-no-launcher (goal <= %.1f ms). The private directory steps are timed around a "
				+ "raw spawn in java.io.tmpdir (%s); mean in brackets.", this.plan.pairs(), LAUNCHER_GOAL_MS,
				System.getProperty("java.io.tmpdir"));
		line("");
		line("| mechanism | raw-no-launcher | raw | launcher added | raw / raw-no-launcher | executor | executor / raw | raw-threads / raw | executor-shared-dir / raw | raw in a private dir | create dir | delete dir |");
		line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			RunResult result = RunResults.of(results, mechanism);
			double raw = counter(result, "rawUs");
			double withoutLauncher = counterWithoutLauncher(result, mechanism, "rawNoLauncherUs");
			double added = counterWithoutLauncher(result, mechanism, "launcherAddedUs") / 1000;
			line("| %s | %s | %.3f | %s | %s | %.3f | %.3f %s | %.3f | %.3f | %.3f | %.3f (%.3f) | %.3f (%.3f) |",
					mechanism, withoutLauncher(mechanism, "%.3f", withoutLauncher / 1000), raw / 1000,
					withoutLauncher(mechanism,
							"%.3f " + (mechanism.equals("none") ? "(no launcher)" : verdict(added <= LAUNCHER_GOAL_MS)),
							added),
					withoutLauncher(mechanism, "%.3f", raw / withoutLauncher), counter(result, "executorUs") / 1000,
					counter(result, "executorUs") / raw, verdict(counter(result, "executorUs") / raw <= LATENCY_GOAL),
					counter(result, "rawThreadsUs") / raw, counter(result, "executorSharedDirUs") / raw,
					counter(result, "rawInPrivateDirUs") / 1000, counter(result, "createDirUs") / 1000,
					counter(result, "meanCreateDirUs") / 1000, counter(result, "deleteDirUs") / 1000,
					counter(result, "meanDeleteDirUs") / 1000);
		}
	}

	/** Report {@link MeasurementPlan#pairedThroughput()}: rates per second. */
	void pairedThroughput(Collection<RunResult> results) {
		line("");
		line("Throughput at 8 threads in alternating phases of %s ms within one fork (%s cycles; median rate of each, "
				+ "spawns/s):", this.plan.phaseMillis(), this.plan.cycles());
		line("");
		line("| mechanism | raw-no-launcher /s | raw /s | raw / raw-no-launcher | executor /s | executor / raw (goal >= %.2f) | executor-shared-dir / raw | executor-tmpfs-workdir / raw |",
				THROUGHPUT_GOAL);
		line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
		for (String mechanism : this.mechanisms) {
			RunResult result = RunResults.of(results, mechanism);
			double raw = counter(result, "rawPerSecond");
			double executor = counter(result, "executorPerSecond");
			double withoutLauncher = counterWithoutLauncher(result, mechanism, "rawNoLauncherPerSecond");
			line("| %s | %s | %.0f | %s | %.0f | %.3f %s | %.3f | %.3f |", mechanism,
					withoutLauncher(mechanism, "%.0f", withoutLauncher), raw,
					withoutLauncher(mechanism, "%.3f", raw / withoutLauncher), executor, executor / raw,
					verdict(executor / raw >= THROUGHPUT_GOAL), counter(result, "executorSharedDirPerSecond") / raw,
					counter(result, "executorTmpfsWorkdirPerSecond") / raw);
		}
	}

	/**
	 * Read a counter measured without the launcher: NaN, not read, where the mechanism
	 * has no command line without it.
	 */
	private static double counterWithoutLauncher(RunResult result, String mechanism, String name) {
		return BenchmarkMechanism.hasLineWithoutLauncher(mechanism) ? counter(result, name) : Double.NaN;
	}

	/**
	 * Format a figure measured without the launcher, or say why there is none.
	 * @param mechanism the mechanism's name
	 * @param format the figure's format, as {@link String#format}
	 * @param value the figure, NaN where it was not measured
	 * @return the cell's text
	 */
	private static String withoutLauncher(String mechanism, String format, double value) {
		if (!BenchmarkMechanism.hasLineWithoutLauncher(mechanism)) {
			return BenchmarkMechanism.withoutLauncherNotApplicable(mechanism);
		}
		return String.format(Locale.ROOT, format, value);
	}

	private void line(String format, Object... args) {
		this.summary.line(format, args);
	}

}
