package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.CommandUsers;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.workspace.PrivateHome;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
import org.jspecify.annotations.Nullable;

/**
 * Verifies one Linux mechanism (a mechanism of the ladder: bubblewrap, unshare,
 * namespaces or seccomp) by running its real command line, as an execution would, with
 * {@link ProbeScript}, which reports what the child sees; {@link LinuxVerdict} judges
 * that against the {@link HostFacts}. Where the host lacks a part of the mechanism (a
 * command user that cannot reach the work directory) the probe runs it again without that
 * part. When {@code lo} stays down, a second run checks whether the mechanism can bring
 * up a private loopback on request.
 */
public final class LinuxProbe {

	/**
	 * How a verified fact begins that names what the mechanism does not give, and what
	 * stands in for it.
	 */
	public static final String NOT_GIVEN = "not given: ";

	private static final String UID_MAP = "/proc/self/uid_map";

	/** What the probe's child says when it cannot reach its directory by its path. */
	private static final String PATH_UNREACHABLE = "path=unreachable";

	/**
	 * Who is told the uids that this thread's seccomp probes take
	 * ({@link #observingCommandUids}).
	 */
	private static final ThreadLocal<@Nullable LongConsumer> commandUidObserver = new ThreadLocal<>();

	private final SandboxSettings settings;

	private final MechanismChoice choice;

	/**
	 * Create a probe of one Linux mechanism.
	 * @param settings the settings that name the binaries, the hidden directories and
	 * what is required (read-only root, private loopback)
	 * @param choice {@link MechanismChoice#BWRAP}, {@link MechanismChoice#UNSHARE},
	 * {@link MechanismChoice#NAMESPACES} or {@link MechanismChoice#SECCOMP}
	 */
	public LinuxProbe(SandboxSettings settings, MechanismChoice choice) {
		this.settings = settings;
		this.choice = choice;
	}

	/**
	 * Run the probe. On seccomp with a root JVM its child runs as a uid of the command
	 * user range that the probe takes from the pool which the executors of this JVM share
	 * ({@link CommandUsers}) and gives back after the run (its check, one scan of
	 * {@code /proc}, on this thread): no running execution of this JVM holds that uid
	 * meanwhile, so none of their commands runs beside the probe's dumpable child as its
	 * uid.
	 * @return the verdict, never {@code null}; {@link UnavailabilityCause#NOT_VERIFIED}
	 * where no uid of the range is free for the probe (each is held by a running
	 * execution or a process runs as it; the detail names them)
	 * @throws InterruptedException if the thread was interrupted while the probe ran
	 */
	public IsolationCapability probe() throws InterruptedException {
		long start = System.nanoTime();
		Launcher launcher;
		try {
			launcher = new Launcher(LauncherInstallation.shared().resolve(this.settings),
					this.settings.linux().userNamespaces());
		}
		catch (LauncherInstallation.UnavailableException ex) {
			return IsolationCapability.unavailable(UnavailabilityCause.LAUNCHER_UNAVAILABLE, ex.getMessage(),
					ProbeSession.since(start));
		}
		HostFacts host = HostFacts.current(this.settings, alsoHidden());
		boolean commandUser = commandUserApplies(host);
		if (!commandUser || this.choice != MechanismChoice.SECCOMP) {
			return probe(start, launcher, host, commandUser, null);
		}
		// The probe's child runs as a uid of the range that no execution of this JVM
		// holds meanwhile: a command of the same uid could reach the probe's dumpable
		// child (its /proc entries, signals).
		CommandUsers commandUsers = new CommandUsers(this.settings.linux().commandUserRange());
		long uid;
		try {
			uid = commandUsers.acquire();
		}
		catch (SandboxLaunchException ex) {
			return IsolationCapability.unavailable(UnavailabilityCause.NOT_VERIFIED,
					"no uid of the command user range is free for the probe: " + ex.getMessage(),
					ProbeSession.since(start));
		}
		try {
			LongConsumer observer = commandUidObserver.get();
			if (observer != null) {
				observer.accept(uid);
			}
			return probe(start, launcher, host, true, uid);
		}
		finally {
			commandUsers.release(uid);
		}
	}

