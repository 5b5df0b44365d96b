package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
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
 * The executor and its raw command line measured in pairs, one right after the other,
 * many times over, so that a change of load on a shared machine weighs on both alike; the
 * medians go to JMH as auxiliary counters (one value per measurement iteration, in µs).
 * Each round runs, in an order shuffled anew for each round (a fixed seed), so that
 * whatever a variant leaves the machine to finish after it (for example a directory
 * removal's discard) weighs on every variant alike rather than always on the one after
 * it: the raw command line; the same without the native launcher
 * ({@code raw-no-launcher},
 * {@link BenchmarkMechanism#commandLineWithoutLauncher(Path, String...)}; skipped for a
 * mechanism without one, {@link BenchmarkMechanism#hasLineWithoutLauncher()}, whose
 * {@code rawNoLauncherUs} and {@code launcherAddedUs} are then NaN); the executor; the
 * executor with a shared working directory; the raw command line in a fresh private
 * directory, created and removed the way the executor does it, with each of those two
 * steps timed; and the raw command line with the executor's thread hand-offs, environment
 * and working directory ({@link ThreadedSpawn}).
 * <p>
 * {@link SpawnBenchmark} gives the JMH latency and throughput figures; this one tells
 * small differences apart where those figures, taken minutes apart in separate forks,
 * cannot.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PairedSpawnBenchmark {

	@Param({ "none", "unshare", "bwrap" })
	public String mechanism;

	@Param("200")
	public int pairs;

	private BenchmarkMechanism resolved;

	private List<String> commandLine;

	/** {@code null} where the mechanism has none. */
	private List<String> commandLineWithoutLauncher;

	private IsolatedExecutor executor;

	private final ExecutionRequest request = ExecutionRequest.of("/bin/true");

	private ExecutionRequest sharedDirectoryRequest;

	private Path sharedDirectory;

	private final Path workDirectory = SandboxSettings.defaults().workDirectory();

	private final ThreadedSpawn threaded = new ThreadedSpawn();

	private Map<String, String> environment;

	private final Random random = new Random(10);

	@Setup
	public void setUp() throws IOException, InterruptedException {
		this.resolved = BenchmarkMechanism.resolve(this.mechanism);
		this.executor = this.resolved.executor(this.resolved.settings());
		this.sharedDirectory = Files.createTempDirectory("cave-sandbox-benchmark-");
		this.commandLine = this.resolved.commandLine(this.sharedDirectory, "/bin/true");
		if (this.resolved.hasLineWithoutLauncher()) {
			this.commandLineWithoutLauncher = this.resolved.commandLineWithoutLauncher(this.sharedDirectory,
					"/bin/true");
			this.resolved.verifyWithoutLauncher(this.sharedDirectory);
		}
		this.sharedDirectoryRequest = ExecutionRequest.builder("/bin/true")
			.workingDirectory(this.sharedDirectory)
			.build();
		String directory = this.sharedDirectory.toString();
		this.environment = Map.of("PATH", SandboxSettings.BASELINE_PATH, "HOME", directory, "TMPDIR", directory, "LANG",
				"C.UTF-8");
	}

	@Benchmark
	public double pairs(Medians medians) throws Exception {
		long[][] times = new long[8][this.pairs];
		List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5));
		if (this.commandLineWithoutLauncher == null) {
			order.remove(Integer.valueOf(4));
		}
		for (int i = 0; i < this.pairs; i++) {
			Collections.shuffle(order, this.random);
			for (int variant : order) {
				switch (variant) {
					case 0 ->
						times[0][i] = time(() -> BenchmarkMechanism.Raw.run(this.commandLine, this.sharedDirectory));
					case 1 -> times[1][i] = time(() -> check(this.executor.execute(this.request)));
					case 2 -> times[2][i] = time(() -> check(this.executor.execute(this.sharedDirectoryRequest)));
					case 3 -> times[6][i] = time(() -> this.threaded.run(threadedBuilder(), true, true));
					case 4 -> times[7][i] = time(
							() -> BenchmarkMechanism.Raw.run(this.commandLineWithoutLauncher, this.sharedDirectory));
					default -> rawInPrivateDirectory(times, i);
				}
			}
		}
		medians.rawUs = median(times[0]);
		medians.rawNoLauncherUs = Double.NaN;
		medians.launcherAddedUs = Double.NaN;
		if (this.commandLineWithoutLauncher != null) {
			medians.rawNoLauncherUs = median(times[7]);
			long[] added = new long[this.pairs];
			for (int i = 0; i < this.pairs; i++) {
				added[i] = times[0][i] - times[7][i];
			}
			medians.launcherAddedUs = median(added);
		}
		medians.rawThreadsUs = median(times[6]);
		medians.executorUs = median(times[1]);
		medians.executorSharedDirUs = median(times[2]);
		medians.rawInPrivateDirUs = median(times[3]);
		medians.createDirUs = median(times[4]);
		medians.deleteDirUs = median(times[5]);
		medians.meanCreateDirUs = Arrays.stream(times[4]).average().orElse(0) / 1000.0;
		medians.meanDeleteDirUs = Arrays.stream(times[5]).average().orElse(0) / 1000.0;
		return medians.executorUs / medians.rawUs;
	}

	private ProcessBuilder threadedBuilder() {
		ProcessBuilder builder = new ProcessBuilder(this.commandLine).directory(this.sharedDirectory.toFile());
		builder.environment().clear();
		builder.environment().putAll(this.environment);
		return builder;
	}

	private void rawInPrivateDirectory(long[][] times, int i) throws Exception {
		long start = System.nanoTime();
		Path directory = Files.createTempDirectory(this.workDirectory, "cave-sandbox-");
		long created = System.nanoTime();
		// The mechanism's command line names the working directory (bubblewrap binds it).
		Process process = new ProcessBuilder(this.resolved.commandLine(directory, "/bin/true"))
			.directory(directory.toFile())
			.start();
		process.getOutputStream().close();
		process.getInputStream().readAllBytes();
		BenchmarkMechanism.Raw.exited(process, process.getErrorStream().readAllBytes());
		long ran = System.nanoTime();
		DirectoryTrees.delete(directory);
		long deleted = System.nanoTime();
		times[3][i] = ran - created;
		times[4][i] = created - start;
		times[5][i] = deleted - ran;
	}

	private static int check(ExecutionResult result) {
		if (!result.succeeded()) {
			throw new IllegalStateException(result + ": " + result.stderrText());
		}
		return result.exitCode();
	}

	private static long time(Step step) throws Exception {
		long start = System.nanoTime();
		step.run();
		return System.nanoTime() - start;
	}

	private static double median(long[] nanos) {
		long[] sorted = nanos.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2] / 1000.0;
	}

	@TearDown
	public void tearDown() throws IOException {
		this.executor.close();
		this.threaded.close();
		Files.deleteIfExists(this.sharedDirectory);
	}

	@FunctionalInterface
	private interface Step {

		Object run() throws Exception;

	}

	/**
	 * The medians of one measurement iteration, in µs.
	 */
	@State(Scope.Thread)
	@AuxCounters(AuxCounters.Type.EVENTS)
	public static class Medians {

		public double rawUs;

		/** NaN where the mechanism has no command line without the launcher. */
		public double rawNoLauncherUs;

		/**
		 * The median of each round's raw minus raw-no-launcher; NaN where the mechanism
		 * has no command line without the launcher.
		 */
		public double launcherAddedUs;

		public double rawThreadsUs;

		public double executorUs;

		public double executorSharedDirUs;

		public double rawInPrivateDirUs;

		public double createDirUs;

		public double deleteDirUs;

		public double meanCreateDirUs;

		public double meanDeleteDirUs;

	}

}
