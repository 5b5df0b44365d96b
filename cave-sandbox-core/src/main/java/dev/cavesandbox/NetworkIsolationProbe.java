package dev.cavesandbox;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.cavesandbox.mechanism.BubblewrapMechanism;
import dev.cavesandbox.mechanism.FilesystemView;
import dev.cavesandbox.mechanism.SandboxExecMechanism;
import dev.cavesandbox.mechanism.SandboxMechanism;
import dev.cavesandbox.mechanism.UnshareMechanism;

/**
 * Measures, rather than assumes, whether this host can isolate a command from the network: it runs
 * the real production command line of each candidate mechanism once and checks what the child saw.
 * With {@link MechanismChoice#AUTO} the candidates are, strongest first, bubblewrap then
 * unshare on Linux (unshare first when this JVM is PID 1: bwrap leaves its sandbox's init for PID 1
 * to reap, and a JVM does not reap processes it did not start), and sandbox-exec on macOS; the
 * first one verified wins. Other systems
 * (Windows, the BSDs) have no supported primitive.
 * <p>
 * On Linux, in a working directory created where production ones are, a small script reports what
 * the child sees. Isolation counts as verified only when its network namespace differs from the
 * JVM's and has no interface but {@code lo}, its PID namespace differs from the JVM's (bubblewrap's
 * own init is PID 1 there, the command is not), its IPC namespace differs from the JVM's (System V
 * IPC and POSIX message queues), it holds no capability, every hidden directory is
 * a different filesystem than the host's one, the working directory is visible and writable, and,
 * where asked, the root is read-only and {@code lo} is up. On macOS the probe runs
 * {@code /usr/bin/true} under the profile (Seatbelt refuses to nest: {@code sandbox_apply}), then
 * checks that a TCP connect to a listener of its own on {@code 127.0.0.1} fails and nothing arrives.
 * <p>
 * When the wrapper fails, its stderr tells the causes apart (see {@link #classify(String)}); a bare
 * exit code would be ambiguous, since the command itself could return it.
 */
public final class NetworkIsolationProbe {

	static final String MARKER_FILE = "cave-sandbox-probe-marker";

	static final String MARKER = "cave-sandbox-probe";

	/**
	 * The script the Linux probe runs in the sandbox; the hidden directories follow as arguments.
	 * Only sh, coreutils and /proc: nothing that a minimal host lacks.
	 */
	static final String LINUX_SCRIPT = """
			echo "net=$(readlink /proc/self/ns/net)"
			echo "pid=$(readlink /proc/self/ns/pid)"
			echo "ipc=$(readlink /proc/self/ns/ipc)"
			echo "uid=$(id -u)"
			sed -n 's/^CapEff:[[:space:]]*/caps=/p' /proc/self/status
			echo "marker=$(cat %s)"
			echo ok > cave-sandbox-probe-write && echo write=ok
			if [ -w / ]; then echo root=writable; else echo root=read-only; fi
			for d in "$@"; do echo "hidden=$(stat -c %%d "$d") $d"; done
			if grep -qs 127.0.0.1 /proc/net/fib_trie; then echo lo=up; else echo lo=down; fi
			sed -n 's/^ *\\([^ |:]*\\):.*/if=\\1/p' /proc/net/dev
			""".formatted(MARKER_FILE);

	private static final String NO_CAPABILITIES = "0000000000000000";

	/**
	 * bwrap's outer process exits without reaping its sandbox's init, which PID 1 then has to reap;
	 * a JVM that is PID 1 (a container without an init) never reaps it.
	 */
	static final String BWRAP_UNDER_PID_1 = "warning: this JVM is PID 1, and bwrap leaves one exited process per "
			+ "execution for PID 1 to reap, which a JVM does not: run the container with an init (docker run --init, "
			+ "tini) or use mechanism UNSHARE";

	private static final int OUTPUT_LIMIT = 64 * 1024;

	private final SandboxSettings settings;

	private final String osName;

	private final long jvmPid;

	/**
	 * Create a probe for this JVM's operating system.
	 * @param settings the settings that choose the mechanism, name the binaries and the probe
	 * timeout
	 */
	public NetworkIsolationProbe(SandboxSettings settings) {
		this(settings, System.getProperty("os.name", ""), ProcessHandle.current().pid());
	}

	NetworkIsolationProbe(SandboxSettings settings, String osName) {
		this(settings, osName, ProcessHandle.current().pid());
	}