	/**
	 * Run probes on this thread while an observer is told the uid that each seccomp probe
	 * of a root JVM takes for its child from the command users of this JVM, once it holds
	 * it and before its directory is made or its child runs (on this thread: the probe
	 * waits for the observer). A seam for the red-team tests, which start an attacker of
	 * that uid then, as a program outside the pool could once the pool has handed it out;
	 * nothing else sets it.
	 * @param observer told each uid taken
	 * @param probes the probes to run
	 * @throws Exception what the probes or the observer threw
	 */
	static void observingCommandUids(LongConsumer observer, ProbeRuns probes) throws Exception {
		commandUidObserver.set(observer);
		try {
			probes.run();
		}
		finally {
			commandUidObserver.remove();
		}
	}

	private IsolationCapability probe(long start, Launcher launcher, HostFacts host, boolean commandUser,
			@Nullable Long seccompUid) throws InterruptedException {
		SandboxMechanism mechanism = mechanism(commandUser ? withCommandUser(launcher, seccompUid) : launcher, host);
		IsolationCapability missing = ProbeSession.missingBinary(mechanism, start);
		if (missing != null) {
			return missing;
		}
		@Nullable Path preload;
		try {
			preload = sharedMemoryLibrary(mechanism);
		}
		catch (LauncherInstallation.UnavailableException | IOException ex) {
			return IsolationCapability.unavailable(UnavailabilityCause.LAUNCHER_UNAVAILABLE,
					"the shared-memory library: " + ex.getMessage(), ProbeSession.since(start));
		}
		IsolationCapability verdict = ProbeSession.verify(this.settings, start, (session) -> {
			if (preload != null) {
				session.preload(preload);
			}
			return check(session, mechanism, host);
		});
		if (verdict.cause() == UnavailabilityCause.NAMESPACE_LIMIT && !initialUserNamespace()) {
			// The limit that was hit is an outer sandbox's, not the host's sysctl.
			return IsolationCapability.unavailable(UnavailabilityCause.NESTING_FORBIDDEN,
					verdict.detail() + "; this JVM runs in a user namespace other than the initial one (" + UID_MAP
							+ ": " + uidMap() + ")",
					verdict.probeTime());
		}
		return verdict;
	}

	/**
	 * Return the shared-memory library where the mechanism's commands get it
	 * ({@link SharedMemoryPreload#neededBy}), extracted into the home, which is made
	 * searchable for a command user of the seccomp mechanism, as the executor does; else
	 * {@code null}.
	 */
	private @Nullable Path sharedMemoryLibrary(SandboxMechanism mechanism)
			throws LauncherInstallation.UnavailableException, IOException {
		if (!SharedMemoryPreload.neededBy(mechanism)) {
			return null;
		}
		Path library = SharedMemoryPreload.shared().resolve(this.settings.workDirectory());
		if (mechanism instanceof SeccompMechanism seccomp && seccomp.commandGroup() >= 0) {
			PrivateHome.makeSearchable(PrivateHome.of(this.settings.workDirectory()));
		}
		return library;
	}

	/**
	 * Return the directories hidden besides the settings': the home of the private
	 * directories and of the extracted launcher, also where the work directory is not
	 * hidden, so that no command reaches the launcher or another execution's directory
	 * through it (its own directory is bound back).
	 */
	private List<Path> alsoHidden() {
		List<Path> alsoHidden = new ArrayList<>();
		try {
			alsoHidden.add(PrivateHome.of(this.settings.workDirectory()).toRealPath());
		}
		catch (IOException ex) {
			// No private directory can be created there either: executions fail, coded.
		}
		return alsoHidden;
	}

	/**
	 * Return the launcher with the command user where the JVM is the host's root: the
	 * kernel exempts the host's root from RLIMIT_NPROC, so a root JVM's commands run as
	 * the command user, in a user namespace that the launcher prepares; on the seccomp
	 * mechanism, which has none, each execution runs as a uid of the host of its own from
	 * the range, with the command user's gid (the probe verifies a uid of the range that
	 * it takes from the executors' pool of this JVM, {@code seccompUid}).
	 */
	private Launcher withCommandUser(Launcher launcher, @Nullable Long seccompUid) {
		Launcher withCommandUser = new Launcher(launcher.path(), launcher.userNamespaces(),
				this.settings.linux().commandUser());
		return (seccompUid != null) ? withCommandUser.withCommandUser(seccompUid) : withCommandUser;
	}

	/**
	 * Whether commands run as the command user: a root JVM of the host that may map ids.
	 */
	private boolean commandUserApplies(HostFacts host) {
		int commandUser = this.settings.linux().commandUser();
		return host.uid() == 0 && initialUserNamespace() && commandUser != 0 && mayMapIds();
	}

