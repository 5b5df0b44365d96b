package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.cavesandbox.mechanism.SandboxMechanism;

/**
 * The {@link IsolatedExecutor} that spawns real processes: isolated behind the command line that
 * the {@link NetworkIsolationProbe} verified, or unisolated in fallback mode. Create it with
 * {@link #isolated(SandboxSettings, IsolationCapability)} or
 * {@link #unisolated(SandboxSettings)}.
 * <p>
 * Each execution: waits for one of {@code maxConcurrent} slots; creates a fresh private working
 * directory unless the request names one; builds the environment from the baseline ({@code PATH},
 * {@code HOME} and {@code TMPDIR} set to the working directory, {@code LANG=C.UTF-8}) plus the
 * named parent variables and the set ones, and nothing else; checks that {@code argv[0]} exists and
 * is executable; runs; and removes the private working directory whatever happened.
 */
public final class ProcessIsolatedExecutor implements IsolatedExecutor {

	private static final String PRIVATE_PREFIX = "cave-sandbox-";

	private final SandboxSettings settings;

	private final IsolationCapability capability;

	private final Isolation isolation;

	private final ProcessRunner runner;

	private final Semaphore slots;

	private final ExecutorService async;

	private ProcessIsolatedExecutor(SandboxSettings settings, IsolationCapability capability, Isolation isolation) {
		this.settings = settings;
		this.capability = capability;
		this.isolation = isolation;
		this.runner = new ProcessRunner(settings.killGracePeriod());
		this.slots = new Semaphore(settings.maxConcurrent(), true);
		AtomicInteger count = new AtomicInteger();
		this.async = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 2, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "cave-sandbox-async-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		removeOrphanedPrivateDirectories(settings.workDirectory());
	}

	/**
	 * Create an executor that runs every command behind the verified command line of the given
	 * capability. The mechanism is used as the probe verified it (its binaries, hidden directories
	 * and read-only root); the settings give the defaults of each request, {@code loopback}
	 * included.
	 * @param settings the settings
	 * @param capability a verdict of available isolation
	 * @return the executor
	 * @throws NetworkIsolationUnavailableException if the capability is unavailable
	 */
	public static ProcessIsolatedExecutor isolated(SandboxSettings settings, IsolationCapability capability) {
		if (!capability.available()) {
			throw new NetworkIsolationUnavailableException(capability);
		}
		return new ProcessIsolatedExecutor(settings, capability, new Isolation(capability.mechanism(), true));
	}

	/**
	 * Create an executor that runs every command WITHOUT network isolation (fallback mode). Every
	 * result reports {@link Isolation#NONE}.
	 * @param settings the settings
	 * @return the executor
	 */
	public static ProcessIsolatedExecutor unisolated(SandboxSettings settings) {
		return new ProcessIsolatedExecutor(settings, null, Isolation.NONE);
	}

	@Override
	public Isolation isolation() {
		return this.isolation;
	}

	@Override
	public ExecutionResult execute(ExecutionRequest request) {
		try {
			acquireSlot();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ExecutionCancelledException("interrupted while waiting for a free slot", ex);
		}
		try {
			return executeInSlot(request);
		}
		finally {
			this.slots.release();
		}
	}

