package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.process.CommandResolver;
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
 * The steps that {@code ProcessIsolatedExecutor} and {@code ProcessRunner} add around a
 * spawn, each alone and without a spawn, so that the spawn-level differences in
 * {@link SpawnBenchmark} can be attributed. Directory removal and the command check call
 * the executor's own code through the core's public building blocks
 * ({@link DirectoryTrees}, {@link CommandResolver}); the thread hand-offs and the
 * environment are copies of the production code at the time of writing (named in each
 * method): keep them in step when it changes.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ExecutorStepsBenchmark {

	private final SandboxSettings settings = SandboxSettings.defaults();

	private ExecutorService launcher;

	private ExecutorService io;

	private final Semaphore slots = new Semaphore(16, true);

	private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	private final Path bin = Path.of("/bin/true");

	@Setup
	public void setUp() {
		this.launcher = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
		this.io = Executors.newCachedThreadPool();
	}

	@TearDown
	public void tearDown() {
		this.launcher.shutdownNow();
		this.io.shutdownNow();
	}

	/**
	 * PrivateDirectories.create() and DirectoryTrees.delete(): one empty directory, in
	 * {@code java.io.tmpdir} (the default work directory) or on the tmpfs
	 * {@code /dev/shm}.
	 */
	@Benchmark
	public Path privateDirectory(WorkDirectory workDirectory) throws IOException {
		Path directory = Files.createTempDirectory(workDirectory.path, "cave-sandbox-");
		DirectoryTrees.delete(directory);
		return directory;
	}

	/**
	 * What reusing an emptied private directory would cost instead, per execution in the
	 * steady state: check that it is empty and reset its mode (no mkdir, no rmdir, no
	 * block freed).
	 */
	@Benchmark
	public Path privateDirectoryReused(WorkDirectory workDirectory) throws IOException {
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(workDirectory.reusable)) {
			if (entries.iterator().hasNext()) {
				throw new IllegalStateException(workDirectory.reusable + " is not empty");
			}
		}
		return Files.setPosixFilePermissions(workDirectory.reusable, OWNER_ONLY);
	}

	/** Where the private directory steps work. */
	@State(Scope.Benchmark)
	public static class WorkDirectory {

		@Param({ "java.io.tmpdir", "/dev/shm" })
		public String workDirectory;

		Path path;

		Path reusable;

		@Setup
		public void setUp() throws IOException {
			this.path = Path
				.of(this.workDirectory.startsWith("/") ? this.workDirectory : System.getProperty(this.workDirectory));
			this.reusable = Files.createTempDirectory(this.path, "cave-sandbox-reused-");
		}

		@TearDown
		public void tearDown() throws IOException {
			Files.deleteIfExists(this.reusable);
		}

	}

	/**
	 * SpawnThreads.start(): the spawn handed to a spawn thread and awaited (a no-op
	 * here).
	 */
	@Benchmark
	public Object launcherHandoff() throws InterruptedException, ExecutionException {
		return this.launcher.submit(() -> this).get();
	}

	/**
	 * ChildStreams (its constructor and finish()): two drains submitted to the io pool
	 * and awaited (no-ops here).
	 */
	@Benchmark
	public Object drainHandoff() throws InterruptedException, ExecutionException {
		Future<?> stdout = this.io.submit(() -> this);
		Future<?> stderr = this.io.submit(() -> this);
		stdout.get();
		return stderr.get();
	}

	/**
	 * ChildEnvironment.of() with the default settings (the four baseline variables,
	 * nothing passed) and ProcessRunner.run()'s ProcessBuilder set-up, which copies the
	 * JVM's whole environment before clearing it.
	 */
	@Benchmark
	public Map<String, String> environment() {
		String directory = this.settings.workDirectory().toString();
		Map<String, String> environment = new LinkedHashMap<>(Map.of("PATH", SandboxSettings.BASELINE_PATH, "HOME",
				directory, "TMPDIR", directory, "LANG", "C.UTF-8"));
		environment.putAll(this.settings.env().set());
		ProcessBuilder builder = new ProcessBuilder(List.of("/bin/true"));
		builder.environment().clear();
		builder.environment().putAll(environment);
		return builder.environment();
	}

	/** CommandResolver.check() for an absolute argv[0]. */
	@Benchmark
	public Path commandCheck() {
		CommandResolver.check(this.bin.toString(), this.settings.workDirectory(), SandboxSettings.BASELINE_PATH);
		return this.bin;
	}

	/** ProcessIsolatedExecutor.acquireSlot(): the fair semaphore, uncontended. */
	@Benchmark
	public boolean slot() throws InterruptedException {
		boolean acquired = this.slots.tryAcquire(30, TimeUnit.SECONDS);
		this.slots.release();
		return acquired;
	}

}
