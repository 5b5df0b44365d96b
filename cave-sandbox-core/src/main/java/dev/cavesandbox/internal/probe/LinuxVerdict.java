package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.probe.ViewVerdict;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
import org.jspecify.annotations.Nullable;

/**
 * Judges what a Linux mechanism's child reported with {@link ProbeScript} against the
 * {@link HostFacts}, one named check per fact, in order; the first that fails gives the
 * verdict's cause and detail, else the mechanism is available with every check's facts.
 * Each namespace the mechanism creates must differ from the JVM's (the network namespace
 * with no interface but {@code lo}, up where a private loopback was asked for); the child
 * holds no capability (a command user exactly {@code CAP_DAC_OVERRIDE} and
 * {@code CAP_FOWNER}), runs under the launcher's no_new_privs and seccomp filter with
 * every refusal reported, and, without a mount namespace, under its Landlock layer; each
 * set resource limit is the child's ({@link LimitsCheck}); the working directory is
 * visible and writable; the filesystem view holds ({@link ViewVerdict}); each hidden
 * directory is a private tmpfs (of the set size) and, where asked, the root is read-only.
 * A namespace the mechanism does not create is stated as not given
 * ({@link LinuxProbe#NOT_GIVEN}).
 */
final class LinuxVerdict {

	private static final String NO_CAPABILITIES = "0000000000000000";

	/** CapEff of a command user: CAP_DAC_OVERRIDE (1) and CAP_FOWNER (3). */
	private static final String COMMAND_USER_CAPABILITIES = "000000000000000a";

	/**
	 * CapEff of a command user without a mount namespace: CAP_DAC_OVERRIDE (1) only; no
	 * read-only root stands in front of the host's root:root files there, and Landlock
	 * does not cover chmod(2).
	 */
	private static final String UNMOUNTED_COMMAND_USER_CAPABILITIES = "0000000000000002";

	private static final String NO_SIGNALS = "0000000000000000";

	private final SandboxMechanism mechanism;

	private final Map<String, List<String>> facts;

	private final HostFacts host;

	private final boolean loopback;

	private final ResourceLimits limits;

	private final boolean hostRoot;

	private final Launcher launcher;

	private final Set<LinuxNamespace> namespaces;

	/**
	 * Whether the command user is one of a user namespace of its own, with two
	 * capabilities there; on the seccomp mechanism it is a uid of the host, without any.
	 */
	private final boolean namespacedUser;

	private final List<String> verified = new ArrayList<>();

	private boolean loopbackUp;

	private LinuxVerdict(SandboxMechanism mechanism, Map<String, List<String>> facts, HostFacts host, boolean loopback,
			ResourceLimits limits, boolean hostRoot) {
		this.mechanism = mechanism;
		this.facts = facts;
		this.host = host;
		this.loopback = loopback;
		this.limits = limits;
		this.hostRoot = hostRoot;
		this.launcher = Objects.requireNonNull(mechanism.launcher(), "a Linux mechanism has a launcher");
		this.namespaces = mechanism.namespaces();
		this.namespacedUser = this.launcher.hasCommandUser() && !this.namespaces.isEmpty();
	}

	/**
	 * Judge what a Linux mechanism's child reported, run without resource limits.
	 * @param mechanism the mechanism that ran it
	 * @param outcome what the wrapper and the child produced
	 * @param host what the same facts are outside the sandbox
	 * @param loopback whether a private loopback was requested (then {@code lo} must be
	 * up)
	 * @param took how long the probe took so far
	 * @return the verdict
	 */
	static IsolationCapability judge(SandboxMechanism mechanism, ProcessRunner.Outcome outcome, HostFacts host,
			boolean loopback, Duration took) {
		return judge(mechanism, outcome, host, loopback, ResourceLimits.NONE, false, took);
	}

	/**
	 * Judge what a Linux mechanism's child reported, run with the given resource limits.
	 * @param mechanism the mechanism that ran it
	 * @param outcome what the wrapper and the child produced
	 * @param host what the same facts are outside the sandbox
	 * @param loopback whether a private loopback was requested
	 * @param limits the limits the child ran with
	 * @param hostRoot whether the JVM runs as the host's root (uid 0 of the initial user
	 * namespace), which the kernel exempts from the process limit
	 * @param took how long the probe took so far
	 * @return the verdict; the cause that {@link WrapperFailureClassifier} names where
	 * the wrapper failed or timed out
	 */
	static IsolationCapability judge(SandboxMechanism mechanism, ProcessRunner.Outcome outcome, HostFacts host,
			boolean loopback, ResourceLimits limits, boolean hostRoot, Duration took) {
		if (outcome.timedOut() || outcome.exitCode() != 0) {
			return WrapperFailureClassifier.failure(outcome, took);
		}
		Map<String, List<String>> facts = ProbeScript.facts(ProbeSession.text(outcome.stdout()));
		return new LinuxVerdict(mechanism, facts, host, loopback, limits, hostRoot).judge(took);
	}