	private SandboxMechanism mechanism(Launcher launcher, HostFacts host) {
		SandboxSettings.Linux linux = this.settings.linux();
		return switch (this.choice) {
			case BWRAP -> new BubblewrapMechanism(linux.bwrapPath(), launcher, host.view());
			case UNSHARE -> new UnshareMechanism(linux.setprivPath(), linux.unsharePath(), launcher, host.view(),
					host.uid(), host.gid(), true);
			case NAMESPACES -> new NamespacesMechanism(linux.setprivPath(), linux.unsharePath(), launcher, host.view(),
					host.uid(), host.gid(), true);
			case SECCOMP -> new SeccompMechanism(launcher, host.view());
			default -> throw new IllegalStateException("not a Linux mechanism: " + this.choice);
		};
	}

	/**
	 * Whether this JVM holds {@code CAP_SETUID} and {@code CAP_SETGID} (its
	 * {@code /proc/self/status} {@code CapEff}), which the launcher needs to map a
	 * command user in a user namespace of its own (user_namespaces(7)). A root JVM
	 * without them (a container that drops every capability but does not change the user)
	 * keeps its commands root, and the facts say that the process limit is not given.
	 */
	static boolean mayMapIds() {
		try {
			long effective = Files.readAllLines(Path.of("/proc/self/status"))
				.stream()
				.filter((line) -> line.startsWith("CapEff:"))
				.mapToLong((line) -> Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16))
				.findFirst()
				.orElse(0);
			long needed = (1L << 6) | (1L << 7);
			return (effective & needed) == needed;
		}
		catch (IOException | NumberFormatException ex) {
			return false;
		}
	}

	/**
	 * Whether this JVM runs in the initial user namespace, whose uid map is the identity
	 * of every id (user_namespaces(7)).
	 */
	public static boolean initialUserNamespace() {
		return uidMap().equals("0 0 4294967295");
	}

	private static String uidMap() {
		try {
			return String.join(" ", Files.readString(Path.of(UID_MAP)).trim().split("\\s+"));
		}
		catch (IOException ex) {
			return "unreadable";
		}
	}

	/**
	 * Run the checks, then fail a verdict that would be available where a file appeared
	 * in the directory beside the working directory that the child reported it could not
	 * write ({@link ProbeSession#writtenOutside()}).
	 */
	private IsolationCapability check(ProbeSession session, SandboxMechanism candidate, HostFacts host)
			throws IOException, InterruptedException {
		IsolationCapability verdict = checkRuns(session, candidate, host);
		Path written = session.writtenOutside();
		if (verdict.available() && written != null) {
			return ProbeSession.notVerified(verdict.mechanismName() + ": " + written + " appeared beside the working "
					+ "directory although the child reported outside_write=refused: the sandbox let a write through, "
					+ "or a process of the command uid outside it wrote there", session.took());
		}
		return verdict;
	}

	private IsolationCapability checkRuns(ProbeSession session, SandboxMechanism candidate, HostFacts host)
			throws IOException, InterruptedException {
		List<String> argv = ProbeScript.argv(host.view());
		Run run = run(session, candidate, argv);
		if (run.failure() != null) {
			return ProbeSession.notVerified(run.mechanism().name() + ": " + run.failure(), session.took());
		}
		boolean hostRoot = host.uid() == 0 && initialUserNamespace();
		IsolationCapability verdict = LinuxVerdict.judge(run.mechanism(), run.outcome(), host, false,
				this.settings.limits(), hostRoot, session.took());
		if (!verdict.available()) {
			return verdict;
		}
		List<String> verified = new ArrayList<>(verdict.verified());
		if (run.unreachable() != null) {
			String why = run.unreachable();
			verified.replaceAll((fact) -> fact.startsWith(NOT_GIVEN + "the process limit")
					? fact.replace(LimitsCheck.NO_COMMAND_USER, why) : fact);
		}
		if (verdict.privateLoopback()) {
			return IsolationCapability.available(run.mechanism(), verified, true, session.took());
		}
		return withLoopbackFact(session, run.mechanism(), argv, host, hostRoot, verified);
	}

	/**
	 * Run the script with the mechanism, and again with what stands in where the host
	 * lacks a part of it: without the command user where the seccomp mechanism's command
	 * user, a uid of the host, cannot reach a work directory that only root can pass
	 * through (its commands stay root, and the facts say why the process limit does not
	 * hold).
	 */
	private Run run(ProbeSession session, SandboxMechanism candidate, List<String> argv)
			throws IOException, InterruptedException {
		SandboxMechanism mechanism = candidate;
		ProcessRunner.Outcome outcome = script(session, mechanism, argv, false);
		if (mechanism instanceof SeccompMechanism seccomp && seccomp.launcher().hasCommandUser()
				&& ProbeSession.text(outcome.stdout()).lines().anyMatch(PATH_UNREACHABLE::equals)) {
			// Only the modes of the directories above the session's own, as the JVM reads
			// them, send the probe on without the command user: none of them is the
			// command
			// uid's (the session's own directory, which it passed during the run, is 0700
			// again now).
			Path unpassable = WorkingDirectoryGrant.unpassableAncestor(session.directory().getParent(),
					seccomp.launcher().commandUser(), seccomp.commandGroup());
			if (unpassable == null) {
				return new Run(mechanism, outcome, null, "the command user " + seccomp.launcher().commandUser()
						+ " could not reach its working directory " + session.directory()
						+ " by its path although the modes of the directories above it let it (path=unreachable)");
			}
			String unreachable = "the command user " + seccomp.launcher().commandUser()
					+ " cannot reach the work directory " + this.settings.workDirectory() + " by its path ("
					+ unpassable + " does not let it pass: give others search permission, x, on it and its parents, "
					+ "or choose another cave.sandbox.work-directory)";
			mechanism = new SeccompMechanism(
					new Launcher(seccomp.launcher().path(), seccomp.launcher().userNamespaces()), seccomp.filesystem());
			return new Run(mechanism, script(session, mechanism, argv, false), unreachable, null);
		}
		return new Run(mechanism, outcome, null, null);
	}

	/**
	 * Run the probe's script with a mechanism and check that its child ran in the
	 * session's working directory ({@link ProbeSession#checkRanHere}).
	 */
	private static ProcessRunner.Outcome script(ProbeSession session, SandboxMechanism mechanism, List<String> argv,
			boolean loopback) throws IOException, InterruptedException {
		ProcessRunner.Outcome outcome = session.run(mechanism, argv, loopback, true);
		session.checkRanHere(outcome);
		return outcome;
	}

	/**
	 * Add the fact of the private loopback where {@code lo} stayed down: a second run
	 * checks whether the mechanism can bring one up on request.
	 * @return the mechanism available with the facts, or
	 * {@link UnavailabilityCause#PRIVATE_LOOPBACK_UNAVAILABLE} where the settings require
	 * one that it cannot give
	 */
	private IsolationCapability withLoopbackFact(ProbeSession session, SandboxMechanism mechanism, List<String> argv,
			HostFacts host, boolean hostRoot, List<String> verified) throws IOException, InterruptedException {
		boolean privateLoopback = false;
		String loopbackFact;
		// Every Linux mechanism with a network namespace brings lo up there (bwrap, the
		// launcher's root): the probe checks that it does.
		if (!mechanism.namespaces().contains(LinuxNamespace.NETWORK) || !mechanism.supportsPrivateLoopback()) {
			loopbackFact = "private loopback unavailable: the " + mechanism.name()
					+ " mechanism has no network namespace";
		}
		else {
			ProcessRunner.Outcome withLoopback = script(session, mechanism, argv, true);
			IsolationCapability loopback = LinuxVerdict.judge(mechanism, withLoopback, host, true,
					this.settings.limits(), hostRoot, session.took());
			privateLoopback = loopback.available();
			loopbackFact = privateLoopback ? "private loopback on request: lo up, verified"
					: "private loopback unavailable: " + loopback.cause() + " (" + loopback.detail() + ")";
		}
		verified.add(loopbackFact);
		if (this.settings.loopback() && !privateLoopback) {
			return IsolationCapability.unavailable(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE,
					mechanism.name() + ": " + loopbackFact, session.took());
		}
		return IsolationCapability.available(mechanism, verified, privateLoopback, session.took());
	}

	/** Probes to run while their uids are observed. */
	@FunctionalInterface
	interface ProbeRuns {

		void run() throws Exception;

	}

	/**
	 * What the probe ran: the mechanism (after what stands in for a part the host lacks),
	 * what it produced, why the command user was left out, or {@code null}, and why the
	 * run verifies nothing, or {@code null}.
	 */
	private record Run(SandboxMechanism mechanism, ProcessRunner.Outcome outcome, @Nullable String unreachable,
			@Nullable String failure) {

	}

}
