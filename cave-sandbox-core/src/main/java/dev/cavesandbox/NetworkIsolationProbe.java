package dev.cavesandbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.cavesandbox.internal.probe.HostFacts;
import dev.cavesandbox.internal.probe.LinuxProbe;
import dev.cavesandbox.internal.probe.MacosProbe;
import dev.cavesandbox.internal.probe.ProbeSession;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
import dev.cavesandbox.internal.workspace.WorkDirectoryCheck;

/**
 * Measures, rather than assumes, whether this host can isolate a command from the
 * network: it runs the real production command line of each candidate mechanism once and
 * checks what the child saw. With {@link MechanismChoice#AUTO} the candidates are,
 * strongest first, bubblewrap, unshare, the namespaces without mounts and seccomp only on
 * Linux, and sandbox-exec on macOS; the first one verified wins. Other systems (Windows,
 * the BSDs) have no supported primitive.
 * <p>
 * This class chooses the candidates and combines their verdicts; each platform's checks
 * are its own class: {@link LinuxProbe} (a script reports what the child sees, compared
 * with the {@link HostFacts}) and {@link MacosProbe} (the deny-network profile, tested
 * with a connect to a listener of the probe's own). When a wrapper fails,
 * {@link WrapperFailureClassifier} tells the causes apart from its stderr; a bare exit
 * code would be ambiguous, since the command itself could return it.
 */
public final class NetworkIsolationProbe {

	private final SandboxSettings settings;

	private final String osName;

	/**
	 * Create a probe for this JVM's operating system.
	 * @param settings the settings that choose the mechanism, name the binaries and the
	 * probe timeout
	 */
	public NetworkIsolationProbe(SandboxSettings settings) {
		this(settings, System.getProperty("os.name", ""));
	}

	NetworkIsolationProbe(SandboxSettings settings, String osName) {
		this.settings = settings;
		this.osName = osName;
	}

	/**
	 * Run the probe. Takes a few tens of milliseconds on a host that isolates; never
	 * longer than the probe timeout ({@link SandboxSettings#probeTimeout()}) per
	 * candidate.
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
		if (!candidates.contains(MechanismChoice.SANDBOX_EXEC)) {
			// Every Linux mechanism extracts its launcher to the work directory and
			// runs in a private directory there: one check, before any wrapper
			// runs.
			String unusable = WorkDirectoryCheck.problem(this.settings);
			if (unusable != null) {
				return IsolationCapability.unavailable(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE, unusable,
						since(start));
			}
		}
		List<String> rejected = new ArrayList<>();
		IsolationCapability reported = null;
		for (MechanismChoice candidate : candidates) {
			IsolationCapability capability = probe(candidate);
			if (capability.available()) {
				List<String> verified = new ArrayList<>(capability.verified());
				rejected.forEach((reason) -> verified.add("not chosen: " + reason));
				return IsolationCapability.available(capability.mechanism(), verified, capability.privateLoopback(),
						since(start));
			}
			rejected.add(name(candidate) + " unavailable, " + capability.cause()
					+ (capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")"));
			// The weakest mechanism's cause is what stands between this host and
			// any isolation (the stronger mechanisms' fixes point down the ladder);
			// a missing binary only if nothing else failed.
			if (reported == null || capability.cause() != UnavailabilityCause.BINARY_MISSING) {
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
			case AUTO ->
				!linux ? (macos ? List.of(MechanismChoice.SANDBOX_EXEC) : List.of()) : List.of(MechanismChoice.BWRAP,
						MechanismChoice.UNSHARE, MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);
			case BWRAP, UNSHARE, NAMESPACES, SECCOMP -> linux ? List.of(this.settings.mechanism()) : List.of();
			case SANDBOX_EXEC -> macos ? List.of(MechanismChoice.SANDBOX_EXEC) : List.of();
			case NONE -> List.of();
		};
	}

	/**
	 * The detail of {@link UnavailabilityCause#UNSUPPORTED_OS}: on Linux and macOS only a
	 * mechanism of the other system gets there, so it says which mechanisms this system
	 * has; elsewhere the system itself has none.
	 */
	private String unsupportedDetail() {
		String os = this.osName.toLowerCase(Locale.ROOT);
		MechanismChoice chosen = this.settings.mechanism();
		String detail = "os.name=" + this.osName;
		if (chosen != MechanismChoice.AUTO) {
			detail += ", mechanism " + name(chosen);
		}
		if (os.startsWith("linux")) {
			detail += ": " + name(chosen) + " is macOS's mechanism; on Linux choose mechanism auto, bwrap, unshare, "
					+ "namespaces or seccomp";
		}
		else if (os.startsWith("mac") || os.startsWith("darwin")) {
			detail += ": " + name(chosen) + " is a Linux mechanism; on macOS choose mechanism auto or sandbox-exec";
		}
		else if (os.startsWith("windows")) {
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
			return (candidate == MechanismChoice.SANDBOX_EXEC) ? new MacosProbe(this.settings).probe()
					: new LinuxProbe(this.settings, candidate).probe();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT, "the probe was interrupted",
					since(start));
		}
	}

	private static Duration since(long start) {
		return ProbeSession.since(start);
	}

}
