package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.runner.RunnerException;

/**
 * Runs the whole set in one go (a few minutes on two cores) and prints a Markdown summary
 * with the ratios that BENCHMARKS.md reports: latency (median, p99) and throughput at 1,
 * 2 and 8 threads of spawning {@code /bin/true} raw (with the native launcher, and
 * without it where the mechanism has such a command line:
 * {@link BenchmarkMechanism#hasLineWithoutLauncher(String)}) and through the executor for
 * each mechanism available here, the cost split of the executor's own steps, the output
 * path, and the startup probe. What runs is the {@link MeasurementPlan}; the tables are
 * written by {@link SpawnReport} and {@link OutputProbeStepsReport}.
 * <p>
 * Arguments: {@code --quick} for shorter iterations (a smoke run, not for figures);
 * {@code --summary FILE} to also write the summary to FILE. Exit code 2 on another
 * argument.
 */
public final class IsolationCostRun {

	private IsolationCostRun() {
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
		String loadBefore = Summary.loadAverage();
		long start = System.nanoTime();
		MeasurementPlan plan = new MeasurementPlan(quick, BenchmarkMechanism.available());
		Summary summary = new Summary();
		summary.header(plan, loadBefore);
		measure(plan, summary);
		summary.line("");
		summary.line("Load average before: %s; after: %s. Whole run: %d s.", loadBefore, Summary.loadAverage(),
				TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
		String text = summary.toString();
		System.out.println();
		System.out.println(text);
		if (summaryFile != null) {
			Files.createDirectories(summaryFile.toAbsolutePath().getParent());
			Files.writeString(summaryFile, text);
			System.out.println("Summary written to " + summaryFile);
		}
	}

	/** Run each section of the plan, in order, and report it when it is done. */
	private static void measure(MeasurementPlan plan, Summary summary) throws RunnerException {
		SpawnReport spawn = new SpawnReport(plan, summary);
		List<String> paths = plan.spawnPaths();
		spawn.spawning(paths, JmhRunner.inRounds(plan.spawning(paths), plan.rounds()));
		spawn.paired(JmhRunner.run(plan.paired()));
		spawn.pairedThroughput(JmhRunner.run(plan.pairedThroughput()));
		OutputProbeStepsReport others = new OutputProbeStepsReport(plan, summary);
		others.output(JmhRunner.inRounds(plan.output(), plan.rounds()));
		if (plan.probes()) {
			others.probe(JmhRunner.run(plan.warmProbe()).iterator().next(),
					JmhRunner.run(plan.coldProbe()).iterator().next());
		}
		else {
			others.probeSkipped();
		}
		others.steps(JmhRunner.run(plan.steps()));
	}

}
