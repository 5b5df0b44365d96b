package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
 * The mechanisms of the ladder side by side in one fork: in each round, in an order
 * shuffled anew (a fixed seed), a plain {@link ProcessBuilder} spawn of
 * {@code /bin/true}, the raw command line of each mechanism that the probe verifies here
 * (launcher included: what the executor spawns), and the seccomp mechanism's executor.
 * The medians of one measurement iteration go to JMH as auxiliary counters (µs), with the
 * seccomp mechanism's ratios to the plain spawn: the median of each round's ratio, so
 * that a change of load weighs on both sides of a ratio alike.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class LadderBenchmark {

	private static final List<String> MECHANISMS = List.of("bwrap", "unshare", "namespaces", "seccomp");

	@Param("200")
	public int rounds;

	private final Map<String, List<String>> commandLines = new LinkedHashMap<>();

	private IsolatedExecutor seccompExecutor;

	private Path directory;

	private final ExecutionRequest request = ExecutionRequest.of("/bin/true");

	private final Random random = new Random(11);

	@Setup
	public void setUp() throws IOException {
		this.directory = Files.createTempDirectory("cave-sandbox-ladder-").toRealPath();
		// Passable by others: for a root JVM the seccomp mechanism's raw line runs the
		// command as the command user (65534), which must enter the directory (the
		// executor grants its own working directories; the raw line gets none).
		Files.setPosixFilePermissions(this.directory, PosixFilePermissions.fromString("rwx--x--x"));
		this.commandLines.put("plain", List.of("/bin/true"));
		for (String choice : MECHANISMS) {
			try {
				BenchmarkMechanism mechanism = BenchmarkMechanism.resolve(choice);
				this.commandLines.put(choice, mechanism.commandLine(this.directory, "/bin/true"));
				if (choice.equals("seccomp")) {
					this.seccompExecutor = mechanism.executor(mechanism.settings());
				}
			}
			catch (IllegalStateException ex) {
				System.out.println("# skipping mechanism " + choice + ": " + ex.getMessage());
			}
		}
		if (this.seccompExecutor == null) {
			throw new IllegalStateException("the seccomp mechanism is not available here: nothing to compare");
		}
	}

	@Benchmark
	public double ladder(Medians medians) throws Exception {
		List<String> variants = new ArrayList<>(this.commandLines.keySet());
		variants.add("seccomp-executor");
		Map<String, long[]> times = new LinkedHashMap<>();
		variants.forEach((variant) -> times.put(variant, new long[this.rounds]));
		for (int i = 0; i < this.rounds; i++) {
			Collections.shuffle(variants, this.random);
			for (String variant : variants) {
				long start = System.nanoTime();
				if (variant.equals("seccomp-executor")) {
					check(this.seccompExecutor.execute(this.request));
				}
				else {
					BenchmarkMechanism.Raw.run(this.commandLines.get(variant), this.directory);
				}
				times.get(variant)[i] = System.nanoTime() - start;
			}
		}
		medians.plainUs = Rounds.median(times.get("plain")) / 1000.0;
		medians.seccompRawUs = Rounds.median(times.get("seccomp")) / 1000.0;
		medians.seccompExecutorUs = Rounds.median(times.get("seccomp-executor")) / 1000.0;
		medians.namespacesRawUs = times.containsKey("namespaces") ? Rounds.median(times.get("namespaces")) / 1000.0 : 0;
		medians.unshareRawUs = times.containsKey("unshare") ? Rounds.median(times.get("unshare")) / 1000.0 : 0;
		medians.bwrapRawUs = times.containsKey("bwrap") ? Rounds.median(times.get("bwrap")) / 1000.0 : 0;
		medians.seccompRawOverPlain = Rounds.medianRatio(times.get("seccomp"), times.get("plain"));
		medians.seccompExecutorOverPlain = Rounds.medianRatio(times.get("seccomp-executor"), times.get("plain"));
		return medians.seccompRawOverPlain;
	}

	private static void check(ExecutionResult result) {
		if (!result.succeeded()) {
			throw new IllegalStateException(result + ": " + result.stderrText());
		}
	}

	@TearDown
	public void tearDown() throws IOException {
		this.seccompExecutor.close();
		Files.deleteIfExists(this.directory);
	}

	/**
	 * The medians of one measurement iteration, in µs, and the seccomp mechanism's
	 * ratios.
	 */
	@State(Scope.Thread)
	@AuxCounters(AuxCounters.Type.EVENTS)
	public static class Medians {

		public double plainUs;

		public double seccompRawUs;

		public double seccompExecutorUs;

		public double namespacesRawUs;

		public double unshareRawUs;

		public double bwrapRawUs;

		/** The median of each round's seccomp raw line over its plain spawn. */
		public double seccompRawOverPlain;

		/** The median of each round's seccomp executor over its plain spawn. */
		public double seccompExecutorOverPlain;

	}

}