	private IsolationCapability judge(Duration took) {
		List<Check> checks = List.of(this::networkNamespace, this::pidNamespace, this::ipcNamespace, this::capabilities,
				this::confinement, this::landlock, this::limits, this::user, this::workingDirectory,
				this::filesystemView, mountNamespace() ? this::privateFilesystem : this::landlockFilesystem,
				this::sharedMemory);
		for (Check check : checks) {
			Failure failure = check.run();
			if (failure != null) {
				return IsolationCapability.unavailable(failure.cause(), failure.detail(), took);
			}
		}
		return IsolationCapability.available(this.mechanism, this.verified, this.loopbackUp, took);
	}

	private @Nullable Failure networkNamespace() {
		if (!this.namespaces.contains(LinuxNamespace.NETWORK)) {
			this.verified.add(LinuxProbe.NOT_GIVEN + "network namespace: the command shares the JVM's network stack; "
					+ "the seccomp filter refuses every socket address family instead, and no private loopback is "
					+ "possible");
			return null;
		}
		Failure failure = newNamespace("net", "network", this.host.netNamespace(), "");
		if (failure != null) {
			return failure;
		}
		List<String> interfaces = this.facts.getOrDefault("if", List.of());
		if (!interfaces.equals(List.of("lo"))) {
			return Failure.notVerified("the child sees the interfaces " + interfaces + ", expected only lo");
		}
		this.verified.add("only interface: lo");
		this.loopbackUp = first("lo").equals("up");
		if (this.loopback && !this.loopbackUp) {
			return Failure.notVerified("a private loopback was requested but lo is down in the child");
		}
		this.verified.add(this.loopbackUp ? "loopback: up, private (the host's loopback is another namespace's)"
				: "loopback: down");
		return null;
	}

	private @Nullable Failure pidNamespace() {
		if (!this.namespaces.contains(LinuxNamespace.PID)) {
			this.verified.add(LinuxProbe.NOT_GIVEN + "PID namespace: the command sees the JVM's processes; the "
					+ "launcher, a child subreaper, kills what is left of the command's process tree");
			return null;
		}
		return newNamespace("pid", "PID", this.host.pidNamespace(), "");
	}

	private @Nullable Failure ipcNamespace() {
		if (!this.namespaces.contains(LinuxNamespace.IPC)) {
			this.verified.add(LinuxProbe.NOT_GIVEN + "IPC namespace: System V IPC objects and POSIX message queues "
					+ "that the JVM's user can open are in reach");
			return null;
		}
		return newNamespace("ipc", "IPC", this.host.ipcNamespace(),
				": the host's System V IPC and POSIX message queues would be in reach");
	}

	/**
	 * Check that the child's namespace of a type ({@code /proc/self/ns/TYPE}) is another
	 * one than the JVM's; never when either could not be read, so that a JVM that cannot
	 * see its own namespace does not accept any child's.
	 */
	private @Nullable Failure newNamespace(String type, String name, String jvm, String consequence) {
		String child = first(type);
		String prefix = type + ":[";
		if (!child.startsWith(prefix) || !jvm.startsWith(prefix) || child.equals(jvm)) {
			return Failure.notVerified("the child's " + name + " namespace " + child + " is not a new one (host: " + jvm
					+ ")" + consequence);
		}
		this.verified.add(name + " namespace " + child + " differs from the JVM's " + jvm);
		return null;
	}

	private @Nullable Failure capabilities() {
		String caps = first("caps");
		boolean mounts = this.namespaces.contains(LinuxNamespace.MOUNT);
		String expected = !this.namespacedUser ? NO_CAPABILITIES
				: mounts ? COMMAND_USER_CAPABILITIES : UNMOUNTED_COMMAND_USER_CAPABILITIES;
		String kept = mounts ? "CAP_DAC_OVERRIDE and CAP_FOWNER" : "CAP_DAC_OVERRIDE";
		if (!caps.equals(expected)) {
			return Failure.notVerified("the child holds capabilities (CapEff=" + caps + ")"
					+ (this.namespacedUser ? ", expected only " + kept : ""));
		}
		this.verified.add(this.namespacedUser
				? "capabilities: " + kept
						+ " only, over files of root:root (the command user's namespace maps no other owner)"
				: "capabilities: none");
		return null;
	}