	private void acquireSlot() throws InterruptedException {
		Duration wait = this.settings.queueTimeout();
		if (!this.slots.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS)) {
			throw new ConcurrencyLimitExceededException("all " + this.settings.maxConcurrent()
					+ " execution slots stayed busy for " + wait.toMillis() + " ms; raise cave.sandbox.max-concurrent "
					+ "or cave.sandbox.queue-timeout, or submit less work at once");
		}
	}

	private ExecutionResult executeInSlot(ExecutionRequest request) {
		Path directory = request.workingDirectory();
		boolean privateDirectory = (directory == null);
		if (privateDirectory) {
			directory = createPrivateDirectory();
		}
		else if (!Files.isDirectory(directory)) {
			throw new InvalidExecutionRequestException("working directory " + directory
					+ " does not exist or is not a directory; create it first or leave it unset for a private one");
		}
		try {
			Map<String, String> environment = environment(request, directory);
			CommandResolver.check(request.argv().get(0), directory, environment.get("PATH"));
			ProcessRunner.Spec spec = new ProcessRunner.Spec(commandLine(request, directory), directory, environment,
					request.stdin(),
					(request.timeout() != null) ? request.timeout() : this.settings.timeout(),
					(request.maxOutputBytes() != null) ? request.maxOutputBytes() : this.settings.maxOutputBytes(),
					request.stdoutSink(), request.stderrSink(), this.isolation.networkIsolated());
			ProcessRunner.Outcome outcome = this.runner.run(spec);
			return new ExecutionResult(outcome.exitCode(), outcome.stdout(), outcome.stderr(),
					outcome.stdoutTruncated(), outcome.stderrTruncated(), outcome.timedOut(), outcome.wallTime(),
					this.isolation);
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not start " + request.argv().get(0) + ": " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ExecutionCancelledException("the calling thread was interrupted; the process tree was killed",
					ex);
		}
		finally {
			if (privateDirectory) {
				deleteTree(directory);
			}
		}
	}

	/**
	 * Return what is spawned for the request: its argv unisolated, else the command line that the
	 * verified mechanism builds from the argv, the working directory (as a real path, so that the
	 * mechanism binds what the kernel will resolve) and the loopback wish of the request or the
	 * settings.
	 */
	private List<String> commandLine(ExecutionRequest request, Path directory) throws IOException {
		if (this.capability == null) {
			return request.argv();
		}
		SandboxMechanism mechanism = this.capability.sandbox();
		boolean loopback = (request.loopback() != null) ? request.loopback() : this.settings.loopback();
		if (loopback && !this.capability.privateLoopback()) {
			throw new InvalidExecutionRequestException("loopback was requested, but the mechanism " + mechanism.name()
					+ " cannot give a private loopback on this host (" + UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix()
					+ "); leave loopback unset or false");
		}
		return mechanism.commandLine(request.argv(), directory.toRealPath(), loopback);
	}

	private Map<String, String> environment(ExecutionRequest request, Path directory) {
		Map<String, String> environment = new LinkedHashMap<>();
		environment.put("PATH", SandboxSettings.BASELINE_PATH);
		environment.put("HOME", directory.toString());
		environment.put("TMPDIR", directory.toString());
		environment.put("LANG", "C.UTF-8");
		Map<String, String> parent = System.getenv();
		for (String name : this.settings.passEnvironment()) {
			passIfSet(environment, parent, name);
		}
		for (String name : request.passEnvironment()) {
			passIfSet(environment, parent, name);
		}
		environment.putAll(this.settings.environment());
		environment.putAll(request.environment());
		return environment;
	}

	private static void passIfSet(Map<String, String> environment, Map<String, String> parent, String name) {
		String value = parent.get(name);
		if (value != null) {
			environment.put(name, value);
		}
	}

	/**
	 * Remove the private working directories that a JVM which no longer runs left behind: one that
	 * was killed (SIGKILL, OOM killer) never reached its {@code finally}. The directory name carries
	 * the JVM's pid; a directory whose pid is alive (this JVM, another one, or a reused pid) is
	 * kept.
	 */
	static void removeOrphanedPrivateDirectories(Path workDirectory) {
		try (DirectoryStream<Path> directories = Files.newDirectoryStream(workDirectory, PRIVATE_PREFIX + "*")) {
			for (Path directory : directories) {
				String name = directory.getFileName().toString();
				int end = name.indexOf('-', PRIVATE_PREFIX.length());
				if (end < 0) {
					continue;
				}
				try {
					long pid = Long.parseLong(name.substring(PRIVATE_PREFIX.length(), end));
					if (ProcessHandle.of(pid).isEmpty() && Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
						deleteTree(directory);
					}
				}
				catch (NumberFormatException | UncheckedIOException ex) {
					// not ours, or not removable by us: leave it
				}
			}
		}
		catch (IOException ex) {
			// an unreadable work directory shows up on the first execution, with its cause
		}
	}

	private Path createPrivateDirectory() {
		try {
			return Files.createTempDirectory(this.settings.workDirectory(), PRIVATE_PREFIX + ProcessHandle.current().pid() + "-");
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not create a private working directory in "
					+ this.settings.workDirectory() + " (cave.sandbox.work-directory): " + ex.getMessage(), ex);
		}
	}

	/**
	 * Remove a private working directory without following symbolic links (a child may leave a
	 * link to anywhere) and after restoring permissions the child may have taken away.
	 */
	static void deleteTree(Path root) {
		try {
			Files.walkFileTree(root, new SimpleFileVisitor<>() {

				@Override
				public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
					dir.toFile().setWritable(true, true);
					dir.toFile().setExecutable(true, true);
					dir.toFile().setReadable(true, true);
					return FileVisitResult.CONTINUE;
				}

				@Override
				public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
					Files.deleteIfExists(file);
					return FileVisitResult.CONTINUE;
				}

				@Override
				public FileVisitResult visitFileFailed(Path file, IOException ex) throws IOException {
					if (ex instanceof NoSuchFileException) {
						return FileVisitResult.CONTINUE;
					}
					if (ex instanceof AccessDeniedException) {
						file.toFile().setReadable(true, true);
						file.toFile().setExecutable(true, true);
						deleteTree(file);
						return FileVisitResult.CONTINUE;
					}
					throw ex;
				}

				@Override
				public FileVisitResult postVisitDirectory(Path dir, IOException ex) throws IOException {
					Files.deleteIfExists(dir);
					return FileVisitResult.CONTINUE;
				}

			});
		}
		catch (NoSuchFileException ex) {
			// already gone
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not remove the private working directory " + root, ex);
		}
	}

	@Override
	public CompletableFuture<ExecutionResult> executeAsync(ExecutionRequest request) {
		AtomicReference<Thread> worker = new AtomicReference<>();
		CompletableFuture<ExecutionResult> future = new CompletableFuture<>() {

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				boolean cancelled = super.cancel(mayInterruptIfRunning);
				Thread thread = worker.get();
				if (cancelled && thread != null) {
					thread.interrupt();
				}
				return cancelled;
			}

		};
		this.async.execute(() -> {
			if (future.isDone()) {
				return;
			}
			worker.set(Thread.currentThread());
			try {
				if (future.isCancelled()) {
					return;
				}
				future.complete(execute(request));
			}
			catch (Throwable ex) {
				future.completeExceptionally((ex instanceof CompletionException) ? ex : new CompletionException(ex));
			}
			finally {
				worker.set(null);
				Thread.interrupted();
			}
		});
		return future;
	}

	@Override
	public void close() {
		this.async.shutdownNow();
		this.runner.close();
	}

	@Override
	public String toString() {
		return "ProcessIsolatedExecutor[" + this.isolation + "]";
	}

}
