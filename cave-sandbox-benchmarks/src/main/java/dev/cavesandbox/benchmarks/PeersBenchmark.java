package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.workspace.DirectoryTrees;
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
 * The executor side by side with other sandboxes of one process (issue 30), as
 * {@link LadderBenchmark} measures the rungs: in one fork, for each workload, rounds in
 * which every variant runs once in an order shuffled anew (a fixed seed); each variant's
 * median and the median of its per-round ratios to {@code plain} of the same workload and
 * round, so that a change of load weighs on both sides of a ratio alike. The variants are
 * {@link PeerVariants}'s: {@code plain}, {@code bwrap-by-hand}, {@code bwrap-equivalent},
 * {@code firejail}, {@code srt} and the executor on every rung the probe verifies here,
 * cold and with a pool of one warm sandbox (the pools full before each timed run); the
 * workloads are {@link PeerWorkload}'s: {@code /bin/true},
 * {@code python3 -c 'print(sum(range(1000)))'} and
 * {@code convert in.png -resize 50% out.png} on a 64x64 PNG. A missing peer or workload
 * is skipped with a line that says why. Each measurement iteration prints one Markdown
 * table per workload, and the bwrap rung's ratios to bubblewrap by hand and to the same
 * view without the launcher (the 1.1x goal).
 * <p>
 * The peers, on Debian as root (not installed by CI: benchmarks do not run there):
 * {@code apt-get install bubblewrap firejail imagemagick python3 ripgrep socat} and
 * {@code npm install -g @anthropic-ai/sandbox-runtime@0.0.83} ({@code srt}, which needs
 * {@code rg} and {@code socat}). Run it alone, on a quiet machine:
 * {@code java -cp cave-sandbox-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main PeersBenchmark -f 1 -wi 1 -i 1}
 * ({@code -p rounds=3} for a smoke run that shows it works, not for figures). The warm
 * executors beside {@code plain} alone (issue 30's goal of 1.2x):
 * {@code -p variants=executor-bwrap-warm+executor-seccomp-warm -p rounds=true=300+python=50+convert=30};
 * with every variant in the rounds, what the variant before leaves to finish (a cold
 * execution's release of its directories and command user, srt's exit) falls in part in
 * the next run's time, which weighs on the short warm runs most.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PeersBenchmark {

	/**
	 * The rounds of each workload: {@code name=N} pairs separated by commas (by {@code +}
	 * on JMH's command line, which splits a parameter at commas), or one number for every
	 * workload.
	 */
	@Param("true=150,python=50,convert=30")
	public String rounds;

	/**
	 * The variants timed, by name separated by {@code +} (JMH splits a parameter at
	 * commas), or {@code all}; {@code plain} is always timed (the ratios' base).
	 */
	@Param("all")
	public String variants;

	private final Random random = new Random(30);

	private Path root;

	private List<PeerWorkload> workloads;

	private List<PeerVariants.Variant> timed;

	@Setup
	public void setUp() throws Exception {
		this.root = Files.createTempDirectory("cave-sandbox-peers-").toRealPath();
		this.workloads = PeerWorkload.available();
		this.timed = PeerVariants.available(this.workloads, this.root);
		if (!this.variants.equals("all")) {
			List<String> names = List.of(("plain+" + this.variants).split("\\+"));
			this.timed.stream()
				.filter((variant) -> !names.contains(variant.name()))
				.forEach(PeerVariants.Variant::close);
			this.timed = this.timed.stream().filter((variant) -> names.contains(variant.name())).toList();
		}
		System.out.println("# peers: variants " + this.timed.stream().map(PeerVariants.Variant::name).toList());
	}

	@Benchmark
	public double peers() throws Exception {
		double plainTrue = 0;
		for (PeerWorkload workload : this.workloads) {
			int count = roundsOf(workload.name());
			Map<String, long[]> times = new LinkedHashMap<>();
			this.timed.forEach((variant) -> times.put(variant.name(), new long[count]));
			List<PeerVariants.Variant> order = new ArrayList<>(this.timed);
			for (int i = 0; i < count; i++) {
				Collections.shuffle(order, this.random);
				for (PeerVariants.Variant variant : order) {
					PeerVariants.settle(this.timed);
					long start = System.nanoTime();
					variant.run(workload);
					times.get(variant.name())[i] = System.nanoTime() - start;
				}
			}
			report(workload, count, times);
			if (workload.name().equals("true")) {
				plainTrue = Rounds.median(times.get("plain")) / 1e6;
			}
		}
		return plainTrue;
	}

	/** The rounds of a workload, from {@link #rounds}. */
	int roundsOf(String workload) {
		if (this.rounds.matches("\\d+")) {
			return Integer.parseInt(this.rounds);
		}
		for (String entry : this.rounds.split("[,+]")) {
			String[] pair = entry.trim().split("=");
			if (pair.length == 2 && pair[0].equals(workload)) {
				return Integer.parseInt(pair[1]);
			}
		}
		throw new IllegalArgumentException("rounds " + this.rounds + " names no count for the workload " + workload
				+ "; give name=N pairs (true, python, convert) separated by + or one number");
	}

	private static void report(PeerWorkload workload, int count, Map<String, long[]> times) {
		long[] plain = times.get("plain");
		System.out.println();
		System.out.printf("# peers: %s (%s), %d rounds%n", workload.name(), String.join(" ", workload.argv()), count);
		System.out.println("| variant | median ms | x plain (median of per-round ratios) |");
		System.out.println("| --- | ---: | ---: |");
		times.forEach((variant, values) -> System.out.printf("| %s | %.2f | %.2f |%n", variant,
				Rounds.median(values) / 1e6, Rounds.medianRatio(values, plain)));
		long[] rung = times.get("executor-bwrap");
		for (String peer : List.of("bwrap-by-hand", "bwrap-equivalent")) {
			if (rung != null && times.containsKey(peer)) {
				System.out.printf("# peers: %s executor-bwrap over %s: %.2f (median of per-round ratios)%n",
						workload.name(), peer, Rounds.medianRatio(rung, times.get(peer)));
			}
		}
	}

	@TearDown
	public void tearDown() throws IOException {
		this.timed.forEach(PeerVariants.Variant::close);
		DirectoryTrees.delete(this.root);
	}

}