	/**
	 * Check the launcher's confinement in the child: no_new_privs, a seccomp filter, no
	 * blocked or ignored signal, and each refusal of the filter (and nothing it let
	 * through), by the names its check reports.
	 */
	private @Nullable Failure confinement() {
		if (!first("nnp").equals("1") || !first("seccomp").equals("2")) {
			return Failure.notVerified("the launcher's no_new_privs and seccomp filter are not in force in the child "
					+ "(NoNewPrivs=" + first("nnp") + ", Seccomp=" + first("seccomp") + ")");
		}
		if (!first("sigblk").equals(NO_SIGNALS) || !first("sigign").equals(NO_SIGNALS)) {
			return Failure.notVerified("the child has blocked or ignored signals (SigBlk=" + first("sigblk")
					+ ", SigIgn=" + first("sigign") + ")");
		}
		List<String> allowed = this.facts.getOrDefault("allowed", List.of());
		if (!allowed.isEmpty()) {
			return Failure.notVerified("the launcher's seccomp filter let through: " + String.join(", ", allowed));
		}
		List<String> refusals = this.launcher.refusals(this.loopback, !mountNamespace(),
				!this.namespaces.contains(LinuxNamespace.PID));
		List<String> missing = new ArrayList<>(refusals);
		missing.removeAll(this.facts.getOrDefault("refused", List.of())
			.stream()
			.map((line) -> line.substring(0, line.lastIndexOf(' ')))
			.toList());
		if (!missing.isEmpty()) {
			return Failure.notVerified("the launcher did not report refusing: " + String.join(", ", missing));
		}
		this.verified.add("no_new_privs, seccomp filter, signals unblocked and not ignored");
		this.verified.add("seccomp filter refuses: " + String.join(", ", refusals));
		return null;
	}

	/** Check the Landlock layer of a mechanism without a mount namespace. */
	private @Nullable Failure landlock() {
		return mountNamespace() ? null : LandlockCheck.check(this.facts, this.host.view(), this.verified);
	}

	/** Check the shared-memory directory of a mechanism without a mount namespace. */
	private @Nullable Failure sharedMemory() {
		return mountNamespace() ? null : SharedMemoryCheck.check(this.facts, this.verified);
	}

	private @Nullable Failure limits() {
		return Failure.notVerified(LimitsCheck.check(this.facts, this.limits, this.host.hardLimits(),
				this.namespaces.isEmpty(), this.hostRoot && !this.launcher.hasCommandUser(), this.verified));
	}

	/** Check that the child runs as the command user, or else as the caller. */
	private @Nullable Failure user() {
		String uid = first("uid");
		if (!this.launcher.hasCommandUser()) {
			this.verified.add(uid.equals(String.valueOf(this.host.uid())) ? "uid " + uid + ": the caller's"
					: "uid " + uid + ": the caller " + this.host.uid() + " is mapped to root without capabilities");
			return null;
		}
		if (!uid.equals(String.valueOf(this.launcher.commandUser()))) {
			return Failure.notVerified(
					"the child runs as uid " + uid + ", not as the command user " + this.launcher.commandUser());
		}
		String gid = first("gid");
		if (!gid.equals(String.valueOf(this.launcher.commandGroup()))) {
			return Failure.notVerified("the child runs as gid " + gid + ", not as the command user's group "
					+ this.launcher.commandGroup());
		}
		if (this.namespacedUser) {
			this.verified.add("uid " + uid + ": the command user of a root JVM, so that the process limit holds");
			return null;
		}
		return hostCommandUser(uid, gid);
	}

