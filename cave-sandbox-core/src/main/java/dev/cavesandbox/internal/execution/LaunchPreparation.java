package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.cavesandbox.ConcurrencyLimitExceededException;
import dev.cavesandbox.EgressUnavailableException;
import dev.cavesandbox.ExecutionCancelledException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import dev.cavesandbox.internal.egress.EgressSession;
import dev.cavesandbox.internal.launcher.CommandUsers;
import dev.cavesandbox.internal.launcher.HandoverFrame;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.process.ChildEnvironment;
import dev.cavesandbox.internal.process.CommandResolver;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.workspace.InputFiles;
import dev.cavesandbox.internal.workspace.OutputDirectory;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import org.jspecify.annotations.Nullable;

/**
 * Prepares one execution's launch in two parts, each in named phases that take what the
 * next needs. {@link #prepareSandbox(PreparedLaunch, EffectiveRequest) The sandbox},
 * which may be made ahead of its request: {@link #takeCommandUser command user},
 * {@link #workingDirectory working directory} (a private one empty), {@link #mechanism
 * mechanism}, {@link #startEgress egress}, {@link SharedMemoryDirectory shared memory}
 * (the mechanisms without a mount namespace), the launcher's command line with
 * {@code --handover} ({@link LaunchCommandLine#sandbox}), {@link #checkLauncherUnchanged
 * launcher}, {@link SandboxPaths#grantToCommandUser grant}. {@link #prepareRequest The
 * request}, at its claim: {@link #openOutputDirectory output directory}, input files,
 * {@link #environment environment}, {@link #checkCommand command},
 * {@link LaunchCommandLine#spec command line} and its {@link HandoverFrame frame}.
 * {@link #prepare} does both at once, after the {@link #takeSlot slot}. What was taken is
 * in the {@link PreparedLaunch}, which gives it back in reverse order; a phase that fails
 * closes it at once.
 */
final class LaunchPreparation {

	private final SandboxSettings settings;

	/**
	 * The verified capability, or {@code null} for the unisolated (fallback) executor.
	 */
	private final @Nullable IsolationCapability capability;

	private final @Nullable SandboxPaths paths;

	private final PrivateDirectories privateDirectories;

	private final @Nullable CommandUsers commandUsers;

	private final Semaphore slots;

	private final Supplier<HostResolver> resolver;

	LaunchPreparation(SandboxSettings settings, @Nullable IsolationCapability capability,
			PrivateDirectories privateDirectories, @Nullable CommandUsers commandUsers,
			Supplier<HostResolver> resolver) {
		this.settings = settings;
		this.capability = capability;
		this.paths = (capability != null) ? new SandboxPaths(settings, capability.mechanism()) : null;
		this.privateDirectories = privateDirectories;
		this.commandUsers = commandUsers;
		this.slots = new Semaphore(settings.maxConcurrent(), true);
		this.resolver = resolver;
	}

	/**
	 * Take everything one execution needs before its spawn (a cold launch). Whatever
	 * fails gives back what was already taken.
	 * @param request the request merged over the settings
	 * @return the prepared launch, which the caller closes
	 * @throws SandboxLaunchException if the sandbox could not be prepared
	 */
	PreparedLaunch prepare(EffectiveRequest request) {
		takeSlot();
		PreparedLaunch launch = new PreparedLaunch(this.slots, this.privateDirectories, this.commandUsers);
		launch.holdSlot();
		return guarded(launch, request, () -> {
			prepareSandbox(launch, request);
			prepareRequest(launch, request);
		});
	}

	/**
	 * Prepare a sandbox ahead of its request, without a slot: the parts of the shape's
	 * request that make the sandbox (its working directory, listed paths, egress,
	 * loopback and limits; a warm sandbox's are the settings').
	 * @param shape the request whose sandbox is prepared
	 * @return the launch, whose sandbox waits for its request
	 * @throws SandboxLaunchException if the sandbox could not be prepared
	 */
	PreparedLaunch prepareSandbox(EffectiveRequest shape) {
		PreparedLaunch launch = new PreparedLaunch(this.slots, this.privateDirectories, this.commandUsers);
		return guarded(launch, shape, () -> prepareSandbox(launch, shape));
	}

	/**
	 * Claim a launch of {@link #prepareSandbox(EffectiveRequest)} for a request of its
	 * shape: its slot, the home of the private directories checked again (as before any
	 * execution: a command may have opened it since the sandbox was prepared), then the
	 * request's part. On a failure the caller ends the waiting sandbox first, then closes
	 * the launch (whose command user must not be given back while the sandbox lives).
	 * @param launch the prepared sandbox
	 * @param request the request
	 * @throws SandboxLaunchException if the request could not be prepared
	 */
	void claim(PreparedLaunch launch, EffectiveRequest request) {
		takeSlot();
		launch.holdSlot();
		this.privateDirectories.checkHome();
		try {
			prepareRequest(launch, request);
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not start " + request.command() + ": " + ex.getMessage(), ex);
		}
	}

	private PreparedLaunch guarded(PreparedLaunch launch, EffectiveRequest request, Phases phases) {
		try {
			phases.run();
			return launch;
		}
		catch (IOException ex) {
			launch.closeQuietly();
			throw new SandboxLaunchException("could not start " + request.command() + ": " + ex.getMessage(), ex);
		}
		catch (RuntimeException | Error ex) {
			launch.closeQuietly();
			throw ex;
		}
	}

