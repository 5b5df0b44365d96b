package dev.cavesandbox.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;

/**
 * Runs the configurations of a {@link MeasurementPlan} through JMH's Java API, alone or
 * in interleaved rounds.
 */
final class JmhRunner {

	private JmhRunner() {
	}

	static Collection<RunResult> run(ChainedOptionsBuilder options) throws RunnerException {
		return new Runner(options.build()).run();
	}

	/**
	 * Run every configuration once per round, one after the other, and merge the forks of
	 * each configuration: a change of load on this shared machine then weighs on all of
	 * them alike.
	 * @param configurations the configurations, run in this order in each round
	 * @param rounds how many rounds
	 * @return the results, merged and of each round
	 */
	static RoundResults inRounds(List<ChainedOptionsBuilder> configurations, int rounds) throws RunnerException {
		Map<String, List<RunResult>> byConfiguration = new LinkedHashMap<>();
		List<List<RunResult>> each = new ArrayList<>();
		for (int round = 0; round < rounds; round++) {
			List<RunResult> results = new ArrayList<>();
			for (ChainedOptionsBuilder configuration : configurations) {
				results.addAll(run(configuration));
			}
			results
				.forEach((result) -> byConfiguration.computeIfAbsent(key(result.getParams()), (k) -> new ArrayList<>())
					.add(result));
			each.add(results);
		}
		List<RunResult> merged = byConfiguration.values().stream().map((results) -> {
			List<BenchmarkResult> forks = new ArrayList<>();
			results.forEach((result) -> forks.addAll(result.getBenchmarkResults()));
			return new RunResult(results.get(0).getParams(), forks);
		}).toList();
		return new RoundResults(merged, each);
	}

	private static String key(BenchmarkParams params) {
		return params.getBenchmark() + " " + params.getMode() + " " + params.getThreads() + " "
				+ params.getParamsKeys().stream().map((k) -> k + "=" + params.getParam(k)).toList() + " "
				+ params.getJvmArgs();
	}

	/**
	 * The results of every configuration, merged over the rounds, and those of each
	 * round.
	 */
	record RoundResults(List<RunResult> merged, List<List<RunResult>> each) {

		List<RunResult> merged(Mode mode) {
			return this.merged.stream().filter((r) -> r.getParams().getMode() == mode).toList();
		}

	}

}
