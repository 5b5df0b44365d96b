package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.SandboxSettings;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Spawning {@code /bin/true} and waiting for it, for each mechanism and each path:
 * <ul>
 * <li>{@code raw}: {@link ProcessBuilder} on the mechanism's exact command line (for {@code none}:
 * plain {@code /bin/true}). The floor.</li>
 * <li>{@code executor}: {@link IsolatedExecutor#execute(ExecutionRequest)} with every value at its
 * default (a private working directory per execution).</li>
 * <li>{@code executor-shared-dir}: the same with a fixed working directory, so the difference to
 * {@code executor} is the private directory's creation and removal.</li>
 * <li>{@code executor-tmpfs-workdir}: the executor with its work directory
 * ({@code cave.sandbox.work-directory}) on the tmpfs {@code /dev/shm}, so the difference to
 * {@code executor} is what the file system of {@code java.io.tmpdir} costs.</li>
 * <li>{@code raw-threads}: the raw command line spawned with the executor's thread structure and
 * nothing else (spawn handed to a fixed launcher pool, both streams drained on a cached pool), so
 * the difference to {@code raw} is the cost of the thread hand-offs.</li>
 * </ul>
 * The run mode (latency or throughput) and the thread count are set by {@link IsolationCostRun}.
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

	private ExecutorService launcher;

	private ExecutorService io;

	@Setup
	public void setUp() throws IOException {
		BenchmarkMechanism resolved = BenchmarkMechanism.resolve(this.mechanism);
		this.commandLine = resolved.commandLine("/bin/true");
		switch (this.path) {
			case "raw":
				break;
			case "raw-threads":
				// As in ProcessRunner: launchers are long-lived platform threads, drains a cached pool.
				this.launcher = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
				this.io = Executors.newCachedThreadPool();
				break;
			case "executor":
				this.executor = resolved.executor().apply(SandboxSettings.defaults());
				this.request = ExecutionRequest.of("/bin/true");
				break;
			case "executor-tmpfs-workdir":
				this.executor = resolved.executor()
					.apply(SandboxSettings.builder().workDirectory(Path.of("/dev/shm")).build());
				this.request = ExecutionRequest.of("/bin/true");
				break;
			case "executor-shared-dir":
				this.executor = resolved.executor().apply(SandboxSettings.defaults());
				this.sharedDirectory = Files.createTempDirectory("cave-sandbox-benchmark-");
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
		if (this.launcher != null) {
			return runWithThreads();
		}
		return BenchmarkMechanism.Raw.run(this.commandLine);
	}

	private int runWithThreads() throws IOException, InterruptedException, ExecutionException {
		ProcessBuilder builder = new ProcessBuilder(this.commandLine);
		Process process = this.launcher.submit(builder::start).get();
		Future<byte[]> stdout = this.io.submit(() -> readAll(process.getInputStream()));
		Future<byte[]> stderr = this.io.submit(() -> readAll(process.getErrorStream()));
		process.getOutputStream().close();
		process.waitFor(30, TimeUnit.SECONDS);
		stdout.get();
		return BenchmarkMechanism.Raw.exited(process, stderr.get());
	}

	private static byte[] readAll(InputStream in) throws IOException {
		try (in) {
			return in.readAllBytes();
		}
	}

	@TearDown
	public void tearDown() throws IOException {
		if (this.executor != null) {
			this.executor.close();
		}
		if (this.launcher != null) {
			this.launcher.shutdownNow();
			this.io.shutdownNow();
		}
		if (this.sharedDirectory != null) {
			Files.deleteIfExists(this.sharedDirectory);
		}
	}

}
