package dev.cavesandbox.internal.probe;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
import dev.cavesandbox.internal.workspace.FilesystemViewCheck;
import dev.cavesandbox.internal.workspace.PrivateHome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;
import dev.cavesandbox.internal.mechanism.ShellScripts;

/**
 * Verifies one Linux mechanism (bubblewrap or unshare) by running its real command line
 * with a small script that reports what the child sees, and comparing that with the
 * {@link HostFacts}. Isolation counts as verified only when the child's network namespace
 * differs from the JVM's and has no interface but {@code lo}, its PID namespace differs
 * from the JVM's (bubblewrap's own init is PID 1 there, the command is not), its IPC
 * namespace differs from the JVM's (System V IPC and POSIX message queues), it holds no
 * capability, every hidden directory is a different filesystem than the host's one, the
 * working directory is visible and writable, and, where asked, the root is read-only and
 * {@code lo} is up. When {@code lo} stays down, a second run checks whether the mechanism
 * can bring up a private loopback on request.
 */
public final class LinuxProbe {

	/**
	 * The script the probe runs in the sandbox ({@code probe.sh}); the names of
	 * {@link ProbeSession}'s files and the hidden directories follow as arguments
	 * ({@link #argv(FilesystemView)}). Only sh, coreutils and /proc: nothing that a
	 * minimal host lacks.
	 */
	static final String SCRIPT = ShellScripts.load("probe.sh");

	private static final String NO_CAPABILITIES = "0000000000000000";

	/** CapEff of a command user: CAP_DAC_OVERRIDE (1) and CAP_FOWNER (3). */
	private static final String COMMAND_USER_CAPABILITIES = "000000000000000a";

	private static final String UID_MAP = "/proc/self/uid_map";

	/**
	 * How a verified fact begins that names what the rung does not give, and what stands
	 * in for it.
	 */
	public static final String NOT_GIVEN = "not given: ";

	/**
	 * Why a root JVM's commands stay root, as the process limit's not-given fact says.
	 */
	private static final String NO_COMMAND_USER = "no command user (cave.sandbox.linux.command-user is 0, or the JVM "
			+ "lacks CAP_SETUID and CAP_SETGID to switch to one)";

	/** What the probe's child says when it cannot reach its directory by its path. */
	private static final String PATH_UNREACHABLE = "path=unreachable";

	private static final String NO_SIGNALS = "0000000000000000";

	private final SandboxSettings settings;

	private final MechanismChoice choice;

	/**
	 * Create a probe of one Linux mechanism.
	 * @param settings the settings that name the binaries, the hidden directories and
	 * what is required (read-only root, private loopback)
	 * @param choice {@link MechanismChoice#BWRAP} or {@link MechanismChoice#UNSHARE}
	 */
	public LinuxProbe(SandboxSettings settings, MechanismChoice choice) {
		this.settings = settings;
		this.choice = choice;
	}

