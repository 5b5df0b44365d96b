package dev.cavesandbox.benchmarks;

import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.RunResult;

import static dev.cavesandbox.benchmarks.RunResults.error;
import static dev.cavesandbox.benchmarks.RunResults.find;
import static dev.cavesandbox.benchmarks.RunResults.heapGrowth;
import static dev.cavesandbox.benchmarks.RunResults.mebibytesPerSecond;
import static dev.cavesandbox.benchmarks.RunResults.percentile;
import static dev.cavesandbox.benchmarks.RunResults.score;

/**
 * The sections after spawning: the output path (256 MiB through the executor against a
 * raw {@link Process}), the startup probe warm and cold, and the executor's own steps
 * without a spawn.
 */
final class OutputProbeStepsReport {

	private final MeasurementPlan plan;

	private final Summary summary;

	OutputProbeStepsReport(MeasurementPlan plan, Summary summary) {
		this.plan = plan;
		this.summary = summary;
	}

	/**
	 * Report {@link MeasurementPlan#output()}: ms per run, MiB/s, the ratios to the raw
	 * paths at the same placement, and the heap's peak growth.
	 */
	void output(JmhRunner.RoundResults rounds) {
		String mechanism = this.plan.outputMechanism();
		line("");
		line("## Output: 256 MiB on stdout (%s, dd bs=1M), -Xmx2g", mechanism);
		line("");
		line("Throughput ratios against raw-discard (read into a 64 KiB buffer and dropped) and raw-memory "
				+ "(readAllBytes) at the same placement. Heap: the largest growth of a single execution.");
		line("");
		line("| placement | path | ms per run (mean) | MiB/s | / raw-discard | / raw-memory | heap peak growth MiB |");
		line("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
		for (String placement : this.plan.outputPlacements()) {
			List<RunResult> results = rounds.merged()
				.stream()
				.filter((r) -> r.getParams().getJvmArgs().contains("-Xmx2g")
						&& placement.equals(r.getParams().getParam("placement")))
				.toList();
			double floor = mebibytesPerSecond(find(results, mechanism, "raw-discard", 1).orElseThrow());
			double inMemory = mebibytesPerSecond(find(results, mechanism, "raw-memory", 1).orElseThrow());
			for (String path : this.plan.outputPaths()) {
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

	void probeSkipped() {
		line("");
		line("## Startup probe: skipped, isolation is not available here");
	}

	/**
	 * Report the probe's times in ms.
	 * @param warm the result of {@link MeasurementPlan#warmProbe()}
	 * @param cold the result of {@link MeasurementPlan#coldProbe()}
	 */
	void probe(RunResult warm, RunResult cold) {
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

	/** Report {@link MeasurementPlan#steps()}: µs per call of each step. */
	void steps(Collection<RunResult> results) {
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

	private void line(String format, Object... args) {
		this.summary.line(format, args);
	}

}
