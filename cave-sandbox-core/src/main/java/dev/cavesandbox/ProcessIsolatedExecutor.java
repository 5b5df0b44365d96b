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
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(ProcessIsolatedExecutor.class);

	private static final String PRIVATE_PREFIX = "cave-sandbox-";

	/** Besides every LD_* variable: what steers the loader, libc or the shell of a wrapper. */
	private static final Set<String> WRAPPER_STEERING = Set.of("PATH", "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES",
			"HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF",
			"RES_OPTIONS", "TZDIR", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "CDPATH", "PS4");

	private final SandboxSettings settings;

	private final IsolationCapability capability;

	private final Isolation isolation;

	private final ProcessRunner runner;

	private final java.util.Queue<Path> emptiedDirectories = new java.util.concurrent.ConcurrentLinkedQueue<>();

	private volatile boolean closed;

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
					+ " execution slots stayed busy for " + wait.toMillis() + " ms; raise the limit (maxConcurrent) "
					+ "or the queue timeout (queueTimeout), or submit less work at once");
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
		else {
			checkWorkingDirectory(directory);
		}
		try {
			Path realDirectory = directory.toRealPath();
			Map<String, String> environment = environment(request, directory);
			checkVisible(CommandResolver.check(request.argv().get(0), directory, environment.get("PATH")), realDirectory);
			Map<String, String> wrapperEnvironment = new LinkedHashMap<>(environment);
			List<String> argv = insideEnvironment(request.argv(), wrapperEnvironment);
			ProcessRunner.Spec spec = new ProcessRunner.Spec(commandLine(request, argv, realDirectory), directory,
					wrapperEnvironment, request.stdin(),
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
				releasePrivateDirectory(directory);
			}
		}
	}

	/**
	 * The sandbox wrappers (bwrap, setpriv, unshare, the unshare mechanism's setup shell and
	 * mount) run on the host, before the namespaces close, with the environment of the process
	 * that is spawned. Variables that steer the dynamic loader or the shell ({@code LD_*}, glibc's
	 * list of variables it ignores for setuid programs, {@code BASH_ENV}, {@code PATH}, ...) would
	 * let a library or program planted by an earlier execution run there, with the host's network.
	 * So the wrappers get a baseline {@code PATH} and none of them, and the command gets them back
	 * inside the sandbox through {@code env(1)} on its command line.
	 * @param argv the command
	 * @param environment the command's environment, changed in place into the wrappers'
	 * @return the command, behind {@code env NAME=VALUE...} if any variable was moved
	 */
	private List<String> insideEnvironment(List<String> argv, Map<String, String> environment) {
		if (this.capability == null) {
			return argv;
		}
		List<String> assignments = new ArrayList<>();
		environment.entrySet().removeIf((variable) -> {
			if (!steersWrappers(variable.getKey())) {
				return false;
			}
			if (!(variable.getKey().equals("PATH") && variable.getValue().equals(SandboxSettings.BASELINE_PATH))) {
				assignments.add(variable.getKey() + "=" + variable.getValue());
			}
			return true;
		});
		environment.put("PATH", SandboxSettings.BASELINE_PATH);
		if (assignments.isEmpty()) {
			return argv;
		}
		if (argv.get(0).indexOf('=') >= 0) {
			throw new InvalidExecutionRequestException("argv[0] " + argv.get(0) + " contains '=', which env(1) would take "
					+ "for a variable; give it as ./" + argv.get(0));
		}
		List<String> command = new ArrayList<>(assignments.size() + argv.size() + 1);
		command.add("/usr/bin/env");
		command.addAll(assignments);
		command.addAll(argv);
		return command;
	}

	private static boolean steersWrappers(String name) {
		return name.startsWith("LD_") || WRAPPER_STEERING.contains(name);
	}

	/**
	 * Return what is spawned for the request: its argv unisolated, else the command line that the
	 * verified mechanism builds from the argv, the working directory (as a real path, so that the
	 * mechanism binds what the kernel will resolve) and the loopback wish of the request or the
	 * settings.
	 */
	private List<String> commandLine(ExecutionRequest request, List<String> argv, Path realDirectory) {
		if (this.capability == null) {
			return argv;
		}
		SandboxMechanism mechanism = this.capability.sandbox();
		boolean loopback = (request.loopback() != null) ? request.loopback() : this.settings.loopback();
		if (loopback && !this.capability.privateLoopback()) {
			throw new InvalidExecutionRequestException("loopback was requested, but the mechanism " + mechanism.name()
					+ " cannot give a private loopback on this host (" + UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix()
					+ "); leave loopback unset or false");
		}
		return mechanism.commandLine(argv, realDirectory, loopback);
	}

	/**
	 * The working directory is mounted writable into the sandbox, over the hidden directories and
	 * the read-only root. So it must be the path the caller meant: no symbolic link anywhere in it
	 * (an earlier, untrusted execution could have planted one in a persistent directory to point
	 * the mount at {@code /} or {@code /run}), and neither the root nor a directory that contains
	 * a hidden directory.
	 */
	private void checkWorkingDirectory(Path directory) {
		if (this.capability == null) {
			return;
		}
		Path absolute = directory.toAbsolutePath().normalize();
		Path real;
		try {
			real = directory.toRealPath();
		}
		catch (IOException ex) {
			throw new InvalidExecutionRequestException("working directory " + directory + " cannot be resolved: " + ex);
		}
		if (!real.equals(absolute)) {
			throw new InvalidExecutionRequestException("working directory " + directory + " goes through a symbolic link (it"
					+ " resolves to " + real + "); pass the real path if that is the directory you mean");
		}
		boolean containsHidden = real.getParent() == null || this.settings.hiddenDirectories()
			.stream()
			.anyMatch((hidden) -> hidden.toAbsolutePath().normalize().startsWith(real));
		if (containsHidden) {
			throw new InvalidExecutionRequestException("working directory " + real + " is the root or contains a hidden "
					+ "directory (hiddenDirectories), which it would uncover; use a directory of its own");
		}
	}

	/**
	 * A command in a hidden directory (for example a script in {@code /tmp}) exists on the host but
	 * not in the sandbox: report it as not found before anything is spawned, the same way for every
	 * mechanism, rather than with the wrapper's own exit code.
	 */
	private void checkVisible(Path command, Path realDirectory) throws IOException {
		if (this.capability == null) {
			return;
		}
		Path real = command.toRealPath();
		if (this.capability.sandbox().hides(real) && !real.startsWith(realDirectory)) {
			throw new CommandNotFoundException("command " + command + " lies in a directory that the sandbox hides "
					+ "(hiddenDirectories): put it in the working directory or outside those directories");
		}
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
	 * After an isolated execution the whole PID namespace is gone, so nothing can still write into
	 * its private directory: it is emptied, given back its owner-only permissions, and kept for the
	 * next execution if it really is empty (at most {@code maxConcurrent} are kept). Anything else,
	 * and every directory of an unisolated execution, whose background processes may live on, is
	 * deleted.
	 */
	private void releasePrivateDirectory(Path directory) {
		if (this.capability != null && !this.closed && this.emptiedDirectories.size() < this.settings.maxConcurrent()
				&& empty(directory)) {
			this.emptiedDirectories.offer(directory);
			return;
		}
		deleteTree(directory);
	}

	private static boolean empty(Path directory) {
		try {
			Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
			try (DirectoryStream<Path> children = Files.newDirectoryStream(directory)) {
				for (Path child : children) {
					deleteTree(child);
				}
			}
			try (DirectoryStream<Path> children = Files.newDirectoryStream(directory)) {
				return !children.iterator().hasNext();
			}
		}
		catch (IOException | RuntimeException ex) {
			return false;
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
				catch (NumberFormatException ex) {
					// not ours, or not removable by us: leave it
				}
			}
		}
		catch (IOException ex) {
			// an unreadable work directory shows up on the first execution, with its cause
		}
	}

	/**
	 * Take an emptied private directory of an earlier isolated execution, or create one. Creating
	 * and deleting a directory per execution costs more than the rest of the executor together
	 * where the work directory's filesystem discards freed blocks online (measured in
	 * BENCHMARKS.md); an emptied directory costs a few microseconds.
	 */
	private Path createPrivateDirectory() {
		Path reused = this.emptiedDirectories.poll();
		if (reused != null) {
			return reused;
		}
		try {
			return Files.createTempDirectory(this.settings.workDirectory(), PRIVATE_PREFIX + ProcessHandle.current().pid() + "-");
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not create a private working directory in "
					+ this.settings.workDirectory() + " (workDirectory): " + ex.getMessage(), ex);
		}
	}

	/**
	 * Remove a private working directory without following symbolic links (a child may leave a
	 * link to anywhere) and after restoring permissions the child may have taken away. A tree the
	 * JDK cannot remove (deeper than {@code PATH_MAX}, or deep enough to exhaust the stack) is
	 * handed to coreutils {@code chmod -R} and {@code rm -rf --one-file-system}, which walk it
	 * relative to each directory. Never throws: a directory that cannot be removed is logged and
	 * left, and the execution's result is not lost.
	 */
	static void deleteTree(Path root) {
		try {
			Files.walkFileTree(root, new SimpleFileVisitor<>() {

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
					if (ex instanceof AccessDeniedException && ownerOnly(file)) {
						// A directory the child made unreadable: open it up once and walk it.
						Files.walkFileTree(file, this);
						return FileVisitResult.CONTINUE;
					}
					throw ex;
				}

				@Override
				public FileVisitResult postVisitDirectory(Path dir, IOException ex) throws IOException {
					if (ex != null && !(ex instanceof NoSuchFileException)) {
						throw ex;
					}
					Files.deleteIfExists(dir);
					return FileVisitResult.CONTINUE;
				}

			});
		}
		catch (IOException | UncheckedIOException | StackOverflowError ex) {
			removeWithCoreutils(root);
		}
		if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
			logger.warn("Could not remove the private working directory {}; remove it by hand", root);
		}
	}

	private static boolean ownerOnly(Path directory) {
		try {
			Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
			return true;
		}
		catch (IOException | UnsupportedOperationException ex) {
			return false;
		}
	}

	private static void removeWithCoreutils(Path root) {
		for (List<String> command : List.of(List.of("chmod", "-R", "u+rwX", "--", root.toString()),
				List.of("rm", "-rf", "--one-file-system", "--", root.toString()))) {
			try {
				ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
				builder.environment().clear();
				builder.environment().put("PATH", SandboxSettings.BASELINE_PATH);
				Process process = builder.start();
				process.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
				if (!process.waitFor(60, TimeUnit.SECONDS)) {
					process.destroyForcibly();
				}
			}
			catch (IOException ex) {
				// logged below if the directory remains
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
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
		this.closed = true;
		this.async.shutdownNow();
		this.runner.close();
		for (Path directory = this.emptiedDirectories.poll(); directory != null; directory = this.emptiedDirectories
			.poll()) {
			deleteTree(directory);
		}
	}

	@Override
	public String toString() {
		return "ProcessIsolatedExecutor[" + this.isolation + "]";
	}

}