	/**
	 * Run the probe.
	 * @return the verdict, never {@code null}
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
		// The home of the private directories and of the extracted launcher is hidden
		// too,
		// also where the work directory is not: no command reaches the launcher or
		// another
		// execution's directory through it (its own directory is bound back).
		List<Path> alsoHidden = new ArrayList<>();
		try {
			alsoHidden.add(PrivateHome.of(this.settings.workDirectory()).toRealPath());
		}
		catch (IOException ex) {
			// No private directory can be created there either: executions fail, coded.
		}
		HostFacts host = HostFacts.current(this.settings, alsoHidden);
		int commandUser = this.settings.linux().commandUser();
		if (host.uid() == 0 && initialUserNamespace() && commandUser != 0 && mayMapIds()) {
			// The kernel exempts the host's root from RLIMIT_NPROC: a root JVM's commands
			// run as the command user, in a user namespace that the launcher prepares (on
			// the seccomp rung, which has none, each execution as a uid of the host of
			// its
			// own from the range, with the command user's gid: the probe verifies the
			// range's first uid).
			launcher = new Launcher(launcher.path(), launcher.userNamespaces(), commandUser);
			if (this.choice == MechanismChoice.SECCOMP) {
				launcher = launcher.withCommandUser(this.settings.linux().commandUserRange().first());
			}
		}
		SandboxMechanism mechanism = mechanism(launcher, host);
		IsolationCapability missing = ProbeSession.missingBinary(mechanism, start);
		if (missing != null) {
			return missing;
		}
		IsolationCapability verdict = ProbeSession.verify(this.settings, start,
				(session) -> check(session, mechanism, host));
		if (verdict.cause() == UnavailabilityCause.NAMESPACE_LIMIT && !initialUserNamespace()) {
			// The limit that was hit is an outer sandbox's, not the host's sysctl.
			return IsolationCapability.unavailable(UnavailabilityCause.NESTING_FORBIDDEN,
					verdict.detail() + "; this JVM runs in a user namespace other than the initial one (" + UID_MAP
							+ ": " + uidMap() + ")",
					verdict.probeTime());
		}
		return verdict;
	}

	private SandboxMechanism mechanism(Launcher launcher, HostFacts host) {
		SandboxSettings.Linux linux = this.settings.linux();
		Path ip = Files.isExecutable(linux.ipPath()) ? linux.ipPath() : null;
		return switch (this.choice) {
			case BWRAP -> new BubblewrapMechanism(linux.bwrapPath(), launcher, host.view());
			case UNSHARE -> new UnshareMechanism(linux.setprivPath(), linux.unsharePath(), ip, launcher, host.view(),
					host.uid(), host.gid(), true);
			case NAMESPACES -> new NamespacesMechanism(linux.setprivPath(), linux.unsharePath(), ip, launcher,
					host.view(), host.uid(), host.gid(), true);
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

	private IsolationCapability check(ProbeSession session, SandboxMechanism candidate, HostFacts host)
			throws IOException, InterruptedException {
		SandboxMechanism mechanism = candidate;
		List<String> argv = argv(host.view());
		ProcessRunner.Outcome outcome = session.run(mechanism, argv, false, true);
		if (outcome.exitCode() != 0 && ProbeSession.text(outcome.stderr()).contains("--map-user")) {
			// util-linux before 2.38 lacks --map-user: the command stays uid 0, without
			// capabilities.
			SandboxMechanism withoutUid = withoutUidMapping(mechanism);
			if (withoutUid != null) {
				mechanism = withoutUid;
				outcome = session.run(mechanism, argv, false, true);
			}
		}
		String unreachable = null;
		if (mechanism instanceof SeccompMechanism seccomp && seccomp.launcher().hasCommandUser()
				&& ProbeSession.text(outcome.stdout()).lines().anyMatch(PATH_UNREACHABLE::equals)) {
			// The command user of this rung is a uid of the host, which cannot reach a
			// work directory that only root can pass through: its commands stay root,
			// and the facts say why the process limit does not hold.
			unreachable = "the command user " + seccomp.launcher().commandUser() + " cannot reach the work directory "
					+ this.settings.workDirectory() + " by its path (give others search permission, x, on it and its "
					+ "parents, or choose another cave.sandbox.work-directory)";
			mechanism = new SeccompMechanism(
					new Launcher(seccomp.launcher().path(), seccomp.launcher().userNamespaces()), seccomp.filesystem());
			outcome = session.run(mechanism, argv, false, true);
		}
		boolean hostRoot = host.uid() == 0 && initialUserNamespace();
		IsolationCapability verdict = verdict(mechanism, outcome, host, false, this.settings.limits(), hostRoot,
				session.took());
		if (!verdict.available()) {
			return verdict;
		}
		List<String> verified = new ArrayList<>(verdict.verified());
		if (unreachable != null) {
			String why = unreachable;
			verified.replaceAll((fact) -> fact.startsWith(NOT_GIVEN + "the process limit")
					? fact.replace(NO_COMMAND_USER, why) : fact);
		}
		boolean privateLoopback = verdict.privateLoopback();
		if (!privateLoopback) {
			String loopbackFact;
			if (!mechanism.namespaces().contains(LinuxNamespace.NETWORK)) {
				loopbackFact = "private loopback unavailable: the " + mechanism.name()
						+ " rung has no network namespace";
			}
			else if (mechanism.supportsPrivateLoopback()) {
				ProcessRunner.Outcome withLoopback = session.run(mechanism, argv, true, true);
				IsolationCapability loopback = verdict(mechanism, withLoopback, host, true, this.settings.limits(),
						hostRoot, session.took());
				privateLoopback = loopback.available();
				loopbackFact = privateLoopback ? "private loopback on request: lo up, verified"
						: "private loopback unavailable: " + loopback.cause() + " (" + loopback.detail() + ")";
			}
			else {
				loopbackFact = "private loopback unavailable: no ip binary at " + this.settings.linux().ipPath()
						+ " (ipPath)";
			}
			verified.add(loopbackFact);
			if (this.settings.loopback() && !privateLoopback) {
				return IsolationCapability.unavailable(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE,
						mechanism.name() + ": " + loopbackFact, session.took());
			}
		}
		return IsolationCapability.available(mechanism, verified, privateLoopback, session.took());
	}

	private static @Nullable SandboxMechanism withoutUidMapping(SandboxMechanism mechanism) {
		if (mechanism instanceof UnshareMechanism unshare) {
			return new UnshareMechanism(unshare.setpriv(), unshare.unshare(), unshare.ip(), unshare.launcher(),
					unshare.filesystem(), unshare.uid(), unshare.gid(), false);
		}
		if (mechanism instanceof NamespacesMechanism namespaces) {
			return new NamespacesMechanism(namespaces.setpriv(), namespaces.unshare(), namespaces.ip(),
					namespaces.launcher(), namespaces.filesystem(), namespaces.uid(), namespaces.gid(), false);
		}
		return null;
	}

	private static List<String> argv(FilesystemView view) {
		List<String> argv = new ArrayList<>(
				List.of("/bin/sh", "-c", SCRIPT, "cave-sandbox-probe", ProbeSession.MARKER_FILE,
						ProbeSession.WRITE_FILE, ProbeSession.OUTSIDE_SUFFIX, ProbeSession.PLANTED_SUFFIX));
		view.hiddenDirectories().forEach((directory) -> argv.add(directory.toString()));
		return argv;
	}

	/**
	 * Judge what a Linux mechanism's child reported with {@link #SCRIPT}.
	 * @param mechanism the mechanism that ran it
	 * @param outcome what the wrapper and the child produced
	 * @param host what the same facts are outside the sandbox
	 * @param loopback whether a private loopback was requested (then {@code lo} must be
	 * up)
	 * @param took how long the probe took so far
	 * @return the verdict
	 */
	static IsolationCapability verdict(SandboxMechanism mechanism, ProcessRunner.Outcome outcome, HostFacts host,
			boolean loopback, Duration took) {
		return verdict(mechanism, outcome, host, loopback, ResourceLimits.NONE, false, took);
	}

