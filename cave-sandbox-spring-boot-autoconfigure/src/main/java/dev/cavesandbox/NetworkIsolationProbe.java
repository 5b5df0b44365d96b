package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.cavesandbox.mechanism.UnshareMechanism;

/**
 * Measures, rather than assumes, whether this host can isolate a command from the network: it
 * runs the real production command line once, on a small shell script, and checks what the child
 * saw. Isolation counts as verified only when the child's network namespace differs from the
 * JVM's, its only interface is {@code lo}, and it is PID 1 of its own PID namespace.
 * <p>
 * When the wrapper fails, its stderr is read to tell the causes apart (see
 * {@link UnavailabilityCause}); util-linux reports them as {@code unshare failed: <strerror>} or
 * {@code write failed /proc/self/uid_map}. A bare exit code would be ambiguous, since the command
 * itself could return it.
 */
public final class NetworkIsolationProbe {

	private static final String SCRIPT = "readlink /proc/self/ns/net; echo pid=$$; cat /proc/net/dev";

	private final SandboxSettings settings;

	private final String osName;

	/**
	 * Create a probe for this JVM's operating system.
	 * @param settings the settings that name the binaries and the probe timeout
	 */
	public NetworkIsolationProbe(SandboxSettings settings) {
		this(settings, System.getProperty("os.name", ""));
	}

	NetworkIsolationProbe(SandboxSettings settings, String osName) {
		this.settings = settings;
		this.osName = osName;
	}

	/**
	 * Run the probe. Takes a few milliseconds on a host that isolates; never longer than the probe
	 * timeout ({@code cave.sandbox.probe-timeout}).
	 * @return the verdict, never {@code null}
	 */
	public IsolationCapability probe() {
		long start = System.nanoTime();
		String os = this.osName.toLowerCase(Locale.ROOT);
		if (!os.startsWith("linux")) {
			return IsolationCapability.unavailable(UnavailabilityCause.UNSUPPORTED_OS, "os.name=" + this.osName,
					since(start));
		}
		UnshareMechanism mechanism = new UnshareMechanism(this.settings.setprivPath(), this.settings.unsharePath(),
				true);
		for (Path binary : mechanism.binaries()) {
			if (!Files.exists(binary)) {
				return IsolationCapability.unavailable(UnavailabilityCause.BINARY_MISSING, binary + " does not exist",
						since(start));
			}
			if (Files.isDirectory(binary) || !Files.isExecutable(binary)) {
				return IsolationCapability.unavailable(UnavailabilityCause.BINARY_NOT_EXECUTABLE,
						binary + " is not executable", since(start));
			}
		}
		try (ProcessRunner runner = new ProcessRunner(this.settings.killGracePeriod())) {
			ProcessRunner.Outcome outcome = run(runner, mechanism);
			if (outcome.exitCode() != 0 && outcome.stderr().length > 0
					&& text(outcome.stderr()).contains("--map-current-user")) {
				// util-linux before 2.38 lacks --map-current-user: the child will see uid 0 instead.
				mechanism = new UnshareMechanism(mechanism.setpriv(), mechanism.unshare(), false);
				outcome = run(runner, mechanism);
			}
			return verdict(mechanism, outcome, since(start));
		}
		catch (IOException ex) {
			String message = String.valueOf(ex.getMessage());
			UnavailabilityCause cause = message.contains("error=13") ? UnavailabilityCause.BINARY_NOT_EXECUTABLE
					: message.contains("error=2") ? UnavailabilityCause.BINARY_MISSING : UnavailabilityCause.UNKNOWN;
			return IsolationCapability.unavailable(cause, message, since(start));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT, "the probe was interrupted",
					since(start));
		}
	}

	private ProcessRunner.Outcome run(ProcessRunner runner, UnshareMechanism mechanism)
			throws IOException, InterruptedException {
		List<String> commandLine = new ArrayList<>(mechanism.commandPrefix());
		commandLine.addAll(List.of("/bin/sh", "-c", SCRIPT));
		Path directory = Path.of("/");
		return runner.run(new ProcessRunner.Spec(commandLine, directory, Map.of("PATH", SandboxSettings.BASELINE_PATH),
				null, this.settings.probeTimeout(), 64 * 1024, null, null));
	}

	static IsolationCapability verdict(UnshareMechanism mechanism, ProcessRunner.Outcome outcome, Duration took) {
		String stderr = text(outcome.stderr()).trim();
		if (outcome.timedOut()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT,
					"no answer within " + took.toMillis() + " ms", took);
		}
		if (outcome.exitCode() != 0) {
			return IsolationCapability.unavailable(classify(stderr), "exit " + outcome.exitCode() + ": " + stderr,
					took);
		}
		List<String> lines = text(outcome.stdout()).lines().toList();
		String hostNamespace = hostNetworkNamespace();
		List<String> verified = new ArrayList<>();
		String childNamespace = lines.isEmpty() ? "" : lines.get(0).trim();
		if (!childNamespace.startsWith("net:[") || childNamespace.equals(hostNamespace)) {
			return notVerified("the child's network namespace " + childNamespace + " is not a new one (host: "
					+ hostNamespace + ")", took);
		}
		verified.add("network namespace " + childNamespace + " differs from the JVM's " + hostNamespace);
		List<String> interfaces = lines.stream()
			.skip(1)
			.filter((line) -> line.contains(":") && !line.contains("|") && !line.startsWith("pid="))
			.map((line) -> line.substring(0, line.indexOf(':')).trim())
			.toList();
		if (!interfaces.equals(List.of("lo"))) {
			return notVerified("the child sees the interfaces " + interfaces + ", expected only lo", took);
		}
		verified.add("only interface: lo");
		if (!lines.contains("pid=1")) {
			return notVerified("the child is not PID 1 of a new PID namespace", took);
		}
		verified.add("PID namespace: the command is PID 1");
		verified.add(mechanism.mapCurrentUser() ? "user namespace keeps the caller's uid (--map-current-user)"
				: "user namespace maps the caller to root (--map-root-user)");
		return IsolationCapability.available(UnshareMechanism.NAME, verified, mechanism.commandPrefix(), took);
	}

	static UnavailabilityCause classify(String stderr) {
		if (stderr.contains("uid_map") || stderr.contains("gid_map") || stderr.contains("setgroups")) {
			return UnavailabilityCause.UID_MAP_REFUSED;
		}
		if (stderr.contains("No space left on device")) {
			return UnavailabilityCause.NAMESPACE_LIMIT;
		}
		if (stderr.contains("unshare failed: Invalid argument")) {
			return UnavailabilityCause.USER_NAMESPACES_UNSUPPORTED;
		}
		if (stderr.contains("unshare failed: Operation not permitted")) {
			return UnavailabilityCause.KERNEL_REFUSED;
		}
		return UnavailabilityCause.UNKNOWN;
	}

	private static IsolationCapability notVerified(String detail, Duration took) {
		return IsolationCapability.unavailable(UnavailabilityCause.NOT_VERIFIED, detail, took);
	}

	private static String hostNetworkNamespace() {
		try {
			return Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "unknown";
		}
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static Duration since(long start) {
		return Duration.ofNanos(System.nanoTime() - start);
	}

}