	/**
	 * Check the seccomp mechanism's command user, a uid of the host: it must reach the
	 * working directory by its path.
	 */
	private @Nullable Failure hostCommandUser(String uid, String gid) {
		this.verified.add("uid " + uid + ": the command user of a root JVM, so that the process limit holds (a "
				+ "uid of the command user range that no execution held meanwhile: each execution runs as a uid of the host of its own, which no "
				+ "other process runs as when it is handed out, so that executions share no process count and cannot "
				+ "signal or ptrace each other; choose uids that nothing else uses)");
		this.verified.add("gid " + gid + ": the command user's, which every execution shares (files and IPC objects "
				+ "made group-accessible, the working directory during the execution)");
		if (!first("path").equals("ok")) {
			return Failure.notVerified("the command user " + uid + " cannot reach the working directory by its path: "
					+ "give others search permission (x) on the work directory and its parents, or set "
					+ "cave.sandbox.work-directory to a directory that uid " + uid + " can reach");
		}
		this.verified.add("working directory: reachable by its path for the command user, whose group it is during "
				+ "the execution");
		if (!this.host.view().readablePaths().isEmpty() || !this.host.view().writablePaths().isEmpty()) {
			this.verified.add("listed paths: reached as uid " + uid + " of the host, without capabilities, as far as "
					+ "their modes let others (a root-owned 0755 writable path is not writable)");
		}
		return null;
	}

	/** Check that the child read the marker file and wrote a file of its own. */
	private @Nullable Failure workingDirectory() {
		if (!first("marker").equals(ProbeSession.MARKER) || !first("write").equals("ok")) {
			return Failure.notVerified("the working directory is not visible and writable in the child");
		}
		this.verified.add("working directory: visible and writable");
		return null;
	}

	private @Nullable Failure filesystemView() {
		return Failure.notVerified(ViewVerdict.check(this.facts, this.host, mountNamespace(), this.verified));
	}

	/**
	 * Check the filesystem of a mechanism with a mount namespace: each hidden directory
	 * is another filesystem than the host's (a private tmpfs, of the set size), and the
	 * root is read-only where the view asks for it.
	 */
	private @Nullable Failure privateFilesystem() {
		Long tmpfsSize = this.limits.tmpfsSize();
		List<String> hidden = new ArrayList<>();
		for (Map.Entry<Path, Long> directory : this.host.hiddenDevices().entrySet()) {
			String device = ProbeScript.about(this.facts, "hidden", directory.getKey());
			// An unknown host device (-1) proves nothing either way.
			if (device.isEmpty() || directory.getValue() < 0 || device.equals(String.valueOf(directory.getValue()))) {
				return Failure.notVerified("the hidden directory " + directory.getKey()
						+ " is still the host's in the child (device " + (device.isEmpty() ? "unknown" : device) + ")");
			}
			String size = ProbeScript.about(this.facts, "size", directory.getKey());
			if (tmpfsSize != null && !LimitsCheck.ofSize(size, tmpfsSize)) {
				return Failure.notVerified("the private tmpfs over " + directory.getKey() + " is not of " + tmpfsSize
						+ " bytes (blocks:block size " + size + ")");
			}
			hidden.add(directory.getKey().toString());
		}
		this.verified.add(hidden.isEmpty() ? "hidden directories: none"
				: "hidden: " + String.join(", ", hidden) + " (private empty tmpfs"
						+ ((tmpfsSize != null) ? ", " + LimitsCheck.bytes(tmpfsSize) + " each" : "") + ")");
		boolean readOnly = first("root").equals("read-only");
		if (this.host.view().readOnlyRoot() && !readOnly) {
			return Failure.notVerified("the root filesystem is writable in the child");
		}
		this.verified.add(readOnly ? "root filesystem: read-only" : "root filesystem: writable");
		return null;
	}

	/**
	 * State what a mechanism without a mount namespace gives of the filesystem: Landlock
	 * limits writes (and, in a system view, reads) in the host's own filesystem.
	 */
	private @Nullable Failure landlockFilesystem() {
		LandlockCheck.filesystemFacts(this.host.view(), this.namespaces.contains(LinuxNamespace.PID), this.verified);
		return null;
	}

	private boolean mountNamespace() {
		return this.namespaces.contains(LinuxNamespace.MOUNT);
	}

	private String first(String key) {
		return ProbeScript.first(this.facts, key);
	}

	/** One check of the verdict, which adds its facts. */
	@FunctionalInterface
	private interface Check {

		/** Return why the check failed, or {@code null} when it held. */
		@Nullable Failure run();

	}

	/**
	 * Why a check failed: the verdict's cause and detail.
	 *
	 * @param cause the cause
	 * @param detail what the child reported, in a sentence
	 */
	record Failure(UnavailabilityCause cause, String detail) {

		/**
		 * Return a failure of {@link UnavailabilityCause#NOT_VERIFIED}, or {@code null}.
		 */
		static @Nullable Failure notVerified(@Nullable String detail) {
			return (detail != null) ? new Failure(UnavailabilityCause.NOT_VERIFIED, detail) : null;
		}

	}

}