	/**
	 * Judge what a Linux mechanism's child reported with {@link #SCRIPT}, run with the
	 * given resource limits: each limit that is set must be the child's (its
	 * {@code /proc/self/limits}), each private tmpfs of the set size.
	 * @param mechanism the mechanism that ran it
	 * @param outcome what the wrapper and the child produced
	 * @param host what the same facts are outside the sandbox
	 * @param loopback whether a private loopback was requested
	 * @param limits the limits the child ran with
	 * @param hostRoot whether the JVM runs as the host's root (uid 0 of the initial user
	 * namespace), which the kernel exempts from the process limit
	 * @param took how long the probe took so far
	 * @return the verdict
	 */
	static IsolationCapability verdict(SandboxMechanism mechanism, ProcessRunner.Outcome outcome, HostFacts host,
			boolean loopback, ResourceLimits limits, boolean hostRoot, Duration took) {
		if (outcome.timedOut() || outcome.exitCode() != 0) {
			return WrapperFailureClassifier.failure(outcome, took);
		}
		Map<String, List<String>> facts = new LinkedHashMap<>();
		for (String line : ProbeSession.text(outcome.stdout()).lines().toList()) {
			int separator = line.indexOf('=');
			if (separator > 0) {
				facts.computeIfAbsent(line.substring(0, separator), (key) -> new ArrayList<>())
					.add(line.substring(separator + 1).trim());
			}
		}
		Set<LinuxNamespace> namespaces = mechanism.namespaces();
		boolean mountNamespace = namespaces.contains(LinuxNamespace.MOUNT);
		boolean pidNamespace = namespaces.contains(LinuxNamespace.PID);
		List<String> verified = new ArrayList<>();
		boolean loopbackUp = false;
		if (namespaces.contains(LinuxNamespace.NETWORK)) {
			String net = first(facts, "net");
			if (!differs("net", net, host.netNamespace())) {
				return ProbeSession.notVerified("the child's network namespace " + net + " is not a new one (host: "
						+ host.netNamespace() + ")", took);
			}
			verified.add("network namespace " + net + " differs from the JVM's " + host.netNamespace());
			List<String> interfaces = facts.getOrDefault("if", List.of());
			if (!interfaces.equals(List.of("lo"))) {
				return ProbeSession.notVerified("the child sees the interfaces " + interfaces + ", expected only lo",
						took);
			}
			verified.add("only interface: lo");
			loopbackUp = first(facts, "lo").equals("up");
			if (loopback && !loopbackUp) {
				return ProbeSession.notVerified("a private loopback was requested but lo is down in the child", took);
			}
			verified.add(loopbackUp ? "loopback: up, private (the host's loopback is another namespace's)"
					: "loopback: down");
		}
		else {
			verified.add(NOT_GIVEN + "network namespace: the command shares the JVM's network stack; the seccomp "
					+ "filter refuses every socket address family instead, and no private loopback is possible");
		}
		if (namespaces.contains(LinuxNamespace.PID)) {
			String pid = first(facts, "pid");
			if (!differs("pid", pid, host.pidNamespace())) {
				return ProbeSession.notVerified(
						"the child's PID namespace " + pid + " is not a new one (host: " + host.pidNamespace() + ")",
						took);
			}
			verified.add("PID namespace " + pid + " differs from the JVM's " + host.pidNamespace());
		}
		else {
			verified.add(NOT_GIVEN + "PID namespace: the command sees the JVM's processes; the launcher, a child "
					+ "subreaper, kills what is left of the command's process tree");
		}
		if (namespaces.contains(LinuxNamespace.IPC)) {
			String ipc = first(facts, "ipc");
			if (!differs("ipc", ipc, host.ipcNamespace())) {
				return ProbeSession.notVerified("the child's IPC namespace " + ipc + " is not a new one (host: "
						+ host.ipcNamespace() + "): the host's System V IPC and POSIX message queues would be in reach",
						took);
			}
			verified.add("IPC namespace " + ipc + " differs from the JVM's " + host.ipcNamespace());
		}
		else {
			verified.add(NOT_GIVEN + "IPC namespace: System V IPC objects and POSIX message queues that the JVM's "
					+ "user can open are in reach");
		}
		Launcher launcher = Objects.requireNonNull(mechanism.launcher(), "a Linux mechanism has a launcher");
		// On the seccomp rung the command user is a uid of the host, without
		// capabilities.
		boolean namespacedUser = launcher.hasCommandUser() && !namespaces.isEmpty();
		String caps = first(facts, "caps");
		if (!caps.equals(namespacedUser ? COMMAND_USER_CAPABILITIES : NO_CAPABILITIES)) {
			return ProbeSession.notVerified("the child holds capabilities (CapEff=" + caps + ")"
					+ (namespacedUser ? ", expected only CAP_DAC_OVERRIDE and CAP_FOWNER" : ""), took);
		}
		verified.add(namespacedUser
				? "capabilities: CAP_DAC_OVERRIDE and CAP_FOWNER only, over files of root:root (the command user's "
						+ "namespace maps " + "no other owner)"
				: "capabilities: none");
		List<String> refusals = launcher.refusals(loopback, !mountNamespace, !pidNamespace);
		String launcherFailure = launcherFailure(facts, refusals);
		if (launcherFailure != null) {
			return ProbeSession.notVerified(launcherFailure, took);
		}
		verified.add("no_new_privs, seccomp filter, signals unblocked and not ignored");
		verified.add("seccomp filter refuses: " + String.join(", ", refusals));
		if (!mountNamespace) {
			IsolationCapability landlock = landlock(facts, host, verified, took);
			if (landlock != null) {
				return landlock;
			}
		}
		String limitFailure = limits(facts, limits, host.hardLimits(), namespaces.isEmpty(),
				hostRoot && !launcher.hasCommandUser(), verified);
		if (limitFailure != null) {
			return ProbeSession.notVerified(limitFailure, took);
		}
		String uid = first(facts, "uid");
		if (launcher.hasCommandUser()) {
			if (!uid.equals(String.valueOf(launcher.commandUser()))) {
				return ProbeSession.notVerified(
						"the child runs as uid " + uid + ", not as the command user " + launcher.commandUser(), took);
			}
			String gid = first(facts, "gid");
			if (!gid.equals(String.valueOf(launcher.commandGroup()))) {
				return ProbeSession.notVerified(
						"the child runs as gid " + gid + ", not as the command user's group " + launcher.commandGroup(),
						took);
			}
			verified.add("uid " + uid + ": the command user of a root JVM, so that the process limit holds"
					+ (namespacedUser ? "" : " (the first of the command user range: each execution runs as a uid "
							+ "of the host of its own, which no other process runs as when it is handed out, so that "
							+ "executions share no process count and cannot signal or ptrace each other; choose uids "
							+ "that nothing else uses)"));
			if (!namespacedUser) {
				verified.add("gid " + gid + ": the command user's, which every execution shares (files and IPC "
						+ "objects made group-accessible, the working directory during the execution)");
			}
			if (!namespacedUser && !first(facts, "path").equals("ok")) {
				return ProbeSession.notVerified("the command user " + uid + " cannot reach the working directory by "
						+ "its path: give others search permission (x) on the work directory and its parents, or set "
						+ "cave.sandbox.work-directory to a directory that uid " + uid + " can reach", took);
			}
			if (!namespacedUser) {
				verified.add("working directory: reachable by its path for the command user, whose group it is "
						+ "during the execution");
				if (!host.view().readablePaths().isEmpty() || !host.view().writablePaths().isEmpty()) {
					verified.add("listed paths: reached as uid " + uid + " of the host, without capabilities, as "
							+ "far as their modes let others (a root-owned 0755 writable path is not writable)");
				}
			}
		}
		else {
			verified.add(uid.equals(String.valueOf(host.uid())) ? "uid " + uid + ": the caller's"
					: "uid " + uid + ": the caller " + host.uid() + " is mapped to root without capabilities");
		}
		if (!first(facts, "marker").equals(ProbeSession.MARKER) || !first(facts, "write").equals("ok")) {
			return ProbeSession.notVerified("the working directory is not visible and writable in the child", took);
		}
		verified.add("working directory: visible and writable");
		String viewFailure = FilesystemViewCheck.check(facts, host, mountNamespace, verified);
		if (viewFailure != null) {
			return ProbeSession.notVerified(viewFailure, took);
		}
		if (!mountNamespace) {
			if (host.view().isSystem()) {
				verified.add(NOT_GIVEN + "hidden directories: without a mount namespace /tmp, /run and the other "
						+ "hidden directories are not private ones; in the system view Landlock refuses reading and "
						+ "writing them, and the host's unix sockets there are unreachable because socket(AF_UNIX) is "
						+ "refused");
				verified.add("root filesystem: writes refused outside the working directory and the writable paths "
						+ "(Landlock)");
			}
			else {
				verified.add(NOT_GIVEN + "hidden directories: without a mount namespace the host's files stay "
						+ "readable (/tmp, /run, other executions' working directories); its unix sockets there are "
						+ "unreachable because socket(AF_UNIX) is refused");
				verified.add("root filesystem: writes refused outside the working directory (Landlock), reads allowed"
						+ (host.view().readOnlyRoot() ? ""
								: "; readOnlyRoot=false has no effect on this rung: Landlock limits writes all the same"));
			}
			verified.add(NOT_GIVEN + "the metadata of files outside the working directory that the JVM's user owns: "
					+ "Landlock does not cover chmod (set-id bits stay refused by the filter), chown to the user's own "
					+ "groups, extended attributes and timestamps");
			if (namespaces.contains(LinuxNamespace.PID)) {
				verified.add(NOT_GIVEN + "a /proc of its own: /proc is the host's and lists its processes (their "
						+ "memory and environment are refused by Landlock)");
			}
			return IsolationCapability.available(mechanism, verified, loopbackUp, took);
		}
		List<String> hidden = new ArrayList<>();
		for (Map.Entry<Path, Long> directory : host.hiddenDevices().entrySet()) {
			String device = about(facts, "hidden", directory.getKey());
			// An unknown host device (-1) proves nothing either way.
			if (device.isEmpty() || directory.getValue() < 0 || device.equals(String.valueOf(directory.getValue()))) {
				return ProbeSession.notVerified("the hidden directory " + directory.getKey()
						+ " is still the host's in the child (device " + (device.isEmpty() ? "unknown" : device) + ")",
						took);
			}
			if (limits.tmpfsSize() != null) {
				String size = about(facts, "size", directory.getKey());
				if (!ofSize(size, limits.tmpfsSize())) {
					return ProbeSession.notVerified("the private tmpfs over " + directory.getKey() + " is not of "
							+ limits.tmpfsSize() + " bytes (blocks:block size " + size + ")", took);
				}
			}
			hidden.add(directory.getKey().toString());
		}
		verified.add(hidden.isEmpty() ? "hidden directories: none"
				: "hidden: " + String.join(", ", hidden) + " (private empty tmpfs"
						+ ((limits.tmpfsSize() != null) ? ", " + bytes(limits.tmpfsSize()) + " each" : "") + ")");
		boolean readOnly = first(facts, "root").equals("read-only");
		if (host.view().readOnlyRoot() && !readOnly) {
			return ProbeSession.notVerified("the root filesystem is writable in the child", took);
		}
		verified.add(readOnly ? "root filesystem: read-only" : "root filesystem: writable");
		return IsolationCapability.available(mechanism, verified, loopbackUp, took);
	}

