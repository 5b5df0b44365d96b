package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.cavesandbox.mechanism.BubblewrapMechanism;
import dev.cavesandbox.mechanism.FilesystemView;
import dev.cavesandbox.mechanism.Launcher;
import dev.cavesandbox.mechanism.SandboxMechanism;
import dev.cavesandbox.mechanism.UnshareMechanism;

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
final class LinuxProbe {

	/**
	 * The script the probe runs in the sandbox; the hidden directories follow as
	 * arguments. Only sh, coreutils and /proc: nothing that a minimal host lacks.
	 */
	static final String SCRIPT = """
			echo "net=$(readlink /proc/self/ns/net)"
			echo "pid=$(readlink /proc/self/ns/pid)"
			echo "ipc=$(readlink /proc/self/ns/ipc)"
			echo "uid=$(id -u)"
			sed -n 's/^CapEff:[[:space:]]*/caps=/p; s/^NoNewPrivs:[[:space:]]*/nnp=/p; s/^Seccomp:[[:space:]]*/seccomp=/p; s/^SigBlk:[[:space:]]*/sigblk=/p; s/^SigIgn:[[:space:]]*/sigign=/p' /proc/self/status
			echo "marker=$(cat %s)"
			echo ok > %s && echo write=ok
			if [ -w / ]; then echo root=writable; else echo root=read-only; fi
			for d in "$@"; do echo "hidden=$(stat -c %%d "$d") $d"; done
			if grep -qs 127.0.0.1 /proc/net/fib_trie; then echo lo=up; else echo lo=down; fi
			sed -n 's/^ *\\([^ |:]*\\):.*/if=\\1/p' /proc/net/dev
			"""
		.formatted(ProbeSession.MARKER_FILE, ProbeSession.WRITE_FILE);

	private static final String NO_CAPABILITIES = "0000000000000000";

	private static final String NO_SIGNALS = "0000000000000000";

	private final SandboxSettings settings;

	private final MechanismChoice choice;

	/**
	 * Create a probe of one Linux mechanism.
	 * @param settings the settings that name the binaries, the hidden directories and
	 * what is required (read-only root, private loopback)
	 * @param choice {@link MechanismChoice#BWRAP} or {@link MechanismChoice#UNSHARE}
	 */
	LinuxProbe(SandboxSettings settings, MechanismChoice choice) {
		this.settings = settings;
		this.choice = choice;
	}

