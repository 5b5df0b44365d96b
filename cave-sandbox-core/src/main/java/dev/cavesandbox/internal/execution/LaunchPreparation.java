package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
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
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
import org.jspecify.annotations.Nullable;

/**
 * Prepares one execution's launch in named phases, each taking what the next needs:
 * {@link #takeSlot slot}, {@link #openOutputDirectory output directory},
 * {@link #takeCommandUser command user}, {@link #workingDirectory working directory},
 * {@link #mechanism mechanism}, {@link #startEgress egress}, {@link #environment
 * environment}, {@link SharedMemoryDirectory shared memory} (the mechanisms without a
 * mount namespace), {@link #checkCommand command}, {@link #spec command line},
 * {@link #checkLauncherUnchanged launcher}, {@link #grantToCommandUser grant}. What was
 * taken is in the {@link PreparedLaunch}, which gives it back in reverse order; a phase
 * that fails closes it at once.
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
	 * Take everything one execution needs before its spawn. Whatever fails gives back
	 * what was already taken.
	 * @param request the request merged over the settings
	 * @return the prepared launch, which the caller closes
	 * @throws SandboxLaunchException if the sandbox could not be prepared
	 */
	PreparedLaunch prepare(EffectiveRequest request) {
		takeSlot();
		PreparedLaunch launch = new PreparedLaunch(this.slots, this.privateDirectories, this.commandUsers);
		try {
			openOutputDirectory(launch, request.request());
			takeCommandUser(launch);
			WorkingDirectory directory = workingDirectory(launch, request.request());
			@Nullable SandboxMechanism mechanism = mechanism(launch, request.request());
			mechanism = startEgress(launch, request, mechanism);
			Map<String, String> environment = environment(launch, request, directory.path());
			if (mechanism != null) {
				mechanism = SharedMemoryDirectory.prepare(launch, this.privateDirectories,
						this.settings.workDirectory(), mechanism, environment);
			}
			checkCommand(mechanism, request, directory, environment);
			launch.spec(spec(launch, request, mechanism, directory, environment));
			checkLauncherUnchanged();
			launch.grant(grantToCommandUser(directory.real()));
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
	 * A private working directory with the request's input files, or the request's own,
	 * checked.
	 */
	private WorkingDirectory workingDirectory(PreparedLaunch launch, ExecutionRequest request) throws IOException {
		Path directory = request.workingDirectory();
		if (directory == null) {
			Path created = this.privateDirectories.create();
			launch.privateDirectory(created);
			InputFiles.write(created, request.inputFiles(), ProcessIsolatedExecutor.commandGroup(this.capability));
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
			WorkingDirectory directory, Map<String, String> environment) throws IOException {
		Path command = CommandResolver.check(request.command(), directory.path(), environment.get("PATH"));
		if (mechanism != null) {
			SandboxPaths.checkVisible(mechanism, command, directory.real());
		}
	}

	/**
	 * What is spawned: the argv unisolated, else the mechanism's command line around it,
	 * with the wrappers' environment (the launch token added, the variables that steer
	 * them moved inside).
	 */
	private ProcessRunner.Spec spec(PreparedLaunch launch, EffectiveRequest request,
			@Nullable SandboxMechanism mechanism, WorkingDirectory directory, Map<String, String> environment) {
		Map<String, String> wrapperEnvironment = new LinkedHashMap<>(environment);
		List<String> commandLine = request.request().argv();
		if (this.capability != null && mechanism != null) {
			wrapperEnvironment.put(LauncherContract.TOKEN_VARIABLE, launch.token);
			List<String> argv = ChildEnvironment.moveInside(commandLine, wrapperEnvironment);
			// The egress bridge listens on the private loopback, whatever the request
			// says.
			boolean loopback = launch.egress() != null || request.loopback();
			String refusal = loopback ? this.capability.loopbackRefusal() : null;
			if (refusal != null) {
				throw new InvalidExecutionRequestException(
						"loopback was requested, but " + refusal + "; leave loopback unset or false");
			}
			commandLine = mechanism.commandLine(argv, directory.real(), loopback, false, request.limits());
		}
		ExecutionRequest original = request.request();
		boolean isolated = this.capability != null;
		return request.started()
				? new ProcessRunner.Spec(commandLine, directory.path(), wrapperEnvironment, null, request.timeout(), 0,
						null, null, isolated)
				: new ProcessRunner.Spec(commandLine, directory.path(), wrapperEnvironment, original.stdin(),
						request.timeout(), request.maxOutputBytes(), original.stdoutSink(), original.stderrSink(),
						isolated);
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
	 * Hand the working directory's group to the command user where the command runs as a
	 * uid of the host without capabilities (the seccomp mechanism with a command user),
	 * which could not write it otherwise; see {@link WorkingDirectoryGrant}. Executions
	 * that overlap in one directory share the grant.
	 * @return the grant, or {@code null} where none is needed
	 */
	private @Nullable WorkingDirectoryGrant grantToCommandUser(Path realDirectory) {
		long group = ProcessIsolatedExecutor.commandGroup(this.capability);
		if (group < 0) {
			return null;
		}
		try {
			Path unpassable = WorkingDirectoryGrant.unpassableAncestor(realDirectory, group);
			if (unpassable != null) {
				throw new InvalidExecutionRequestException("working directory " + realDirectory
						+ " cannot be reached by the command user " + group + ": it may not pass through " + unpassable
						+ " (the seccomp mechanism runs a root JVM's commands as that uid of the host, which reaches its "
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

}