	/** The value of a {@code KEY=VALUE PATH} fact about the path, or empty. */
	private static String about(Map<String, List<String>> facts, String key, Path path) {
		String suffix = " " + path;
		return facts.getOrDefault(key, List.of())
			.stream()
			.filter((fact) -> fact.endsWith(suffix))
			.map((fact) -> fact.substring(0, fact.length() - suffix.length()))
			.findFirst()
			.orElse("");
	}

	/**
	 * Check the child's resource limits ({@code limit=NAME:SOFT} lines from
	 * {@code /proc/self/limits}) against the limits it ran with, and state them in the
	 * facts. On a rung without a user namespace the launcher adds the uid's other tasks
	 * to the process limit, and reports how many it added ({@code nproc_others=N}).
	 * @return the failure, or {@code null} when every set limit is the child's
	 */
	private static @Nullable String limits(Map<String, List<String>> facts, ResourceLimits limits,
			Map<String, Long> jvmHardLimits, boolean sharedUid, boolean hostRoot, List<String> verified) {
		Map<String, String> child = new LinkedHashMap<>();
		for (String fact : facts.getOrDefault("limit", List.of())) {
			int separator = fact.lastIndexOf(':');
			child.put(fact.substring(0, separator), fact.substring(separator + 1));
		}
		List<String> stated = new ArrayList<>();
		Long processes = (limits.processes() != null) ? limits.processes().longValue() : null;
		Long openFiles = (limits.openFiles() != null) ? limits.openFiles().longValue() : null;
		// Without a user namespace the child's RLIMIT_NPROC is the setting plus the
		// uid's other tasks that the launcher reported: exactly that, never just the
		// setting (which would count the JVM's own threads against the command).
		String others = first(facts, "nproc_others");
		boolean counted = sharedUid && processes != null;
		if (counted && !isNumber(others)) {
			return "the launcher did not report the uid's other tasks it added to the process limit";
		}
		Long nproc = counted ? Long.valueOf(processes + Long.parseLong(others)) : processes;
		// Labelled with the names of the cave.sandbox.limits.* properties, "none" where
		// the child has no limit, as the properties say it.
		List<Limit> wanted = List.of(new Limit("data size", "memory", limits.memory(), true),
				new Limit("processes", "processes", nproc, false),
				new Limit("cpu time", "cpu-time", limits.cpuSeconds(), false),
				new Limit("file size", "file-size", limits.fileSize(), true),
				new Limit("open files", "open-files", openFiles, false),
				new Limit("core file size", "core files", 0L, true));
		for (Limit setting : wanted) {
			Limit limit = setting.within(jvmHardLimits.get(setting.name()));
			String actual = child.getOrDefault(limit.name(), "");
			if (limit != setting) {
				if (!actual.equals(String.valueOf(limit.expected()))) {
					return "the child's " + limit.label() + " limit is " + (actual.isEmpty() ? "unknown" : actual)
							+ ", not " + limit.expected() + " (the JVM's own hard limit, below the setting "
							+ setting.expected() + ")";
				}
				stated.add(limit.label() + " " + limit.shown(actual) + " (the JVM's own hard limit, below the setting "
						+ setting.expected() + ")");
				continue;
			}
			if (counted && limit.name().equals("processes") && actual.equals(String.valueOf(nproc))) {
				stated.add("processes " + processes + " beyond the " + others
						+ " other tasks of the uid at start (RLIMIT_NPROC " + actual
						+ ": without a user namespace, every task of the uid counts, also those in other PID "
						+ "namespaces that the launcher cannot see)");
				continue;
			}
			if (limit.expected() != null && !actual.equals(limit.expected().toString())) {
				return "the child's " + limit.label() + " limit is " + (actual.isEmpty() ? "unknown" : actual)
						+ ", not " + limit.expected();
			}
			if (!actual.isEmpty()) {
				stated.add(limit.label() + " " + limit.shown(actual));
			}
		}
		if (hostRoot && processes != null) {
			// Set in the child, but the kernel does not hold root to it: said here too,
			// not
			// only in the not-given fact below.
			stated.replaceAll(
					(entry) -> entry.startsWith("processes ") ? entry + " (set, not enforced for root)" : entry);
		}
		if (!stated.isEmpty()) {
			verified.add("limits: " + String.join(", ", stated));
		}
		if (hostRoot && processes != null) {
			verified.add(NOT_GIVEN + "the process limit: the command runs as the host's root (uid 0), which the "
					+ "kernel exempts from RLIMIT_NPROC (kernel/fork.c); " + NO_COMMAND_USER
					+ "; a JVM of another user bounds it");
		}
		return null;
	}

