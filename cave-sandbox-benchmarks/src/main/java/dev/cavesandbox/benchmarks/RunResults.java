package dev.cavesandbox.benchmarks;

import java.util.Collection;
import java.util.Optional;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * The figures the reports read from JMH's results: percentiles and scores in the
 * benchmark's time unit, and the secondary results (counters) of the paired and output
 * benchmarks.
 */
final class RunResults {

	private RunResults() {
	}

	/**
	 * The result of a mechanism and path (of {@link SpawnBenchmark} or
	 * {@link OutputBenchmark}) at a thread count.
	 */
	static Optional<RunResult> find(Collection<RunResult> results, String mechanism, String path, int threads) {
		return results.stream().filter((result) -> {
			BenchmarkParams params = result.getParams();
			return mechanism.equals(params.getParam("mechanism")) && path.equals(params.getParam("path"))
					&& params.getThreads() == threads;
		}).findFirst();
	}

	/** The result of a mechanism, for the benchmarks that take no path. */
	static RunResult of(Collection<RunResult> results, String mechanism) {
		return results.stream()
			.filter((r) -> mechanism.equals(r.getParams().getParam("mechanism")))
			.findFirst()
			.orElseThrow();
	}

	static double percentile(RunResult result, double percentile) {
		return result.getPrimaryResult().getStatistics().getPercentile(percentile);
	}

	static double score(RunResult result) {
		return result.getPrimaryResult().getScore();
	}

	/** The score's error, 0 where JMH has none (a single iteration). */
	static double error(RunResult result) {
		double error = result.getPrimaryResult().getScoreError();
		return Double.isNaN(error) ? 0 : error;
	}

	/** The mean of a secondary result: a counter of the paired benchmarks. */
	static double counter(RunResult result, String name) {
		return result.getSecondaryResults().get(name).getStatistics().getMean();
	}

	/** The rate of a run of {@link OutputBenchmark}, whose score is ms per run. */
	static double mebibytesPerSecond(RunResult result) {
		return (OutputBenchmark.SIZE / (1024.0 * 1024.0)) / (score(result) / 1000.0);
	}

	/** The largest heap growth of a single execution, in MiB, or NaN. */
	static double heapGrowth(RunResult result) {
		Result<?> growth = result.getSecondaryResults().get("heapPeakGrowthMiB");
		return (growth != null) ? growth.getStatistics().getMax() : Double.NaN;
	}

}
