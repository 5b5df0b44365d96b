package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
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
import dev.cavesandbox.internal.launcher.CommandUsers;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.process.CommandResolver;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
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
 * {@link SpawnBenchmark} can be attributed. Directory removal, the command check, the
 * command user, the private directories and the working directory's grant call the
 * executor's own code through the core's public building blocks ({@link DirectoryTrees},
 * {@link CommandResolver}, {@link CommandUsers}, {@link PrivateDirectories},
 * {@link WorkingDirectoryGrant}); the thread hand-offs, the environment and the
 * shared-memory directory are copies of the production code at the time of writing (named
 * in each method): keep them in step when it changes.
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

	/**
	 * CommandUsers.acquire() and release() as a root JVM's seccomp executions call them:
	 * what the caller pays for its command user. The check of the released uid is left to
	 * the cleaner thread, which makes it between two executions (here: between calls,
	 * unmeasured, once per 1024 calls), so acquire() takes a uid checked already. Uids
	 * apart from the default range.
	 */
	@Benchmark
	public long commandUserAcquire(StepsCommandUsers pool) {
		long uid = pool.checkedElsewhere.acquire();
		pool.checkedElsewhere.release(uid);
		return uid;
	}

	/**
	 * The same with the check of the released uid made in place: one scan of every
	 * {@code /proc/PID/status}, which the cleaner thread makes per release (and which
	 * acquire() made on the caller's thread before the check moved to release time).
	 */
	@Benchmark
	public long commandUserCheck(StepsCommandUsers pool) {
		long uid = pool.checkedInPlace.acquire();
		pool.checkedInPlace.release(uid);
		return uid;
	}

	/**
	 * SharedMemoryDirectory.prepare() on the mechanisms without a mount namespace (a
	 * copy, the class is the executor's own): the preload library's check, a second
	 * private directory, its real path and, for a root JVM, its owner changed to the
	 * command user; then its release (renewed on the cleaner thread).
	 */
	@Benchmark
	public Path sharedMemoryDirectory(StepsDirectories directories) throws Exception {
		Path library = SharedMemoryPreload.shared().resolve(directories.workDirectory);
		Path created = directories.directories.create();
		try {
			Path directory = created.toRealPath();
			if (directories.root) {
				Files.getFileAttributeView(directory, PosixFileAttributeView.class)
					.setOwner(FileSystems.getDefault()
						.getUserPrincipalLookupService()
						.lookupPrincipalByName(String.valueOf(StepsCommandUsers.RANGE.first())));
			}
			return library;
		}
		finally {
			directories.directories.release(created);
		}
	}

	/**
	 * WorkingDirectoryGrant (LaunchPreparation.grantToCommandUser): the ancestors' check,
	 * the grant of a private working directory's group to the command user's gid (65534;
	 * a JVM of another user: its own gid, the same calls) and its take-back.
	 */
	@Benchmark
	public Object workingDirectoryGrant(StepsDirectories directories) throws IOException {
		Path unpassable = WorkingDirectoryGrant.unpassableAncestor(directories.granted, directories.gid);
		try (WorkingDirectoryGrant grant = WorkingDirectoryGrant.grant(directories.granted, directories.gid)) {
			return (unpassable != null) ? unpassable : grant;
		}
	}

	/** ProcessIsolatedExecutor.acquireSlot(): the fair semaphore, uncontended. */
	@Benchmark
	public boolean slot() throws InterruptedException {
		boolean acquired = this.slots.tryAcquire(30, TimeUnit.SECONDS);
		this.slots.release();
		return acquired;
	}

}