	private static boolean isNumber(String text) {
		return !text.isEmpty() && text.length() < 19 && text.chars().allMatch(Character::isDigit);
	}

	/**
	 * Whether {@code stat -f -c %b:%S} reports a filesystem of the size, rounded up to
	 * whole blocks.
	 */
	private static boolean ofSize(String blocks, long size) {
		int separator = blocks.indexOf(':');
		if (separator < 0 || !isNumber(blocks.substring(0, separator)) || !isNumber(blocks.substring(separator + 1))) {
			return false;
		}
		long count = Long.parseLong(blocks.substring(0, separator));
		long blockSize = Long.parseLong(blocks.substring(separator + 1));
		return blockSize > 0 && count == (size + blockSize - 1) / blockSize;
	}

	private static String bytes(long size) {
		if (size == 0) {
			return "0";
		}
		String[] units = { "GiB", "MiB", "KiB" };
		for (int i = 0; i < units.length; i++) {
			long unit = 1L << (10 * (3 - i));
			if (size % unit == 0) {
				return (size / unit) + " " + units[i];
			}
		}
		return size + " bytes";
	}

	/** A resource limit as {@code /proc/self/limits} names it, and its setting. */
	private record Limit(String name, String label, @Nullable Long expected, boolean inBytes) {

		/**
		 * Return this limit as the launcher sets it under the JVM's hard limit of that
		 * resource: a setting above it becomes it (the launcher's soft limit, which is
		 * the CPU limit's too while its hard limit is one second above); this limit
		 * itself when it is not set or not above.
		 */
		Limit within(@Nullable Long jvmHard) {
			if (this.expected == null || jvmHard == null || this.expected <= jvmHard
					|| this.name.equals("core file size")) {
				return this;
			}
			return new Limit(this.name, this.label, jvmHard, this.inBytes);
		}

