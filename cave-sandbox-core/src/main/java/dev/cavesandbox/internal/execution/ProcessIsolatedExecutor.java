package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

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
import dev.cavesandbox.OutputFiles;
import dev.cavesandbox.ProcessTreeSurvivedException;
import dev.cavesandbox.ResourceLimit;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.WarmPoolState;
import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.HostResolver;
import dev.cavesandbox.internal.launcher.CommandUsers;
import dev.cavesandbox.internal.launcher.HandoverFrame;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.StartedProcess;
import dev.cavesandbox.internal.process.WatchedProcess;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.ViewFingerprint;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link IsolatedExecutor} that spawns real processes: isolated behind the command
 * line that the {@link NetworkIsolationProbe} verified, or unisolated in fallback mode.
 * Create it with {@link #isolated(SandboxSettings, IsolationCapability)} or
 * {@link #unisolated(SandboxSettings)}.
 * <p>
 * Each execution is the request merged over the settings ({@link EffectiveRequest}),
 * prepared into a {@link PreparedLaunch} ({@link LaunchPreparation}: slot, command user,
 * working directory, mechanism, egress, environment, command, command line, launcher,
 * grant), run by the {@code ProcessRunner}, its output files read from the private
 * working directory ({@code OutputFileReader}) once the tree has ended, and closed, which
 * gives everything back in reverse order whatever happened. A process of {@link #start}
 * is prepared the same way and closed when it has ended ({@code StartedProcess}).
 * <p>
 * Resource limits are applied by the launcher of the Linux mechanisms; unisolated
 * (fallback mode) and on macOS, which have no launcher, none is applied, and no result
 * reports one ({@link ExecutionResult#limitExceeded()}, {@link ResourceLimit}).
 */
public final class ProcessIsolatedExecutor implements IsolatedExecutor {

	private static final Logger logger = LoggerFactory.getLogger(ProcessIsolatedExecutor.class);

	/** How long {@link #close()} waits for the warm pool's thread. */
	private static final Duration POOL_END_WAIT = Duration.ofSeconds(10);

	/** Discards the warm sandboxes of executors that became unreachable unclosed. */
	private static final Cleaner POOLS = Cleaner.create((runnable) -> {
		Thread thread = new Thread(runnable, "cave-sandbox-warm-cleaner");
		thread.setDaemon(true);
		return thread;
	});

	private final @Nullable IsolationCapability capability;

	private final Isolation isolation;

	private final SandboxSettings settings;

	/** The settings' allow-list, parsed once. */
	private final EgressAllowList settingsAllowList;

	private final ProcessRunner runner;

	private final PrivateDirectories privateDirectories;

	private final LaunchPreparation preparation;

	/**
	 * How the egress proxy resolves names; only tests replace it. A holder, not a field
	 * read through {@code this}: the preparation, which the pool's thread reaches, must
	 * not keep this executor reachable.
	 */
	private final AtomicReference<HostResolver> resolver = new AtomicReference<>(HostResolver.SYSTEM);

	private final ExecutorService async;

	/** The pool of warm sandboxes ({@code cave.sandbox.warm.size}), or {@code null}. */
	private final @Nullable WarmPool pool;

	private final @Nullable WarmSandboxes warmSandboxes;

	/**
	 * Closes the pool once: at {@link #close()}, or after this executor became
	 * unreachable unclosed (its waiting sandboxes would otherwise hold their processes
	 * and command users until the JVM ends).
	 */
	private final Cleaner.@Nullable Cleanable poolClosing;

	private ProcessIsolatedExecutor(SandboxSettings settings, @Nullable IsolationCapability capability,
			Isolation isolation) {
		this.capability = capability;
		this.isolation = isolation;
		this.settings = settings;
		this.settingsAllowList = settings.egress().allowList();
		this.runner = new ProcessRunner(settings.killGracePeriod());
		boolean commandUser = commandGroup(capability) >= 0;
		this.privateDirectories = new PrivateDirectories(settings.workDirectory(), settings.maxConcurrent(),
				capability != null, commandUser);
		// One command user per execution: a root JVM's commands on the seccomp mechanism,
		// each uid checked free on the cleaner thread once released.
		CommandUsers commandUsers = commandUser
				? new CommandUsers(settings.linux().commandUserRange(), this.privateDirectories::runOnCleaner) : null;
		this.preparation = new LaunchPreparation(settings, capability, this.privateDirectories, commandUsers,
				this.resolver::get);
		WarmShape shape = (capability != null && capability.mechanism().launcher() != null
				&& settings.warm().size() > 0) ? WarmShape.of(settings, this.settingsAllowList) : null;
		this.warmSandboxes = (shape != null) ? new WarmSandboxes(this.preparation, this.runner, shape,
				ViewFingerprint.paths(settings), settings.probeTimeout()) : null;
		this.pool = (shape != null && this.warmSandboxes != null) ? new WarmPool(settings.warm().size(),
				settings.warm().maxAge(), shape, this.warmSandboxes, this.warmSandboxes::fingerprint) : null;
		this.poolClosing = (this.pool != null) ? POOLS.register(this, this.pool::close) : null;
		AtomicInteger count = new AtomicInteger();
		this.async = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 2, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "cave-sandbox-async-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
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

	/** Refuse what execve(2) would refuse before a warm sandbox is taken for it. */
	private static void checkArguments(EffectiveRequest effective) {
		try {
			HandoverFrame.checkArguments(effective.request().argv());
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not start " + effective.command() + ": " + ex.getMessage(), ex);
		}
	}

	@Override
	public Isolation isolation() {
		return this.isolation;
	}

	@Override
	public ExecutionResult execute(ExecutionRequest request) {
		EffectiveRequest effective = EffectiveRequest.of(request, this.settings, this.settingsAllowList, false);
		checkArguments(effective);
		WarmLaunch warm = (this.pool != null) ? this.pool.take(effective) : null;
		try (PreparedLaunch launch = (warm != null) ? claim(warm, effective) : this.preparation.prepare(effective)) {
			ProcessRunner.Outcome outcome = (warm != null)
					? this.runner.runPrepared(warm.process(), launch.spec(), Objects.requireNonNull(launch.frame()))
					: this.runner.run(launch.spec(), launch.frame());
			if (!outcome.survivors().isEmpty()) {
				throw new ProcessTreeSurvivedException(outcome.survivors());
			}
			launch.takeBackGrant();
			if (this.capability != null) {
				LaunchOutcome.check(outcome, effective.command(), launch.token, warm != null, this.runner::closed);
			}
			OutputFiles outputFiles = launch.readOutputFiles(effective);
			// Closed first: a connection still relayed for a process the command left
			// behind ends here, and the list is complete.
			List<EgressDecision> decisions = launch.closeEgress();
			ResourceLimits applied = appliesLimits() ? effective.limits() : ResourceLimits.NONE;
			return new ExecutionResult(outcome.exitCode(), outcome.stdout(), outcome.stderr(),
					outcome.stdoutTruncated(), outcome.stderrTruncated(), outcome.timedOut(), outcome.wallTime(),
					this.isolation, ResourceLimit.exceeded(outcome.exitCode(), outcome.timedOut(), applied), decisions,
					outputFiles, warm != null);
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not start " + effective.command() + ": " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ExecutionCancelledException("the calling thread was interrupted; the process tree was killed",
					ex);
		}
		finally {
			if (warm != null) {
				Objects.requireNonNull(this.pool).served();
			}
		}
	}

	/**
	 * Claim a warm sandbox for the request; one whose claim fails is ended before its
	 * launch is closed.
	 */
	private PreparedLaunch claim(WarmLaunch warm, EffectiveRequest effective) {
		try {
			this.preparation.claim(warm.launch(), effective);
			return warm.launch();
		}
		catch (RuntimeException | Error ex) {
			Objects.requireNonNull(this.warmSandboxes).discard(warm);
			throw ex;
		}
	}

	@Override
	public WarmPoolState warmPool() {
		return (this.pool != null) ? this.pool.state() : WarmPoolState.OFF;
	}

	/**
	 * Start the request and return at once; see {@link IsolatedExecutor#start}. Prepared
	 * exactly as an execution (slot, working directory, input files, environment, listed
	 * paths, egress, command check), spawned from the runner's long-lived launcher
	 * threads. When the process has ended, its sandbox is torn down in this order before
	 * {@link SandboxedProcess#onExit()} completes: the output files the request asked for
	 * are read (not where processes of its tree survived), the egress proxy is stopped
	 * (its decisions stay readable), the working directory's group is taken back from the
	 * command user (seccomp mechanism), the private working directory is released, the
	 * command user is given back (seccomp mechanism, root JVM) and the slot is given
	 * back.
	 * <p>
	 * Where the launcher could not set the sandbox up, no exception is thrown: the
	 * process ends with exit code {@value LauncherContract#SETUP_FAILED} and the
	 * launcher's reason as the last line of stderr (starting with
	 * {@value LauncherContract#MESSAGE_PREFIX}); with that exit code and no reason where
	 * the sandbox was killed from outside before its command started (no started marker:
	 * {@code WatchedProcess}).
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
		EffectiveRequest effective = EffectiveRequest.of(request, this.settings, this.settingsAllowList, true);
		PreparedLaunch launch = this.preparation.prepare(effective);
		AtomicReference<@Nullable OutputFiles> outputFiles = new AtomicReference<>(OutputFiles.NONE);
		try {
			WatchedProcess started = this.runner.start(launch.spec(), launch.frame(),
					(ended) -> tearDown(launch, effective, ended, outputFiles));
			return new StartedProcess(started, this.isolation, launch.egress(), outputFiles::get);
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
	 * The teardown of a started process, once its tree has ended: its output files are
	 * read (not where processes of it survived: {@code null} then), then what it took is
	 * given back.
	 */
	private static void tearDown(PreparedLaunch launch, EffectiveRequest request, WatchedProcess ended,
			AtomicReference<@Nullable OutputFiles> outputFiles) {
		try {
			boolean asked = !request.request().outputFiles().isEmpty()
					|| !request.request().outputFileGlobs().isEmpty();
			outputFiles
				.set(!asked ? OutputFiles.NONE : ended.survivors().isEmpty() ? launch.readOutputFiles(request) : null);
		}
		catch (RuntimeException ex) {
			logger.warn("the output files of a started process could not be read: {}", ex.toString());
		}
		finally {
			launch.closeQuietly();
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

	/**
	 * Resolve the egress proxy's names with the given resolver from now on (tests, which
	 * may resolve no name but to a loopback address).
	 * @param resolver the resolver
	 */
	public void resolveHostsWith(HostResolver resolver) {
		this.resolver.set(resolver);
	}

	/**
	 * The gid that must be able to write the working directory, or
	 * {@link Launcher#CALLER}.
	 * @param capability the verified capability, or {@code null} unisolated
	 * @return the command user's gid on the seccomp mechanism with a command user, else
	 * {@link Launcher#CALLER}
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
		if (this.pool != null) {
			this.pool.stop();
		}
		this.async.shutdownNow();
		// Kills the running trees and the waiting sandboxes at once.
		this.runner.close();
		if (this.pool != null) {
			Objects.requireNonNull(this.poolClosing).clean();
			// What it was preparing ended with the runner's close.
			this.pool.awaitEnd(POOL_END_WAIT);
		}
		// Last: the waiting sandboxes' directories are back by now, and with none of
		// this JVM's left the lock file goes too.
		this.privateDirectories.close();
	}

	@Override
	public String toString() {
		return "ProcessIsolatedExecutor[" + this.isolation + "]";
	}

}