	NetworkIsolationProbe(SandboxSettings settings, String osName, long jvmPid) {
		this.settings = settings;
		this.osName = osName;
		this.jvmPid = jvmPid;
	}

	/**
	 * Run the probe. Takes a few tens of milliseconds on a host that isolates; never longer than
	 * the probe timeout ({@link SandboxSettings#probeTimeout()}) per candidate.
	 * @return the verdict, never {@code null}
	 */
	public IsolationCapability probe() {
		long start = System.nanoTime();
		if (this.settings.mechanism() == MechanismChoice.NONE) {
			// The cause's description already names the property: no detail to add.
			return IsolationCapability.unavailable(UnavailabilityCause.MECHANISM_DISABLED, "", since(start));
		}
		List<MechanismChoice> candidates = candidates();
		if (candidates.isEmpty()) {
			return IsolationCapability.unavailable(UnavailabilityCause.UNSUPPORTED_OS, unsupportedDetail(),
					since(start));
		}
		List<String> rejected = new ArrayList<>();
		IsolationCapability reported = null;
		for (MechanismChoice candidate : candidates) {
			IsolationCapability capability = probe(candidate);
			if (capability.available()) {
				List<String> verified = new ArrayList<>(capability.verified());
				rejected.forEach((reason) -> verified.add("not chosen: " + reason));
				if (candidate == MechanismChoice.BWRAP && this.jvmPid == 1) {
					verified.add(BWRAP_UNDER_PID_1);
				}
				return IsolationCapability.available(capability.sandbox(), verified, capability.privateLoopback(),
						since(start));
			}
			rejected.add(name(candidate) + " unavailable, " + capability.cause()
					+ (capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")"));
			if (reported == null || reported.cause() == UnavailabilityCause.BINARY_MISSING) {
				reported = capability;
			}
		}
		String detail = (candidates.size() == 1) ? reported.detail() : String.join("; ", rejected);
		return IsolationCapability.unavailable(reported.cause(), detail, since(start));
	}