	/** The sandbox's phases. */
	private void prepareSandbox(PreparedLaunch launch, EffectiveRequest request) throws IOException {
		takeCommandUser(launch);
		WorkingDirectory directory = workingDirectory(launch, request.request());
		@Nullable SandboxMechanism mechanism = mechanism(launch, request.request());
		mechanism = startEgress(launch, request, mechanism);
		if (mechanism != null) {
			mechanism = SharedMemoryDirectory.prepare(launch, this.privateDirectories, this.settings.workDirectory(),
					mechanism);
		}
		launch.sandbox(LaunchCommandLine.sandbox(this.capability, launch, request, mechanism, directory.path(),
				directory.real()));
		checkLauncherUnchanged();
		launch.grant(SandboxPaths.grantToCommandUser(directory.real(),
				ProcessIsolatedExecutor.commandGroup(this.capability)));
	}

	/** The request's phases, once its sandbox is there. */
	private void prepareRequest(PreparedLaunch launch, EffectiveRequest request) throws IOException {
		PreparedLaunch.Sandbox sandbox = launch.sandbox();
		openOutputDirectory(launch, request.request());
		if (launch.privateDirectory() != null) {
			InputFiles.write(sandbox.directory(), request.request().inputFiles(),
					ProcessIsolatedExecutor.commandGroup(this.capability));
		}
		Map<String, String> environment = environment(launch, request, sandbox.directory());
		SharedMemoryDirectory.environment(launch, environment);
		checkCommand(sandbox.mechanism(), request, sandbox, environment);
		launch.spec(LaunchCommandLine.spec(this.capability, request, sandbox, environment));
		if (sandbox.handover()) {
			launch.frame(HandoverFrame.encode(request.request().argv(), environment));
		}
	}

	/** Phases that may throw. */
	@FunctionalInterface
	private interface Phases {

		void run() throws IOException;

	}

	/**
	 * A working directory as the command sees it, and its real path, which the mechanism
	 * binds (the path that was checked, not resolved again: a component swapped for a
	 * symbolic link in between would otherwise be followed).
	 */
	private record WorkingDirectory(Path path, Path real) {
	}

	private void takeSlot() {
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
	 * Open the request's output directory, if any, once: the files are written relative
	 * to it when the command has ended.
	 * @throws InvalidExecutionRequestException if it is not usable
	 */
	private static void openOutputDirectory(PreparedLaunch launch, ExecutionRequest request) {
		Path directory = request.outputDirectory();
		if (directory != null) {
			launch.outputDirectory(OutputDirectory.open(directory));
		}
	}

	private void takeCommandUser(PreparedLaunch launch) {
		if (this.commandUsers != null) {
			launch.commandUser(this.commandUsers.acquire());
		}
	}

	/**
	 * A private working directory, empty (the request's input files come at its claim),
	 * or the request's own, checked.
	 */
	private WorkingDirectory workingDirectory(PreparedLaunch launch, ExecutionRequest request) throws IOException {
		Path directory = request.workingDirectory();
		if (directory == null) {
			Path created = this.privateDirectories.create();
			launch.privateDirectory(created);
			return new WorkingDirectory(created, created.toRealPath());
		}
		if (!Files.isDirectory(directory)) {
			throw new InvalidExecutionRequestException("working directory " + directory
					+ " does not exist or is not a directory; create it first or leave it unset for a private one");
		}
		Path real = (this.paths != null) ? this.paths.checkWorkingDirectory(directory) : directory.toRealPath();
		return new WorkingDirectory(directory, real);
	}

	/**
	 * The verified mechanism with the request's listed paths and the command user;
	 * {@code null} unisolated.
	 */
	private @Nullable SandboxMechanism mechanism(PreparedLaunch launch, ExecutionRequest request) {
		if (this.capability == null || this.paths == null) {
			return null;
		}
		SandboxMechanism mechanism = this.paths.withListedPaths(this.capability.mechanism(), request);
		if (mechanism instanceof SeccompMechanism seccomp && launch.commandUser() != Launcher.CALLER) {
			return seccomp.withCommandUser(launch.commandUser());
		}
		return mechanism;
	}

	/**
	 * Start the egress proxy of a request with an allow-list, in a private directory of
	 * its own, and return the mechanism with its bridge.
	 * @throws EgressUnavailableException where the mechanism cannot give the bridge
	 */
	private @Nullable SandboxMechanism startEgress(PreparedLaunch launch, EffectiveRequest request,
			@Nullable SandboxMechanism mechanism) throws IOException {
		if (mechanism == null || this.capability == null || request.allowList().isEmpty()) {
			return mechanism;
		}
		String refusal = this.capability.egressRefusal();
		if (refusal != null) {
			throw new EgressUnavailableException("allowed hosts were given, but " + refusal);
		}
		EgressPolicy policy = new EgressPolicy(request.allowList(), this.settings.egress().allowPrivateDestinations(),
				this.resolver.get());
		EgressSession session = EgressSession.start(this.privateDirectories.create(), this.privateDirectories::release,
				policy, EgressListener.NONE);
		launch.egress(session);
		return mechanism.withEgress(session.bridge());
	}

	/** The command's environment, pointed at the egress proxy if it has one. */
	private Map<String, String> environment(PreparedLaunch launch, EffectiveRequest request, Path directory) {
		Map<String, String> environment = ChildEnvironment.of(this.settings, request.request(), directory,
				System.getenv());
		if (launch.egress() != null) {
			ChildEnvironment.pointAtEgressProxy(environment, request.loopback());
		}
		return environment;
	}

	/**
	 * Check that {@code argv[0]} exists, is executable and, isolated, is visible in the
	 * sandbox.
	 */
	private static void checkCommand(@Nullable SandboxMechanism mechanism, EffectiveRequest request,
			PreparedLaunch.Sandbox directory, Map<String, String> environment) throws IOException {
		Path command = CommandResolver.check(request.command(), directory.directory(), environment.get("PATH"));
		if (mechanism != null) {
			SandboxPaths.checkVisible(mechanism, command, directory.real());
		}
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

}