		/**
		 * Return the child's value of this limit as the properties write it: "none" for
		 * no limit, a size in bytes with its unit, a CPU time in seconds.
		 */
		String shown(String actual) {
			if (actual.equals("unlimited")) {
				return "none";
			}
			if (!isNumber(actual)) {
				return actual;
			}
			if (this.inBytes) {
				return bytes(Long.parseLong(actual));
			}
			return this.name.equals("cpu time") ? actual + "s" : actual;
		}

	}

	/**
	 * Check the Landlock layer of a rung without a mount namespace, from the launcher's
	 * {@code landlock=} line and from what the child could do: it must not have opened
	 * the JVM's memory for writing, nor written a file beside its working directory. Adds
	 * the facts; returns the failure, or {@code null} when the layer holds.
	 */
	private static @Nullable IsolationCapability landlock(Map<String, List<String>> facts, HostFacts host,
			List<String> verified, Duration took) {
		String landlock = first(facts, "landlock");
		if (landlock.isEmpty() || landlock.startsWith("unavailable")) {
			return IsolationCapability.unavailable(UnavailabilityCause.LANDLOCK_UNAVAILABLE,
					"the launcher reports landlock=" + (landlock.isEmpty() ? "(no report)" : landlock), took);
		}
		if (!first(facts, "outside_write").equals("refused")) {
			return ProbeSession.notVerified("the child wrote a file outside its working directory although the "
					+ "launcher reports landlock=" + landlock, took);
		}
		if (first(facts, "jvm").equals("invisible")) {
			return ProbeSession.notVerified("the child could not see the JVM's /proc entry, so the probe could not "
					+ "check that the JVM's memory is out of its reach", took);
		}
		if (!first(facts, "jvm_mem").equals("refused")) {
			return ProbeSession.notVerified("the child could open the JVM's memory (/proc/PID/mem) for writing", took);
		}
		String reads = Arrays.stream(landlock.split(" "))
			.filter((part) -> part.startsWith("reads="))
			.map((part) -> part.substring("reads=".length()))
			.findFirst()
			.orElse("(no report)");
		String expected = host.view().isSystem() ? "view" : "host";
		if (!reads.equals(expected)) {
			return ProbeSession.notVerified("the settings ask for a " + (host.view().isSystem() ? "system" : "host")
					+ " view of the filesystem, but the launcher reports reads=" + reads + " (landlock=" + landlock
					+ ")", took);
		}
		verified.add("Landlock ABI " + landlock);
		verified.add("writes outside the working directory: refused (Landlock)");
		verified.add("the JVM's memory (/proc/PID/mem): refused (Landlock)");
		verified.add(first(facts, "jvm_environ").equals("refused") ? "the JVM's environment: refused (Landlock)"
				: NOT_GIVEN + "the JVM's environment (/proc/PID/environ) is readable");
		verified.add(first(facts, "jvm_signal").equals("refused")
				? "signals to the JVM and every process outside the sandbox: refused (Landlock scope)"
				: NOT_GIVEN + "signal scoping (Landlock ABI 6+): the command can signal the JVM and other processes "
						+ "of its user");
		return null;
	}

