package dev.cavesandbox.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.WarmPoolSettings;
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
 * The pool of warm sandboxes by size (issue 30: its default, and "warm sandboxes must not
 * cost throughput"): one executor per size of {@link #sizes} on one rung ({@code 0} is
 * the cold path), each timed in phases of {@link #phaseMillis} in which {@code threads}
 * callers run {@code /bin/true} back to back, in an order rotated every cycle, within one
 * fork, so that a change of load weighs on every size alike. Before each phase every pool
 * is full and idle. Per size, for 8 callers and for 1: the median rate of its phases
 * (executions/s), that over the cold path's of the same cycle (median of per-cycle
 * ratios), and the share of executions that took a warm sandbox. One caller back to back
 * is the case where the pool's refill competes with the next execution; 8 callers, where
 * the pool is emptied at once and preparation runs beside the commands.
 * <p>
 * {@code java -cp cave-sandbox-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main WarmPoolBenchmark -f 1 -wi 0 -i 1}
 * (about 2 minutes per rung with the defaults; alone, on a quiet machine).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class WarmPoolBenchmark {

	private static final List<Integer> CALLERS = List.of(8, 1);

	@Param({ "bwrap", "seccomp" })
	public String mechanism;

	/** The pool sizes, separated by commas; {@code 0} (the cold path) must come first. */
	@Param("0,1,2,4")
	public String sizes;

	@Param("5")
	public int cycles;

	@Param("2000")
	public int phaseMillis;

	private final ExecutionRequest request = ExecutionRequest.of("/bin/true");

	private final List<IsolatedExecutor> executors = new ArrayList<>();

	private List<Integer> sizeList;

	private ExecutorService threads;

	@Setup
	public void setUp() {
		BenchmarkMechanism resolved = BenchmarkMechanism.resolve(this.mechanism);
		this.sizeList = Arrays.stream(this.sizes.split(",")).map(String::trim).map(Integer::valueOf).toList();
		if (this.sizeList.get(0) != 0) {
			throw new IllegalArgumentException("sizes must start with 0 (the cold path), but was " + this.sizes);
		}
		for (int size : this.sizeList) {
			WarmPoolSettings warm = (size == 0) ? WarmPoolSettings.OFF
					: new WarmPoolSettings(size, Duration.ofSeconds(WarmPoolSettings.DEFAULT_MAX_AGE_SECONDS));
			this.executors.add(resolved.executor(resolved.settings(warm)));
		}
		this.threads = Executors.newFixedThreadPool(CALLERS.get(0));
	}

	@Benchmark
	public double phases() throws Exception {
		double coldEight = 0;
		for (int callers : CALLERS) {
			int count = this.sizeList.size();
			double[][] rates = new double[count][this.cycles];
			double[][] warmShares = new double[count][this.cycles];
			for (int cycle = 0; cycle < this.cycles; cycle++) {
				for (int step = 0; step < count; step++) {
					int index = (cycle + step) % count;
					settle();
					ThroughputPhase phase = phase(this.executors.get(index), callers);
					rates[index][cycle] = phase.perSecond();
					warmShares[index][cycle] = phase.share();
				}
			}
			report(callers, rates, warmShares);
			if (callers == 8) {
				coldEight = median(rates[0]);
			}
		}
		return coldEight;
	}

	private void report(int callers, double[][] rates, double[][] warmShares) {
		System.out.println();
		System.out.printf("# warm pool: %s, %d caller(s), /bin/true, %d cycles of %d ms%n", this.mechanism, callers,
				this.cycles, this.phaseMillis);
		System.out.println("| warm.size | executions/s (median) | x cold (median of per-cycle ratios) | warm share |");
		System.out.println("| ---: | ---: | ---: | ---: |");
		for (int i = 0; i < rates.length; i++) {
			double[] ratios = new double[this.cycles];
			for (int cycle = 0; cycle < this.cycles; cycle++) {
				ratios[cycle] = rates[i][cycle] / rates[0][cycle];
			}
			System.out.printf("| %d | %.1f | %.2f | %.2f |%n", this.sizeList.get(i), median(rates[i]), median(ratios),
					median(warmShares[i]));
		}
	}

	/** Wait until every pool is full, at most 10 s each. */
	private void settle() throws InterruptedException {
		for (IsolatedExecutor executor : this.executors) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (executor.warmPool().ready() < executor.warmPool().size()) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("a pool is not full after 10 s: " + executor.warmPool());
				}
				Thread.sleep(1);
			}
		}
	}

	/** Run one phase: its rate (executions/s) and the share that ran warm. */
	private ThroughputPhase phase(IsolatedExecutor executor, int callers) throws Exception {
		return ThroughputPhase.run(this.threads, callers, this.phaseMillis, () -> {
			ExecutionResult result = executor.execute(this.request);
			if (!result.succeeded()) {
				throw new IllegalStateException(result + ": " + result.stderrText());
			}
			return result.warm();
		});
	}

	private static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2];
	}

	@TearDown
	public void tearDown() {
		this.executors.forEach(IsolatedExecutor::close);
		this.threads.shutdownNow();
	}

}
