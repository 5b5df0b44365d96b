package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Spawning {@code /bin/true} and waiting for it, for each mechanism and each path:
 * <ul>
 * <li>{@code raw}: {@link ProcessBuilder} on the command line that the mechanism builds
 * for {@code /bin/true} in a fixed working directory, exactly what the executor spawns
 * (for {@code none}: plain {@code /bin/true}). The floor.</li>
 * <li>{@code raw-no-launcher}: the same command line without the native launcher
 * ({@link BenchmarkMechanism#commandLineWithoutLauncher(Path, String...)}), so the
 * difference to {@code raw} is what the launcher adds (for {@code none}: the same as
 * {@code raw}). Only for a mechanism that has such a command line
 * ({@link BenchmarkMechanism#hasLineWithoutLauncher()}: {@code none} and {@code bwrap});
 * for {@code unshare}, whose mounts the launcher makes, the set-up fails saying so, and
 * {@link MeasurementPlan} leaves this path out.</li>
 * <li>{@code executor}: {@link IsolatedExecutor#execute(ExecutionRequest)} with every
 * value at its default (a private working directory per execution).</li>
 * <li>{@code executor-shared-dir}: the same with a fixed working directory, so the
 * difference to {@code executor} is the private directory's creation and removal.</li>
 * <li>{@code executor-tmpfs-workdir}: the executor with its work directory
 * ({@code cave.sandbox.work-directory}) on the tmpfs {@code /dev/shm}, so the difference
 * to {@code executor} is what the file system of {@code java.io.tmpdir} costs.</li>
 * <li>{@code raw-threads}: the raw command line spawned with the executor's thread
 * structure and nothing else (spawn handed to a fixed launcher pool, both streams drained
 * on a cached pool), so the difference to {@code raw} is the cost of the thread
 * hand-offs.</li>
 * <li>{@code raw-launcher-thread} and {@code raw-drain-threads}: each of those two
 * hand-offs alone (not in the default set; run them with JMH's own command line, see
 * BENCHMARKS.md).</li>
 * </ul>
 * The run mode (latency or throughput) and the thread count are set by
 * {@link IsolationCostRun}.
 */
@State(Scope.Benchmark)
public class SpawnBenchmark {

	@Param({ "none", "unshare", "bwrap" })
	public String mechanism;

	@Param({ "raw", "executor" })
	public String path;

	private List<String> commandLine;

	private IsolatedExecutor executor;

	private ExecutionRequest request;

	private Path sharedDirectory;

	private ThreadedSpawn threaded;

	@Setup
	public void setUp() throws IOException, InterruptedException {
		BenchmarkMechanism resolved = BenchmarkMechanism.resolve(this.mechanism);
		this.sharedDirectory = Files.createTempDirectory("cave-sandbox-benchmark-");
		this.commandLine = resolved.commandLine(this.sharedDirectory, "/bin/true");
		switch (this.path) {
			case "raw":
				break;
			case "raw-no-launcher":
				resolved.verifyWithoutLauncher(this.sharedDirectory);
				this.commandLine = resolved.commandLineWithoutLauncher(this.sharedDirectory, "/bin/true");
				break;
			case "raw-threads", "raw-launcher-thread", "raw-drain-threads":
				this.threaded = new ThreadedSpawn();
				break;
			case "executor":
				this.executor = resolved.executor(resolved.settings());
				this.request = ExecutionRequest.of("/bin/true");
				break;
			case "executor-tmpfs-workdir":
				this.executor = resolved.executor(resolved.settings(Path.of("/dev/shm")));
				this.request = ExecutionRequest.of("/bin/true");
				break;
			case "executor-shared-dir":
				this.executor = resolved.executor(resolved.settings());
				this.request = ExecutionRequest.builder("/bin/true").workingDirectory(this.sharedDirectory).build();
				break;
			default:
				throw new IllegalArgumentException("unknown path " + this.path);
		}
	}

	@Benchmark
	public int spawnTrue() throws Exception {
		if (this.executor != null) {
			ExecutionResult result = this.executor.execute(this.request);
			if (!result.succeeded()) {
				throw new IllegalStateException(result + ": " + result.stderrText());
			}
			return result.exitCode();
		}
		if (this.threaded != null) {
			return this.threaded.run(new ProcessBuilder(this.commandLine).directory(this.sharedDirectory.toFile()),
					!this.path.equals("raw-drain-threads"), !this.path.equals("raw-launcher-thread"));
		}
		return BenchmarkMechanism.Raw.run(this.commandLine, this.sharedDirectory);
	}

	@TearDown
	public void tearDown() throws IOException {
		if (this.executor != null) {
			this.executor.close();
		}
		if (this.threaded != null) {
			this.threaded.close();
		}
		Files.deleteIfExists(this.sharedDirectory);
	}

}