	private List<MechanismChoice> candidates() {
		String os = this.osName.toLowerCase(Locale.ROOT);
		boolean linux = os.startsWith("linux");
		boolean macos = os.startsWith("mac") || os.startsWith("darwin");
		return switch (this.settings.mechanism()) {
			case AUTO -> !linux ? (macos ? List.of(MechanismChoice.SANDBOX_EXEC) : List.of())
					: (this.jvmPid == 1) ? List.of(MechanismChoice.UNSHARE, MechanismChoice.BWRAP)
							: List.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE);
			case BWRAP, UNSHARE -> linux ? List.of(this.settings.mechanism()) : List.of();
			case SANDBOX_EXEC -> macos ? List.of(MechanismChoice.SANDBOX_EXEC) : List.of();
			case NONE -> List.of();
		};
	}

	private String unsupportedDetail() {
		String detail = "os.name=" + this.osName;
		if (this.settings.mechanism() != MechanismChoice.AUTO) {
			detail += ", mechanism " + this.settings.mechanism();
		}
		if (this.osName.toLowerCase(Locale.ROOT).startsWith("windows")) {
			detail += ": Windows has no network namespace or Seatbelt equivalent for one child process";
		}
		return detail;
	}

	private static String name(MechanismChoice choice) {
		return choice.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	private IsolationCapability probe(MechanismChoice candidate) {
		long start = System.nanoTime();
		try {
			return (candidate == MechanismChoice.SANDBOX_EXEC) ? probeSandboxExec(start) : probeLinux(candidate, start);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT, "the probe was interrupted",
					since(start));
		}
	}

	private IsolationCapability probeLinux(MechanismChoice candidate, long start) throws InterruptedException {
		Host host = Host.current(this.settings);
		SandboxMechanism mechanism = (candidate == MechanismChoice.BWRAP)
				? new BubblewrapMechanism(this.settings.bwrapPath(), host.view())
				: new UnshareMechanism(this.settings.setprivPath(), this.settings.unsharePath(),
						Files.isExecutable(this.settings.ipPath()) ? this.settings.ipPath() : null, host.view(),
						host.uid(), host.gid(), true);
		IsolationCapability missing = checkBinaries(mechanism, start);
		if (missing != null) {
			return missing;
		}
		Path directory;
		try {
			directory = createProbeDirectory();
		}
		catch (IOException ex) {
			return IsolationCapability.unavailable(UnavailabilityCause.UNKNOWN,
					"could not create the probe's working directory in " + this.settings.workDirectory()
							+ " (workDirectory): " + ex.getMessage(),
					since(start));
		}
		try (ProcessRunner runner = new ProcessRunner(this.settings.killGracePeriod())) {
			List<String> argv = probeArgv(host.view());
			ProcessRunner.Outcome outcome = run(runner, mechanism.commandLine(argv, directory, false), directory);
			if (mechanism instanceof UnshareMechanism unshare && outcome.exitCode() != 0
					&& text(outcome.stderr()).contains("--map-user")) {
				// util-linux before 2.38 lacks --map-user: the command stays uid 0, without capabilities.
				mechanism = new UnshareMechanism(unshare.setpriv(), unshare.unshare(), unshare.ip(), unshare.filesystem(),
						unshare.uid(), unshare.gid(), false);
				outcome = run(runner, mechanism.commandLine(argv, directory, false), directory);
			}
			IsolationCapability verdict = verdict(mechanism, outcome, host, false, since(start));
			if (!verdict.available()) {
				return verdict;
			}
			List<String> verified = new ArrayList<>(verdict.verified());
			boolean privateLoopback = verdict.privateLoopback();
			if (!privateLoopback) {
				String loopbackFact;
				if (mechanism.supportsPrivateLoopback()) {
					ProcessRunner.Outcome withLoopback = run(runner, mechanism.commandLine(argv, directory, true),
							directory);
					IsolationCapability loopback = verdict(mechanism, withLoopback, host, true, since(start));
					privateLoopback = loopback.available();
					loopbackFact = privateLoopback ? "private loopback on request: lo up, verified"
							: "private loopback unavailable: " + loopback.cause() + " (" + loopback.detail() + ")";
				}
				else {
					loopbackFact = "private loopback unavailable: no ip binary at " + this.settings.ipPath()
							+ " (ipPath)";
				}
				verified.add(loopbackFact);
				if (this.settings.loopback() && !privateLoopback) {
					return IsolationCapability.unavailable(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE,
							name(candidate) + ": " + loopbackFact, since(start));
				}
			}
			return IsolationCapability.available(mechanism, verified, privateLoopback, since(start));
		}
		catch (IOException ex) {
			return launchFailure(ex, start);
		}
		finally {
			deleteProbeDirectory(directory);
		}
	}

	private IsolationCapability probeSandboxExec(long start) throws InterruptedException {
		SandboxExecMechanism mechanism = new SandboxExecMechanism(this.settings.sandboxExecPath(),
				this.settings.readOnlyRoot());
		IsolationCapability missing = checkBinaries(mechanism, start);
		if (missing != null) {
			return missing;
		}
		if (this.settings.loopback()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE,
					"sandbox-exec: macOS has no network namespaces", since(start));
		}
		Path directory;
		try {
			directory = createProbeDirectory();
		}
		catch (IOException ex) {
			return IsolationCapability.unavailable(UnavailabilityCause.UNKNOWN,
					"could not create the probe's working directory in " + this.settings.workDirectory() + ": "
							+ ex.getMessage(),
					since(start));
		}
		try (ProcessRunner runner = new ProcessRunner(this.settings.killGracePeriod());
				ServerSocket listener = new ServerSocket()) {
			ProcessRunner.Outcome applied = run(runner,
					mechanism.commandLine(List.of("/usr/bin/true"), directory, false), directory);
			if (applied.timedOut() || applied.exitCode() != 0) {
				return failure(applied, since(start));
			}
			listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			String script = "echo " + MARKER + "; exec 3<>/dev/tcp/127.0.0.1/" + listener.getLocalPort()
					+ " && echo connected >&3";
			ProcessRunner.Outcome connect = run(runner,
					mechanism.commandLine(List.of("/bin/bash", "-c", script), directory, false), directory);
			return sandboxExecVerdict(mechanism, connect, accepted(listener), since(start));
		}
		catch (IOException ex) {
			return launchFailure(ex, start);
		}
		finally {
			deleteProbeDirectory(directory);
		}
	}

	static IsolationCapability sandboxExecVerdict(SandboxExecMechanism mechanism, ProcessRunner.Outcome connect,
			boolean arrived, Duration took) {
		if (connect.timedOut()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT,
					"the connect test did not finish within " + took.toMillis() + " ms", took);
		}
		if (!text(connect.stdout()).contains(MARKER)) {
			return notVerified("the connect test did not run inside the profile (exit " + connect.exitCode() + ": "
					+ text(connect.stderr()).trim() + ")", took);
		}
		if (arrived || connect.exitCode() == 0) {
			return notVerified("a TCP connect from inside the sandbox-exec profile reached a listener of the probe on "
					+ "127.0.0.1 (exit " + connect.exitCode() + ")", took);
		}
		String stderr = text(connect.stderr()).trim();
		List<String> verified = List.of("sandbox-exec applied the deny-network profile (sandbox_apply succeeded)",
				"a TCP connect from inside to a listener of the probe on 127.0.0.1 failed and nothing arrived ("
						+ (stderr.isEmpty() ? "exit " + connect.exitCode() : stderr) + ")",
				"host unix sockets: denied by (deny network*), which covers unix-socket connects",
				mechanism.readOnlyRoot() ? "root filesystem: writes denied except the working directory and /dev"
						: "root filesystem: writable (readOnlyRoot false)");
		return IsolationCapability.available(mechanism, verified, false, took);
	}

	private static boolean accepted(ServerSocket listener) throws IOException {
		// The child has exited: a connection it made is already queued.
		listener.setSoTimeout(200);
		try (Socket socket = listener.accept()) {
			return true;
		}
		catch (SocketTimeoutException ex) {
			return false;
		}
	}

	private static List<String> probeArgv(FilesystemView view) {
		List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", LINUX_SCRIPT, "cave-sandbox-probe"));
		view.hiddenDirectories().forEach((directory) -> argv.add(directory.toString()));
		return argv;
	}

	private IsolationCapability checkBinaries(SandboxMechanism mechanism, long start) {
		for (Path binary : mechanism.binaries()) {
			if (!Files.exists(binary)) {
				return IsolationCapability.unavailable(UnavailabilityCause.BINARY_MISSING,
						mechanism.name() + ": " + binary + " does not exist", since(start));
			}
			if (Files.isDirectory(binary) || !Files.isExecutable(binary)) {
				return IsolationCapability.unavailable(UnavailabilityCause.BINARY_NOT_EXECUTABLE,
						mechanism.name() + ": " + binary + " is not executable", since(start));
			}
		}
		return null;
	}

	private Path createProbeDirectory() throws IOException {
		Path directory = Files.createTempDirectory(this.settings.workDirectory(), "cave-sandbox-probe-").toRealPath();
		Files.writeString(directory.resolve(MARKER_FILE), MARKER);
		return directory;
	}

	private static void deleteProbeDirectory(Path directory) {
		try {
			Files.deleteIfExists(directory.resolve(MARKER_FILE));
			Files.deleteIfExists(directory.resolve("cave-sandbox-probe-write"));
			Files.deleteIfExists(directory);
		}
		catch (IOException ex) {
			// A leftover empty probe directory is harmless.
		}
	}

	private ProcessRunner.Outcome run(ProcessRunner runner, List<String> commandLine, Path directory)
			throws IOException, InterruptedException {
		return runner.run(new ProcessRunner.Spec(commandLine, directory, Map.of("PATH", SandboxSettings.BASELINE_PATH),
				null, this.settings.probeTimeout(), OUTPUT_LIMIT, null, null, true));
	}

	private static IsolationCapability launchFailure(IOException ex, long start) {
		String message = String.valueOf(ex.getMessage());
		UnavailabilityCause cause = message.contains("error=13") ? UnavailabilityCause.BINARY_NOT_EXECUTABLE
				: message.contains("error=2") ? UnavailabilityCause.BINARY_MISSING : UnavailabilityCause.UNKNOWN;
		return IsolationCapability.unavailable(cause, message, since(start));
	}

	private static IsolationCapability failure(ProcessRunner.Outcome outcome, Duration took) {
		if (outcome.timedOut()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT,
					"no answer within " + took.toMillis() + " ms", took);
		}
		String stderr = text(outcome.stderr()).trim();
		return IsolationCapability.unavailable(classify(stderr), "exit " + outcome.exitCode() + ": " + stderr, took);
	}

	/**
	 * Judge what a Linux mechanism's child reported with {@link #LINUX_SCRIPT}.
	 * @param mechanism the mechanism that ran it
	 * @param outcome what the wrapper and the child produced
	 * @param host what the same facts are outside the sandbox
	 * @param loopback whether a private loopback was requested (then {@code lo} must be up)
	 * @param took how long the probe took so far
	 * @return the verdict
	 */
	static IsolationCapability verdict(SandboxMechanism mechanism, ProcessRunner.Outcome outcome, Host host,
			boolean loopback, Duration took) {
		if (outcome.timedOut() || outcome.exitCode() != 0) {
			return failure(outcome, took);
		}
		Map<String, List<String>> facts = new LinkedHashMap<>();
		for (String line : text(outcome.stdout()).lines().toList()) {
			int separator = line.indexOf('=');
			if (separator > 0) {
				facts.computeIfAbsent(line.substring(0, separator), (key) -> new ArrayList<>())
					.add(line.substring(separator + 1).trim());
			}
		}
		List<String> verified = new ArrayList<>();
		String net = first(facts, "net");
		if (!differs("net", net, host.netNamespace())) {
			return notVerified("the child's network namespace " + net + " is not a new one (host: "
					+ host.netNamespace() + ")", took);
		}
		verified.add("network namespace " + net + " differs from the JVM's " + host.netNamespace());
		List<String> interfaces = facts.getOrDefault("if", List.of());
		if (!interfaces.equals(List.of("lo"))) {
			return notVerified("the child sees the interfaces " + interfaces + ", expected only lo", took);
		}
		verified.add("only interface: lo");
		boolean loopbackUp = first(facts, "lo").equals("up");
		if (loopback && !loopbackUp) {
			return notVerified("a private loopback was requested but lo is down in the child", took);
		}
		verified.add(loopbackUp ? "loopback: up, private (the host's loopback is another namespace's)"
				: "loopback: down");
		String pid = first(facts, "pid");
		if (!differs("pid", pid, host.pidNamespace())) {
			return notVerified("the child's PID namespace " + pid + " is not a new one (host: " + host.pidNamespace()
					+ ")", took);
		}
		verified.add("PID namespace " + pid + " differs from the JVM's " + host.pidNamespace());
		String ipc = first(facts, "ipc");
		if (!differs("ipc", ipc, host.ipcNamespace())) {
			return notVerified("the child's IPC namespace " + ipc + " is not a new one (host: " + host.ipcNamespace()
					+ "): the host's System V IPC and POSIX message queues would be in reach", took);
		}
		verified.add("IPC namespace " + ipc + " differs from the JVM's " + host.ipcNamespace());
		String caps = first(facts, "caps");
		if (!caps.equals(NO_CAPABILITIES)) {
			return notVerified("the child holds capabilities (CapEff=" + caps + ")", took);
		}
		verified.add("capabilities: none");
		String uid = first(facts, "uid");
		verified.add(uid.equals(String.valueOf(host.uid())) ? "uid " + uid + ": the caller's"
				: "uid " + uid + ": the caller " + host.uid() + " is mapped to root without capabilities");
		if (!first(facts, "marker").equals(MARKER) || !first(facts, "write").equals("ok")) {
			return notVerified("the working directory is not visible and writable in the child", took);
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
				return notVerified("the hidden directory " + directory.getKey() + " is still the host's in the child"
						+ " (device " + (device.isEmpty() ? "unknown" : device) + ")", took);
			}
			hidden.add(directory.getKey().toString());
		}
		verified.add(hidden.isEmpty() ? "hidden directories: none" : "hidden: " + String.join(", ", hidden)
				+ " (private empty tmpfs)");
		boolean readOnly = first(facts, "root").equals("read-only");
		if (host.view().readOnlyRoot() && !readOnly) {
			return notVerified("the root filesystem is writable in the child", took);
		}
		verified.add(readOnly ? "root filesystem: read-only" : "root filesystem: writable");
		return IsolationCapability.available(mechanism, verified, loopbackUp, took);
	}

	/**
	 * Whether the child's namespace is another one than the JVM's; never when either could not be
	 * read, so that a JVM that cannot see its own namespace does not accept any child's.
	 */
	private static boolean differs(String type, String child, String jvm) {
		String prefix = type + ":[";
		return child.startsWith(prefix) && jvm.startsWith(prefix) && !child.equals(jvm);
	}

	private static String first(Map<String, List<String>> facts, String key) {
		List<String> values = facts.getOrDefault(key, List.of());
		return values.isEmpty() ? "" : values.get(0);
	}

	/**
	 * Tell the causes apart from what a wrapper wrote on stderr: util-linux reports
	 * {@code unshare failed: <strerror>} and {@code write failed /proc/self/uid_map}, bubblewrap
	 * {@code Creating new namespace failed}, {@code No permissions to create new namespace} and
	 * {@code setting up uid map}, mount(8) {@code mount: ...}, sandbox-exec {@code sandbox_apply}.
	 * @param stderr the wrapper's stderr
	 * @return the cause, {@link UnavailabilityCause#UNKNOWN} if none matches
	 */
	static UnavailabilityCause classify(String stderr) {
		if (stderr.contains("sandbox_apply")) {
			return UnavailabilityCause.NESTED_SANDBOX_REFUSED;
		}
		if (stderr.contains("uid_map") || stderr.contains("gid_map") || stderr.contains("setgroups")
				|| stderr.contains("uid map") || stderr.contains("gid map") || stderr.contains("RTM_NEWADDR")) {
			return UnavailabilityCause.UID_MAP_REFUSED;
		}
		if (stderr.contains("No space left on device") || stderr.contains("(ENOSPC)")) {
			return UnavailabilityCause.NAMESPACE_LIMIT;
		}
		if (stderr.contains("unshare failed: Invalid argument")
				|| stderr.contains("Creating new namespace failed: Invalid argument")) {
			return UnavailabilityCause.USER_NAMESPACES_UNSUPPORTED;
		}
		if (stderr.contains("unshare failed: Operation not permitted")
				|| stderr.contains("No permissions to create new namespace")
				|| stderr.contains("Creating new namespace failed: Operation not permitted")) {
			return UnavailabilityCause.KERNEL_REFUSED;
		}
		if (stderr.startsWith("mount:") || stderr.contains("\nmount:") || stderr.contains("bwrap: Can't mount")
				|| stderr.contains("bwrap: Can't bind mount") || stderr.contains("bwrap: Can't find source path")) {
			return UnavailabilityCause.MOUNT_REFUSED;
		}
		return UnavailabilityCause.UNKNOWN;
	}

	private static IsolationCapability notVerified(String detail, Duration took) {
		return IsolationCapability.unavailable(UnavailabilityCause.NOT_VERIFIED, detail, took);
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static Duration since(long start) {
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/**
	 * The facts outside the sandbox that the child's are compared with.
	 *
	 * @param netNamespace the JVM's network namespace ({@code net:[...]})
	 * @param pidNamespace the JVM's PID namespace ({@code pid:[...]})
	 * @param ipcNamespace the JVM's IPC namespace ({@code ipc:[...]})
	 * @param uid the JVM's uid
	 * @param gid the JVM's gid
	 * @param view the hidden directories (resolved, existing) and the root's mode
	 * @param hiddenDevices the device number of each hidden directory on the host
	 */
	record Host(String netNamespace, String pidNamespace, String ipcNamespace, long uid, long gid, FilesystemView view,
			Map<Path, Long> hiddenDevices) {

		static Host current(SandboxSettings settings) {
			List<Path> existing = new ArrayList<>();
			for (Path directory : settings.hiddenDirectories()) {
				try {
					Path real = directory.toRealPath();
					if (Files.isDirectory(real) && real.getParent() != null) {
						existing.add(real);
					}
				}
				catch (IOException ex) {
					// Does not exist on this host: nothing to hide.
				}
			}
			FilesystemView view = FilesystemView.of(existing, settings.readOnlyRoot());
			Map<Path, Long> devices = new LinkedHashMap<>();
			for (Path directory : view.hiddenDirectories()) {
				devices.put(directory, ((Number) attribute(directory, "unix:dev")).longValue());
			}
			Path self = Path.of("/proc/self");
			return new Host(link("/proc/self/ns/net"), link("/proc/self/ns/pid"), link("/proc/self/ns/ipc"),
					((Number) attribute(self, "unix:uid")).longValue(), ((Number) attribute(self, "unix:gid")).longValue(),
					view, devices);
		}

		private static Object attribute(Path path, String name) {
			try {
				return Files.getAttribute(path, name);
			}
			catch (IOException | UnsupportedOperationException ex) {
				return -1L;
			}
		}

		private static String link(String path) {
			try {
				return Files.readSymbolicLink(Path.of(path)).toString();
			}
			catch (IOException | UnsupportedOperationException ex) {
				return "unknown";
			}
		}

	}

}
