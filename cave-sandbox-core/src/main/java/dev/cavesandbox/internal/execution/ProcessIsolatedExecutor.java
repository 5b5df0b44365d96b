package dev.cavesandbox.internal.execution;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxExecMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ConcurrencyLimitExceededException;
import dev.cavesandbox.EgressUnavailableException;
import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.ProcessTreeSurvivedException;
import dev.cavesandbox.ResourceLimit;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.egress.EgressSession;
import dev.cavesandbox.internal.launcher.CommandUsers;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import dev.cavesandbox.internal.process.ChildEnvironment;
import dev.cavesandbox.internal.process.CommandResolver;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.StartedProcess;
import dev.cavesandbox.internal.process.WatchedProcess;
import dev.cavesandbox.internal.workspace.FilesystemViews;
import dev.cavesandbox.internal.workspace.InputFiles;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxExecMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link IsolatedExecutor} that spawns real processes: isolated behind the command
 * line that the {@link NetworkIsolationProbe} verified, or unisolated in fallback mode.
 * Create it with {@link #isolated(SandboxSettings, IsolationCapability)} or
 * {@link #unisolated(SandboxSettings)}.
 * <p>
 * Each execution: waits for one of {@code maxConcurrent} slots; takes a private working
 * directory ({@code PrivateDirectories}) and writes the request's input files into it
 * ({@code InputFiles}), unless the request names a directory, which it checks; builds the
 * environment ({@code ChildEnvironment}); checks that {@code argv[0]} exists, is
 * executable ({@link CommandResolver}) and is visible in the sandbox; runs it behind the
 * mechanism's command line ({@code ProcessRunner}); and gives the private working
 * directory and the slot back whatever happened. A process of {@link #start} is prepared
 * the same way and gives them back when it has ended ({@code StartedProcess}). On the
 * seccomp rung a root JVM's execution also takes a command user of its own with its slot
 * ({@code CommandUsers}) and gives it back with the slot, once its process tree has
 * ended. This class keeps the slots, the asynchronous executions and the orchestration;
 * each concern lives in the class named.
 * <p>
 * Resource limits: each execution gets the settings' {@link SandboxSettings#limits()
 * limits}, with every value that its request sets ({@link ExecutionRequest#limits()})
 * instead. The launcher of the Linux mechanisms applies them; unisolated (fallback mode)
 * and on macOS, which have no launcher, no resource limit is applied at all, and no
 * result reports one. Where a limit ended the command and that can be known, the result
 * says which ({@link ExecutionResult#limitExceeded()}, {@link ResourceLimit}).
 */
public final class ProcessIsolatedExecutor implements IsolatedExecutor {

	private static final Logger logger = LoggerFactory.getLogger(ProcessIsolatedExecutor.class);

	private final SandboxSettings settings;

	/**
	 * The verified capability, or {@code null} for the unisolated (fallback) executor.
	 */
	private final @Nullable IsolationCapability capability;

	/**
	 * Where the sandbox's programs come from, found once: see
	 * {@link #programDirectories}.
	 */
	private final List<Path> programDirectories;

	private final Isolation isolation;

	private final ProcessRunner runner;

	/** The settings' allow-list, parsed once. */
	private final EgressAllowList settingsAllowList;

	/** How the egress proxy resolves names; only tests replace it. */
	private volatile HostResolver resolver = HostResolver.SYSTEM;

	private final PrivateDirectories privateDirectories;

	private final Semaphore slots;

	/**
	 * The command users of a root JVM's executions on the seccomp rung, one each, or
	 * {@code null} where the commands run as a command user in a user namespace, as the
	 * JVM's user or as root.
	 */
	private final @Nullable CommandUsers commandUsers;

	private final ExecutorService async;

	private ProcessIsolatedExecutor(SandboxSettings settings, @Nullable IsolationCapability capability,
			Isolation isolation) {
		this.settings = settings;
		this.capability = capability;
		this.programDirectories = (capability != null) ? programDirectories(capability.mechanism()) : List.of();
		this.isolation = isolation;
		this.runner = new ProcessRunner(settings.killGracePeriod());
		this.settingsAllowList = settings.egress().allowList();
		this.slots = new Semaphore(settings.maxConcurrent(), true);
		AtomicInteger count = new AtomicInteger();
		this.async = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 2, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "cave-sandbox-async-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.privateDirectories = new PrivateDirectories(settings.workDirectory(), settings.maxConcurrent(),
				capability != null, commandGroup(capability) >= 0);
		this.commandUsers = (commandGroup(capability) >= 0) ? new CommandUsers(settings.linux().commandUserRange())
				: null;
	}

	/**
	 * Create an executor that runs every command behind the verified command line of the
	 * given capability. The mechanism is used as the probe verified it (its binaries,
	 * hidden directories and read-only root); the settings give the defaults of each
	 * request, {@code loopback} included.
	 * @param settings the settings
	 * @param capability a verdict of available isolation
	 * @return the executor
	 * @throws NetworkIsolationUnavailableException if the capability is unavailable
	 */
	public static ProcessIsolatedExecutor isolated(SandboxSettings settings, IsolationCapability capability) {
		if (!capability.available()) {
			throw new NetworkIsolationUnavailableException(capability);
		}
		return new ProcessIsolatedExecutor(settings, capability, new Isolation(capability.mechanismName(), true));
	}

	/**
	 * Create the fallback executor: no isolation at all. Every command runs as a plain
	 * child process of the JVM, with the host's network, file system and processes; only
	 * the environment, the private working directory, the timeout, the output cap and the
	 * tree teardown still apply. No resource limit ({@link SandboxSettings#limits()}) is
	 * applied: they are set by the launcher, which only isolated commands run through.
	 * Every result reports {@link Isolation#NONE}, and none a {@link ResourceLimit}.
	 * Meant for mode FALLBACK ({@link IsolatedExecutors} uses it when isolation is
	 * unavailable and the settings allow it); do not use it to run untrusted commands.
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
		try (Launch launch = prepare(request, false)) {
			ProcessRunner.Outcome outcome = this.runner.run(launch.spec);
			if (!outcome.survivors().isEmpty()) {
				throw new ProcessTreeSurvivedException(outcome.survivors());
			}
			launch.takeBackGrant();
			if (this.capability != null) {
				checkLauncher(outcome, request.argv().get(0), launch.token);
			}
			// Closed first: a connection still relayed for a process the command left
			// behind ends here, and the list is complete.
			List<EgressDecision> decisions = launch.closeEgress();
			return new ExecutionResult(outcome.exitCode(), outcome.stdout(), outcome.stderr(),
					outcome.stdoutTruncated(), outcome.stderrTruncated(), outcome.timedOut(), outcome.wallTime(),
					this.isolation, ResourceLimit.exceeded(outcome.exitCode(), outcome.timedOut(),
							appliesLimits() ? launch.limits : ResourceLimits.NONE),
					decisions);
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not start " + request.argv().get(0) + ": " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ExecutionCancelledException("the calling thread was interrupted; the process tree was killed",
					ex);
		}
	}

	/**
	 * Start the request and return at once; see {@link IsolatedExecutor#start}. Prepared
	 * exactly as an execution (slot, working directory, input files, environment, listed
	 * paths, egress, command check), spawned from the runner's long-lived launcher
	 * threads. When the process has ended, its sandbox is torn down in this order before
	 * {@link SandboxedProcess#onExit()} completes: the egress proxy is stopped (its
	 * decisions stay readable), the working directory's group is taken back from the
	 * command user (seccomp rung), the private working directory is released, the command
	 * user is given back (seccomp rung, root JVM) and the slot is given back.
	 * <p>
	 * Where the launcher could not set the sandbox up, no exception is thrown: the
	 * process ends with exit code {@value LauncherContract#SETUP_FAILED} and the
	 * launcher's reason as the last line of stderr (starting with
	 * {@value LauncherContract#MESSAGE_PREFIX}).
	 * @param request the request, which may set no stdin, no output sink and no output
	 * cap
	 * @return the running process
	 * @throws InvalidExecutionRequestException ({@code cave_sandbox_invalid_request}) the
	 * request sets stdin, an output sink or an output cap (checked before a slot is
	 * taken), or its working directory is unusable
	 */
	@Override
	public SandboxedProcess start(ExecutionRequest request) {
		refuseCallerStreams(request);
		Launch launch = prepare(request, true);
		try {
			WatchedProcess started = this.runner.start(launch.spec, launch::closeQuietly);
			return new StartedProcess(started, this.isolation, launch.egress);
		}
		catch (IOException ex) {
			launch.closeQuietly();
			throw new SandboxLaunchException("could not start " + request.argv().get(0) + ": " + ex.getMessage(), ex);
		}
		catch (RuntimeException ex) {
			launch.closeQuietly();
			throw ex;
		}
		catch (InterruptedException ex) {
			launch.closeQuietly();
			Thread.currentThread().interrupt();
			throw new ExecutionCancelledException("the calling thread was interrupted; nothing was left running", ex);
		}
	}

	/**
	 * A started process's streams are the caller's: refuse what only an execution that
	 * the executor drains can use.
	 */
	private static void refuseCallerStreams(ExecutionRequest request) {
		List<String> set = new ArrayList<>();
		if (request.stdin() != null) {
			set.add("stdin");
		}
		if (request.stdoutSink() != null) {
			set.add("stdoutSink");
		}
		if (request.stderrSink() != null) {
			set.add("stderrSink");
		}
		if (request.maxOutputBytes() != null) {
			set.add("maxOutputBytes");
		}
		if (!set.isEmpty()) {
			throw new InvalidExecutionRequestException("start() gives the caller the process's own streams, but the "
					+ "request sets " + String.join(", ", set) + "; leave " + ((set.size() == 1) ? "it" : "them")
					+ " unset and write to SandboxedProcess.stdin() or read stdout() and stderr() instead, or use "
					+ "execute() for a command that runs to its end");
		}
	}

	private void acquireSlot() {
		Duration wait = this.settings.queueTimeout();
		try {
			if (!this.slots.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS)) {
				throw new ConcurrencyLimitExceededException("all " + this.settings.maxConcurrent()
						+ " execution slots stayed busy for " + wait.toMillis()
						+ " ms; raise the limit (maxConcurrent) or the queue timeout (queueTimeout), or submit less "
						+ "work at once");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ExecutionCancelledException("interrupted while waiting for a free slot", ex);
		}
	}

	/**
	 * Take everything one execution needs before its spawn, as a {@link Launch}: a slot;
	 * its command user (seccomp rung, root JVM); its private working directory with the
	 * request's input files, or its checked given one; its environment; the mechanism
	 * with its listed paths and egress bridge; the egress session; the command checked;
	 * the launcher checked unchanged; the working directory's group for the command user.
	 * Whatever fails releases what was already taken.
	 * @param started whether for {@link #start}: then only the request's own timeout
	 * applies, and no stdin, sink or cap
	 */
	private Launch prepare(ExecutionRequest request, boolean started) {
		acquireSlot();
		Launch launch = new Launch();
		try {
			prepare(launch, request, started);
			return launch;
		}
		catch (IOException ex) {
			launch.closeQuietly();
			throw new SandboxLaunchException("could not start " + request.argv().get(0) + ": " + ex.getMessage(), ex);
		}
		catch (RuntimeException | Error ex) {
			launch.closeQuietly();
			throw ex;
		}
	}

	private void prepare(Launch launch, ExecutionRequest request, boolean started) throws IOException {
		if (this.commandUsers != null) {
			launch.commandUser = this.commandUsers.acquire();
		}
		Path directory = request.workingDirectory();
		@Nullable Path checkedDirectory = null;
		if (directory == null) {
			directory = this.privateDirectories.create();
			launch.privateDirectory = directory;
			InputFiles.write(directory, request.inputFiles(), commandGroup(this.capability));
		}
		else if (!Files.isDirectory(directory)) {
			throw new InvalidExecutionRequestException("working directory " + directory
					+ " does not exist or is not a directory; create it first or leave it unset for a private one");
		}
		else {
			checkedDirectory = checkWorkingDirectory(directory);
		}
		// The path that was checked, not resolved again: a component swapped for a
		// symbolic link in between would otherwise be followed, and the launcher
		// would open where the link points.
		Path realDirectory = (checkedDirectory != null) ? checkedDirectory : directory.toRealPath();
		Map<String, String> environment = ChildEnvironment.of(this.settings, request, directory, System.getenv());
		SandboxMechanism mechanism = (this.capability != null) ? withListedPaths(this.capability.mechanism(), request)
				: null;
		if (mechanism instanceof SeccompMechanism seccomp && launch.commandUser != Launcher.CALLER) {
			mechanism = seccomp.withCommandUser(launch.commandUser);
		}
		EgressAllowList allowList = allowList(request);
		if (mechanism != null && !allowList.isEmpty()) {
			requireEgress(mechanism);
			launch.egress = EgressSession.start(this.privateDirectories.create(), this.privateDirectories::release,
					new EgressPolicy(allowList, this.settings.egress().allowPrivateDestinations(), this.resolver),
					EgressListener.NONE);
			mechanism = mechanism.withEgress(launch.egress.bridge());
			EgressSession.pointAtBridge(environment,
					(request.loopback() != null) ? request.loopback() : this.settings.loopback());
		}
		checkVisible(mechanism, CommandResolver.check(request.argv().get(0), directory, environment.get("PATH")),
				realDirectory);
		Map<String, String> wrapperEnvironment = new LinkedHashMap<>(environment);
		if (this.capability != null) {
			wrapperEnvironment.put(LauncherContract.TOKEN_VARIABLE, launch.token);
		}
		List<String> argv = (this.capability != null) ? ChildEnvironment.moveInside(request.argv(), wrapperEnvironment)
				: request.argv();
		launch.limits = this.settings.limits().overriddenBy(request.limits());
		List<String> commandLine = commandLine(mechanism, request, argv, realDirectory, launch.limits,
				launch.egress != null);
		launch.spec = started
				? new ProcessRunner.Spec(commandLine, directory, wrapperEnvironment, null, request.timeout(), 0, null,
						null, this.isolation.networkIsolated())
				: new ProcessRunner.Spec(commandLine, directory, wrapperEnvironment, request.stdin(),
						(request.timeout() != null) ? request.timeout() : this.settings.timeout(),
						(request.maxOutputBytes() != null) ? request.maxOutputBytes() : this.settings.maxOutputBytes(),
						request.stdoutSink(), request.stderrSink(), this.isolation.networkIsolated());
		checkLauncherUnchanged();
		launch.grant = grantToCommandUser(realDirectory);
	}

	/**
	 * What one execution took before its spawn and gives back after its end, once, in
	 * this order: the egress session, the working directory's group, the private working
	 * directory, the command user, the slot.
	 */
	private final class Launch implements AutoCloseable {

		private final String token = UUID.randomUUID().toString();

		private final AtomicBoolean closed = new AtomicBoolean();

		private ProcessRunner.@Nullable Spec spec;

		private ResourceLimits limits = ResourceLimits.NONE;

		private @Nullable Path privateDirectory;

		private @Nullable EgressSession egress;

		private @Nullable WorkingDirectoryGrant grant;

		/**
		 * The uid the command runs as on the seccomp rung (a root JVM's; its gid is the
		 * command user's), or {@link Launcher#CALLER}.
		 */
		private long commandUser = Launcher.CALLER;

		/**
		 * Stop the egress proxy, if any (its decisions stay readable).
		 * @return what it decided, complete
		 */
		List<EgressDecision> closeEgress() {
			EgressSession session = this.egress;
			if (session == null) {
				return List.of();
			}
			session.close();
			return session.decisions();
		}

		/**
		 * Take the working directory's group back from the command user, once.
		 * @throws SandboxLaunchException if it could not be taken back
		 */
		void takeBackGrant() {
			WorkingDirectoryGrant granted = this.grant;
			this.grant = null;
			takeBack(granted);
		}

		@Override
		public void close() {
			if (!this.closed.compareAndSet(false, true)) {
				return;
			}
			try {
				closeEgress();
			}
			finally {
				try {
					takeBackGrant();
				}
				finally {
					try {
						if (this.privateDirectory != null) {
							ProcessIsolatedExecutor.this.privateDirectories.release(this.privateDirectory);
						}
					}
					finally {
						// After the tree has ended: for execute() the runner returns once
						// it is torn down, for start() this runs when it has ended.
						CommandUsers users = ProcessIsolatedExecutor.this.commandUsers;
						if (users != null && this.commandUser != Launcher.CALLER) {
							users.release(this.commandUser);
						}
						ProcessIsolatedExecutor.this.slots.release();
					}
				}
			}
		}

		/**
		 * {@link #close()} where nobody is left to tell of a failure: the teardown of a
		 * started process, or after another failure.
		 */
		void closeQuietly() {
			try {
				close();
			}
			catch (RuntimeException ex) {
				logger.warn("the sandbox of a process could not be torn down completely: {}", ex.getMessage());
			}
		}

	}

	/**
	 * Resolve the egress proxy's names with the given resolver from now on (tests, which
	 * may resolve no name but to a loopback address).
	 */
	public void resolveHostsWith(HostResolver resolver) {
		this.resolver = resolver;
	}

	/**
	 * The allow-list of the request, else the settings'.
	 */
	private EgressAllowList allowList(ExecutionRequest request) {
		List<String> entries = request.allowedHosts();
		return (entries != null) ? EgressAllowList.of(entries) : this.settingsAllowList;
	}

	/**
	 * Throw where the mechanism cannot give the command the egress bridge: it needs a
	 * network namespace of the command's own with a private loopback that the probe
	 * verified.
	 */
	private void requireEgress(SandboxMechanism mechanism) {
		String why = egressUnavailable(mechanism, this.capability);
		if (why != null) {
			throw new EgressUnavailableException("allowed hosts were given, but " + why);
		}
	}

	/**
	 * Return why the verified mechanism cannot give a command the egress bridge, or
	 * {@code null} where it can: it needs a network namespace of the command's own with a
	 * private loopback that the probe verified.
	 * @param mechanism the mechanism
	 * @param capability the probe's verdict
	 * @return the reason with its fix, or {@code null}
	 */
	public static @Nullable String egressUnavailable(SandboxMechanism mechanism,
			@Nullable IsolationCapability capability) {
		if (!mechanism.namespaces().contains(LinuxNamespace.NETWORK)) {
			return "the mechanism " + mechanism.name() + " has no network namespace of the command's own, where the "
					+ "egress bridge listens (only the rungs bwrap, unshare and namespaces have one); leave "
					+ "the allowed hosts (egress allowedHosts, and the request's allowedHosts) empty on this host, or run "
					+ "where a user namespace can be created (see the README's Containers and Kubernetes section)";
		}
		if (capability == null || !capability.privateLoopback()) {
			return "the mechanism " + mechanism.name() + " cannot give a private loopback on this host, where the "
					+ "egress bridge listens (" + UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix() + ")";
		}
		return null;
	}

	/**
	 * Hand the working directory's group to the command user where the command runs as a
	 * uid of the host without capabilities (the seccomp rung with a command user), which
	 * could not write it otherwise; see {@link WorkingDirectoryGrant}. The group is the
	 * command user's gid, which every execution's uid runs with: executions that overlap
	 * in one directory share the grant.
	 * @return the grant, or {@code null} where none is needed
	 */
	private @Nullable WorkingDirectoryGrant grantToCommandUser(Path realDirectory) {
		long group = commandGroup(this.capability);
		if (group < 0) {
			return null;
		}
		try {
			Path unpassable = WorkingDirectoryGrant.unpassableAncestor(realDirectory, group);
			if (unpassable != null) {
				throw new InvalidExecutionRequestException("working directory " + realDirectory
						+ " cannot be reached by the command user " + group + ": it may not pass through " + unpassable
						+ " (the seccomp rung runs a root JVM's commands as that uid of the host, which reaches its "
						+ "directory by its path); give others search permission (chmod o+x) on " + unpassable
						+ ", use a directory below one it can pass, or set cave.sandbox.linux.command-user=0 (the "
						+ "process limit then does not hold)");
			}
			return WorkingDirectoryGrant.grant(realDirectory, group);
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not give the working directory " + realDirectory
					+ " to the command user's group " + group + ", the command did not run: " + ex.getMessage(), ex);
		}
	}

	private static void takeBack(@Nullable WorkingDirectoryGrant grant) {
		if (grant == null) {
			return;
		}
		try {
			grant.close();
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("the command ran, but the working directory's group could not be taken "
					+ "back from the command user: " + ex, ex);
		}
	}

	/**
	 * The gid that must be able to write the working directory, or
	 * {@link Launcher#CALLER}.
	 */
	public static long commandGroup(@Nullable IsolationCapability capability) {
		return (capability != null && capability.mechanism() instanceof SeccompMechanism seccomp)
				? seccomp.commandGroup() : Launcher.CALLER;
	}

	/**
	 * Whether the command's resource limits are applied: by the launcher, which only the
	 * Linux mechanisms run the command through.
	 */
	private boolean appliesLimits() {
		return this.capability != null && this.capability.mechanism().launcher() != null;
	}

	/**
	 * The launcher was verified once; whatever replaced or wrote it since is refused
	 * here, before it would run on the host.
	 */
	private void checkLauncherUnchanged() {
		Launcher launcher = (this.capability != null) ? this.capability.mechanism().launcher() : null;
		if (launcher == null) {
			return;
		}
		try {
			LauncherInstallation.shared().checkUnchanged(launcher.path());
		}
		catch (LauncherInstallation.UnavailableException ex) {
			throw new SandboxLaunchException(ex.getMessage(), ex);
		}
	}

	/**
	 * Throw where the sandbox could not be set up: the launcher then exits with
	 * {@value LauncherContract#SETUP_FAILED} and its last line on stderr starts with
	 * {@value LauncherContract#MESSAGE_PREFIX}, after what the wrapper said, if anything,
	 * and ends with this execution's launch token
	 * ({@link LauncherContract#TOKEN_VARIABLE}).
	 */
	private static void checkLauncher(ProcessRunner.Outcome outcome, String command, String token) {
		// A timeout that struck while the sandbox was being set up is a timeout.
		if (outcome.exitCode() != LauncherContract.SETUP_FAILED || outcome.timedOut()) {
			return;
		}
		String stderr = new String(outcome.stderr(), StandardCharsets.UTF_8).strip();
		List<String> lines = stderr.lines().toList();
		String last = lines.isEmpty() ? "" : lines.get(lines.size() - 1);
		if (last.startsWith(LauncherContract.MESSAGE_PREFIX) && last.endsWith(" [launch " + token + "]")) {
			throw new SandboxLaunchException("the sandbox for " + command + " could not be set up, the command did "
					+ "not run: " + String.join(" / ", lines));
		}
	}

	/**
	 * Return what is spawned for the request: its argv unisolated, else the command line
	 * that the verified mechanism builds from the argv, the working directory (as a real
	 * path, so that the mechanism binds what the kernel will resolve), the loopback wish
	 * of the request or the settings, and the merged resource limits.
	 */
	private List<String> commandLine(@Nullable SandboxMechanism mechanism, ExecutionRequest request, List<String> argv,
			Path realDirectory, ResourceLimits limits, boolean egress) {
		if (this.capability == null || mechanism == null) {
			return argv;
		}
		// The egress bridge listens on the private loopback, whatever the request says.
		boolean loopback = egress || ((request.loopback() != null) ? request.loopback() : this.settings.loopback());
		if (loopback && !this.capability.privateLoopback()) {
			String why = mechanism.namespaces().contains(LinuxNamespace.NETWORK)
					|| mechanism instanceof SandboxExecMechanism
							? "cannot give a private loopback on this host ("
									+ UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix() + ")"
							: "has no network namespace, so it cannot give a private loopback (only the rungs with one "
									+ "can: bwrap, unshare, namespaces)";
			throw new InvalidExecutionRequestException("loopback was requested, but the mechanism " + mechanism.name()
					+ " " + why + "; leave loopback unset or false");
		}
		return mechanism.commandLine(argv, realDirectory, loopback, false, limits);
	}

	/**
	 * The mechanism with the request's listed paths (each checked: existing, real, not
	 * the sandbox's private directories), after refusing any writable path, of the
	 * request or the settings, that is or holds a directory the sandbox's own programs
	 * come from (a root JVM's command could replace them).
	 */
	private SandboxMechanism withListedPaths(SandboxMechanism mechanism, ExecutionRequest request) {
		List<Path> readable = request.readablePaths()
			.stream()
			.map((path) -> FilesystemViews.checkRequested("readable path", path))
			.toList();
		List<Path> writable = request.writablePaths()
			.stream()
			.map((path) -> FilesystemViews.checkRequested("writable path", path))
			.toList();
		List<Path> allWritable = new ArrayList<>(writable);
		allWritable.addAll(this.settings.filesystem().writablePaths());
		for (Path path : allWritable) {
			for (Path programs : this.programDirectories) {
				if (programs.startsWith(path) || path.startsWith(programs)) {
					throw new InvalidExecutionRequestException(
							"writable path " + path + ((path.startsWith(programs)) ? " lies in " : " holds ") + programs
									+ ", where the sandbox's own programs come from; list it as a readable path or use "
									+ "another directory");
				}
			}
		}
		try {
			return mechanism.withPaths(readable, writable);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidExecutionRequestException(
					ex.getMessage() + "; leave readablePaths and writablePaths " + "empty on this platform");
		}
	}

	/**
	 * The working directory is mounted writable into the sandbox, over the hidden
	 * directories and the read-only root. So it must be the path the caller meant: no
	 * symbolic link anywhere in it (an earlier, untrusted execution could have planted
	 * one in a persistent directory to point the mount at {@code /} or {@code /run}), and
	 * neither the root nor a directory that contains a hidden directory.
	 * @return the checked real path, which the mechanism binds, or {@code null} without
	 * isolation
	 */
	private @Nullable Path checkWorkingDirectory(Path directory) {
		if (this.capability == null) {
			return null;
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
			throw new InvalidExecutionRequestException(
					"working directory " + directory + " goes through a symbolic link (it" + " resolves to " + real
							+ "); pass the real path if that is the directory you mean");
		}
		boolean containsHidden = real.getParent() == null || this.settings.hiddenDirectories()
			.stream()
			.anyMatch((hidden) -> hidden.toAbsolutePath().normalize().startsWith(real));
		if (containsHidden) {
			throw new InvalidExecutionRequestException(
					"working directory " + real + " is the root or contains a hidden "
							+ "directory (hiddenDirectories), which it would uncover; use a directory of its own");
		}
		Path secret = FilesystemViews.secretAround(real, true);
		if (secret != null) {
			throw new InvalidExecutionRequestException(
					"working directory " + real + ((real.startsWith(secret)) ? " lies in " : " holds ") + secret
							+ ", a secret that the system view masks; use a directory of its own");
		}
		Path home = PrivateDirectories.isOrHoldsAHome(real);
		if (home != null) {
			throw new InvalidExecutionRequestException("working directory " + real
					+ ((real.startsWith(home)) ? " lies in " : " contains ") + home
					+ ", a home of the private working directories and of the launcher, which the sandbox hides; "
					+ "use a directory of its own");
		}
		// A command of a root JVM owns the system's programs: given their directory as
		// its
		// (writable) working directory, it could replace what later sandboxes run.
		for (Path programs : this.programDirectories) {
			if (programs.startsWith(real) || real.startsWith(programs)) {
				throw new InvalidExecutionRequestException("working directory " + real
						+ ((real.startsWith(programs)) ? " lies in " : " contains ") + programs
						+ ", where the sandbox's own programs come from; use a directory of its own");
			}
		}
		return real;
	}

	/**
	 * The directories the sandbox's programs come from: the launcher's, the wrapper
	 * binaries', and those of the baseline {@code PATH} on which the wrappers find
	 * {@code sh}, {@code mount} and {@code setsid}; as real paths.
	 */
	private static List<Path> programDirectories(SandboxMechanism mechanism) {
		List<Path> directories = new ArrayList<>();
		List<Path> programs = new ArrayList<>(mechanism.binaries());
		for (String entry : SandboxSettings.BASELINE_PATH.split(":")) {
			programs.add(Path.of(entry, "sh"));
		}
		for (Path program : programs) {
			try {
				Path directory = program.toAbsolutePath().getParent().toRealPath();
				if (!directories.contains(directory)) {
					directories.add(directory);
				}
			}
			catch (IOException ex) {
				// Not on this host: nothing there to protect.
			}
		}
		return directories;
	}

	/**
	 * A command in a hidden directory (for example a script in {@code /tmp}) exists on
	 * the host but not in the sandbox: report it as not found before anything is spawned,
	 * the same way for every mechanism, rather than with the wrapper's own exit code.
	 */
	private void checkVisible(@Nullable SandboxMechanism mechanism, Path command, Path realDirectory)
			throws IOException {
		if (mechanism == null) {
			return;
		}
		Path real = command.toRealPath();
		if (mechanism.hides(real) && !real.startsWith(realDirectory)) {
			throw new CommandNotFoundException("command " + command + " lies outside what the sandbox shows the "
					+ "command (a hidden directory, or outside the system view's directories): put it in the working "
					+ "directory, or list its directory in cave.sandbox.filesystem.readable-paths or the request's "
					+ "readablePaths (a listed path the view left out, such as one through a symbolic link, is named "
					+ "in the verified facts)");
		}
	}

	@Override
	public CompletableFuture<ExecutionResult> executeAsync(ExecutionRequest request) {
		AtomicReference<@Nullable Thread> worker = new AtomicReference<>();
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
		this.privateDirectories.close();
		this.async.shutdownNow();
		this.runner.close();
	}

	@Override
	public String toString() {
		return "ProcessIsolatedExecutor[" + this.isolation + "]";
	}

}
