package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxSettings;

/**
 * The egress attempts of {@link VerifyCommand}: a child JVM ({@link EgressChild}) inside
 * the chosen mechanism attempts each {@link EgressListener} of this command, then the
 * same child unsandboxed (the control) must reach each within 30 s, so that the silence
 * means something. Prints one line per attempt: {@code blocked}, or {@code GOT THROUGH},
 * {@code NOT BLOCKED}, {@code NOT RUN}, {@code NOT CHECKED} or {@code CONTROL FAILED}.
 */
final class EgressCheck {

	private static final Duration CONTROL_LIMIT = Duration.ofSeconds(30);

	private final SandboxSettings settings;

	private final IsolationCapability chosen;

	private final PrintStream out;

	EgressCheck(SandboxSettings settings, IsolationCapability chosen, PrintStream out) {
		this.settings = settings;
		this.chosen = chosen;
		this.out = out;
	}

	/**
	 * Run the attempts inside the sandbox, then the control outside it, and print one
	 * line per attempt.
	 * @return whether every attempt was blocked (and its control got through)
	 * @throws IOException the attempts could not be prepared
	 */
	boolean run() throws IOException {
		Path base = Files.createTempDirectory(this.settings.workDirectory(), "cave-sandbox-verify-");
		try {
			Path work = prepare(base);
			List<EgressListener> listeners = EgressListener.openAll(base.resolve("host.sock"));
			try {
				return attempt(work, listeners);
			}
			finally {
				for (EgressListener listener : listeners) {
					listener.close();
				}
			}
		}
		finally {
			deleteTree(base);
		}
	}

	/**
	 * Create the command's working directory in the base, with the child's class file.
	 */
	private static Path prepare(Path base) throws IOException {
		// Passable, not listable, by other uids: on the seccomp mechanism a root JVM's
		// commands run as the command user, a uid of the host, which reaches its
		// working directory by its path.
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx--x--x"));
		// The command's working directory is shared with it by design; the socket
		// lies beside it, where the mechanisms with a mount namespace hide it and the
		// others refuse socket(AF_UNIX).
		Path work = Files.createDirectory(base.resolve("work"));
		EgressChild.writeClass(work);
		return work;
	}

	private boolean attempt(Path work, List<EgressListener> listeners) throws IOException {
		List<String> arguments = new ArrayList<>();
		listeners.stream().filter((listener) -> listener.skipped == null).forEach((listener) -> {
			arguments.add(listener.kind + "=" + listener.target);
		});
		this.out.println("Egress attempts from a child JVM inside " + this.chosen.mechanismName()
				+ ", against listeners of this command (loopback and a path it created only):");
		EgressChild child = new EgressChild(this.settings, this.chosen, this.out);
		Map<String, String> inside = child.runSandboxed(work, arguments);
		Map<String, String> control = child.runControl(work, arguments);
		boolean blocked = true;
		for (EgressListener listener : listeners) {
			blocked &= report(listener, inside, control);
		}
		this.out.println(column("abstract unix socket")
				+ "skipped: the JDK cannot bind or connect an abstract address (UnixDomainSocketAddress "
				+ "takes paths only), and verify uses nothing but the JDK");
		return blocked;
	}

	private boolean report(EgressListener listener, Map<String, String> inside, Map<String, String> control) {
		String label = column(listener.label);
		if (listener.skipped != null) {
			this.out.println(label + "skipped: " + listener.skipped);
			return true;
		}
		String attempt = inside.get(listener.kind);
		if (attempt == null) {
			this.out.println(label + "NOT RUN: the child reported no attempt");
			return false;
		}
		List<String> arrived;
		try {
			arrived = listener.arrivalsUntil(EgressAttempts.payload("control", listener.kind), CONTROL_LIMIT);
		}
		catch (IOException ex) {
			this.out.println(label + "NOT CHECKED: the listener failed: " + ex + " (inside: " + attempt + ")");
			return false;
		}
		String controlReport = control.getOrDefault(listener.kind, "no report");
		if (arrived == null) {
			this.out.println(label + "CONTROL FAILED: the unsandboxed control did not arrive, so silence proves "
					+ "nothing (control: " + controlReport + "; inside: " + attempt + ")");
			return false;
		}
		if (!arrived.isEmpty()) {
			this.out.println(label + "GOT THROUGH: the listener received " + arrived + " (inside: " + attempt + ")");
			return false;
		}
		if (attempt.startsWith("sent: connected")) {
			// A connection the listener did not see went somewhere else: not blocked.
			this.out.println(
					label + "NOT BLOCKED: the child connected, but not to this listener (inside: " + attempt + ")");
			return false;
		}
		this.out.println(label + "blocked (inside: " + attempt + ")");
		return true;
	}

	private static String column(String label) {
		return "  " + String.format(Locale.ROOT, "%-30s", label) + " ";
	}

	private static void deleteTree(Path root) {
		try (Stream<Path> paths = Files.walk(root)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
		catch (IOException ex) {
			// Left for java.io.tmpdir's cleanup; the report is what matters.
		}
	}

}