	/**
	 * Return why the launcher's confinement was not seen in the child, or {@code null}
	 * when every part of it was: no_new_privs, a seccomp filter, no blocked or ignored
	 * signal, and each refusal of the filter (and nothing it let through).
	 * @param facts what the child reported
	 * @param refusals what the launcher's filter must have refused, by the names its
	 * check reports
	 */
	private static @Nullable String launcherFailure(Map<String, List<String>> facts, List<String> refusals) {
		if (!first(facts, "nnp").equals("1") || !first(facts, "seccomp").equals("2")) {
			return "the launcher's no_new_privs and seccomp filter are not in force in the child (NoNewPrivs="
					+ first(facts, "nnp") + ", Seccomp=" + first(facts, "seccomp") + ")";
		}
		if (!first(facts, "sigblk").equals(NO_SIGNALS) || !first(facts, "sigign").equals(NO_SIGNALS)) {
			return "the child has blocked or ignored signals (SigBlk=" + first(facts, "sigblk") + ", SigIgn="
					+ first(facts, "sigign") + ")";
		}
		List<String> allowed = facts.getOrDefault("allowed", List.of());
		if (!allowed.isEmpty()) {
			return "the launcher's seccomp filter let through: " + String.join(", ", allowed);
		}
		List<String> refused = facts.getOrDefault("refused", List.of())
			.stream()
			.map((line) -> line.substring(0, line.lastIndexOf(' ')))
			.toList();
		List<String> missing = new ArrayList<>(refusals);
		missing.removeAll(refused);
		if (!missing.isEmpty()) {
			return "the launcher did not report refusing: " + String.join(", ", missing);
		}
		return null;
	}

	/**
	 * Whether the child's namespace is another one than the JVM's; never when either
	 * could not be read, so that a JVM that cannot see its own namespace does not accept
	 * any child's.
	 */
	private static boolean differs(String type, String child, String jvm) {
		String prefix = type + ":[";
		return child.startsWith(prefix) && jvm.startsWith(prefix) && !child.equals(jvm);
	}

	public static String first(Map<String, List<String>> facts, String key) {
		List<String> values = facts.getOrDefault(key, List.of());
		return values.isEmpty() ? "" : values.get(0);
	}

}