	/**
	 * Run the probe.
	 * @return the verdict, never {@code null}
	 * @throws InterruptedException if the thread was interrupted while the probe ran
	 */
	IsolationCapability probe() throws InterruptedException {
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
			alsoHidden.add(PrivateDirectories.home(this.settings.workDirectory()).toRealPath());
		}
		catch (IOException ex) {
			// No private directory can be created there either: executions fail, coded.
		}
		HostFacts host = HostFacts.current(this.settings, alsoHidden);
		SandboxMechanism mechanism = (this.choice == MechanismChoice.BWRAP)
				? new BubblewrapMechanism(this.settings.linux().bwrapPath(), launcher, host.view())
				: new UnshareMechanism(this.settings.linux().setprivPath(), this.settings.linux().unsharePath(),
						Files.isExecutable(this.settings.linux().ipPath()) ? this.settings.linux().ipPath() : null,
						launcher, host.view(), host.uid(), host.gid(), true);
		IsolationCapability missing = ProbeSession.missingBinary(mechanism, start);
		if (missing != null) {
			return missing;
		}
		return ProbeSession.verify(this.settings, start, (session) -> check(session, mechanism, host));
	}

	private IsolationCapability check(ProbeSession session, SandboxMechanism candidate, HostFacts host)
			throws IOException, InterruptedException {
		SandboxMechanism mechanism = candidate;
		List<String> argv = argv(host.view());
		ProcessRunner.Outcome outcome = session.run(mechanism, argv, false, true);
		if (mechanism instanceof UnshareMechanism unshare && outcome.exitCode() != 0
				&& ProbeSession.text(outcome.stderr()).contains("--map-user")) {
			// util-linux before 2.38 lacks --map-user: the command stays uid 0, without
			// capabilities.
			mechanism = new UnshareMechanism(unshare.setpriv(), unshare.unshare(), unshare.ip(), unshare.launcher(),
					unshare.filesystem(), unshare.uid(), unshare.gid(), false);
			outcome = session.run(mechanism, argv, false, true);
		}
		IsolationCapability verdict = verdict(mechanism, outcome, host, false, session.took());
		if (!verdict.available()) {
			return verdict;
		}
		List<String> verified = new ArrayList<>(verdict.verified());
		boolean privateLoopback = verdict.privateLoopback();
		if (!privateLoopback) {
			String loopbackFact;
			if (mechanism.supportsPrivateLoopback()) {
				ProcessRunner.Outcome withLoopback = session.run(mechanism, argv, true, true);
				IsolationCapability loopback = verdict(mechanism, withLoopback, host, true, session.took());
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

	private static List<String> argv(FilesystemView view) {
		List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SCRIPT, "cave-sandbox-probe"));
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
		List<String> verified = new ArrayList<>();
		String net = first(facts, "net");
		if (!differs("net", net, host.netNamespace())) {
			return ProbeSession.notVerified(
					"the child's network namespace " + net + " is not a new one (host: " + host.netNamespace() + ")",
					took);
		}
		verified.add("network namespace " + net + " differs from the JVM's " + host.netNamespace());
		List<String> interfaces = facts.getOrDefault("if", List.of());
		if (!interfaces.equals(List.of("lo"))) {
			return ProbeSession.notVerified("the child sees the interfaces " + interfaces + ", expected only lo", took);
		}
		verified.add("only interface: lo");
		boolean loopbackUp = first(facts, "lo").equals("up");
		if (loopback && !loopbackUp) {
			return ProbeSession.notVerified("a private loopback was requested but lo is down in the child", took);
		}
		verified
			.add(loopbackUp ? "loopback: up, private (the host's loopback is another namespace's)" : "loopback: down");
		String pid = first(facts, "pid");
		if (!differs("pid", pid, host.pidNamespace())) {
			return ProbeSession.notVerified(
					"the child's PID namespace " + pid + " is not a new one (host: " + host.pidNamespace() + ")", took);
		}
		verified.add("PID namespace " + pid + " differs from the JVM's " + host.pidNamespace());
		String ipc = first(facts, "ipc");
		if (!differs("ipc", ipc, host.ipcNamespace())) {
			return ProbeSession.notVerified("the child's IPC namespace " + ipc + " is not a new one (host: "
					+ host.ipcNamespace() + "): the host's System V IPC and POSIX message queues would be in reach",
					took);
		}
		verified.add("IPC namespace " + ipc + " differs from the JVM's " + host.ipcNamespace());
		String caps = first(facts, "caps");
		if (!caps.equals(NO_CAPABILITIES)) {
			return ProbeSession.notVerified("the child holds capabilities (CapEff=" + caps + ")", took);
		}
		verified.add("capabilities: none");
		Launcher launcher = Objects.requireNonNull(mechanism.launcher(), "a Linux mechanism has a launcher");
		String launcherFailure = launcherFailure(launcher, facts, loopback);
		if (launcherFailure != null) {
			return ProbeSession.notVerified(launcherFailure, took);
		}
		List<String> refused = launcher.refusals(loopback);
		verified.add("no_new_privs, seccomp filter, signals unblocked and not ignored");
		verified.add("seccomp filter refuses: " + String.join(", ", refused));
		String uid = first(facts, "uid");
		verified.add(uid.equals(String.valueOf(host.uid())) ? "uid " + uid + ": the caller's"
				: "uid " + uid + ": the caller " + host.uid() + " is mapped to root without capabilities");
		if (!first(facts, "marker").equals(ProbeSession.MARKER) || !first(facts, "write").equals("ok")) {
			return ProbeSession.notVerified("the working directory is not visible and writable in the child", took);
		}
		verified.add("working directory: visible and writable");
		List<String> hidden = new ArrayList<>();
		for (Map.Entry<Path, Long> directory : host.hiddenDevices().entrySet()) {
			String expected = " " + directory.getKey();
			String device = facts.getOrDefault("hidden", List.of())
				.stream()
				.filter((fact) -> fact.endsWith(expected))
				.map((fact) -> fact.substring(0, fact.length() - expected.length()))
				.findFirst()
				.orElse("");
			// An unknown host device (-1) proves nothing either way.
			if (device.isEmpty() || directory.getValue() < 0 || device.equals(String.valueOf(directory.getValue()))) {
				return ProbeSession.notVerified("the hidden directory " + directory.getKey()
						+ " is still the host's in the child (device " + (device.isEmpty() ? "unknown" : device) + ")",
						took);
			}
			hidden.add(directory.getKey().toString());
		}
		verified.add(hidden.isEmpty() ? "hidden directories: none"
				: "hidden: " + String.join(", ", hidden) + " (private empty tmpfs)");
		boolean readOnly = first(facts, "root").equals("read-only");
		if (host.view().readOnlyRoot() && !readOnly) {
			return ProbeSession.notVerified("the root filesystem is writable in the child", took);
		}
		verified.add(readOnly ? "root filesystem: read-only" : "root filesystem: writable");
		return IsolationCapability.available(mechanism, verified, loopbackUp, took);
	}

	/**
	 * Return why the launcher's confinement was not seen in the child, or {@code null}
	 * when every part of it was: no_new_privs, a seccomp filter, no blocked or ignored
	 * signal, and each refusal of the filter (and nothing it let through).
	 */
	private static @Nullable String launcherFailure(Launcher launcher, Map<String, List<String>> facts,
			boolean loopback) {
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
		List<String> missing = new ArrayList<>(launcher.refusals(loopback));
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

	private static String first(Map<String, List<String>> facts, String key) {
		List<String> values = facts.getOrDefault(key, List.of());
		return values.isEmpty() ? "" : values.get(0);
	}

}
