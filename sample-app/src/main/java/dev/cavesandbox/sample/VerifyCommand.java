package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;

/**
 * {@code java -jar sample-app.jar [--cave.sandbox.*=...] verify}: what a user runs in an
 * image before deploying it. It probes each mechanism of the Linux ladder on its own
 * (bwrap, unshare, namespaces, seccomp, with the application's other settings) and prints
 * its verdict, then the mechanism that the application's {@code cave.sandbox.mechanism}
 * chooses and the facts the probe verified (what the mechanism does not give included).
 * Then, through an isolated executor of that mechanism, the {@link EgressCheck}: a child
 * JVM attempts TCP (127.0.0.1, ::1, ::ffff:127.0.0.1), UDP, a DNS query and a unix socket
 * against listeners that this command opens itself, on loopback and at a path it creates,
 * and nowhere else; the same child unsandboxed must reach each of them.
 * <p>
 * Exit code 0 when a mechanism is verified and every attempt was blocked; 125 when no
 * mechanism is verified, an attempt got through, or an attempt or its control did not
 * happen.
 */
final class VerifyCommand {

	static final int VERIFIED = 0;

	static final int NOT_VERIFIED = 125;

	static final List<MechanismChoice> LADDER = List.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE,
			MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);

	private final SandboxSettings settings;

	private final IsolationCapability chosen;

	private final PrintStream out;

	/**
	 * Create the command.
	 * @param settings the application's settings ({@code cave.sandbox.*})
	 * @param chosen the probe's verdict for those settings (the application's
	 * {@link IsolationCapability} bean)
	 * @param out where the report goes
	 */
	VerifyCommand(SandboxSettings settings, IsolationCapability chosen, PrintStream out) {
		this.settings = settings;
		this.chosen = chosen;
		this.out = out;
	}

	int run() {
		this.out.println("cave-sandbox verify: java " + System.getProperty("java.version") + " ("
				+ System.getProperty("java.home") + "), " + System.getProperty("os.name") + " "
				+ System.getProperty("os.version"));
		this.out.println();
		List<String> available = probeMechanisms();
		this.out.println();
		String setting = "cave.sandbox.mechanism=" + name(this.settings.mechanism());
		if (!this.chosen.available()) {
			this.out.println("Chosen (" + setting + "): none, isolation is unavailable");
			printCause(this.chosen, "  ");
			this.out.println();
			this.out.println("NOT VERIFIED: " + setting + " gives no isolation on this host"
					+ (available.isEmpty() ? "" : " (verified here on their own: " + String.join(", ", available) + ")")
					+ "; no egress attempt was made.");
			return NOT_VERIFIED;
		}
		this.out.println("Chosen (" + setting + "): " + this.chosen.mechanismName() + ", verified by the probe in "
				+ this.chosen.probeTime().toMillis() + " ms:");
		this.chosen.verified().forEach((fact) -> this.out.println(indented("  - ", fact)));
		this.out.println();
		return checkEgress();
	}

	/**
	 * Probe each mechanism of the ladder on its own and print its verdict.
	 * @return the names of the mechanisms available
	 */
	private List<String> probeMechanisms() {
		this.out.println("Mechanisms, strongest first, each probed on its own with the other cave.sandbox.* settings:");
		List<String> available = new ArrayList<>();
		for (MechanismChoice choice : LADDER) {
			IsolationCapability capability = new NetworkIsolationProbe(withMechanism(this.settings, choice)).probe();
			printMechanism(choice, capability);
			if (capability.available()) {
				available.add(name(choice));
			}
		}
		return available;
	}

	private int checkEgress() {
		boolean blocked;
		try {
			blocked = new EgressCheck(this.settings, this.chosen, this.out).run();
		}
		catch (IOException ex) {
			this.out.println("NOT VERIFIED: the egress attempts could not be prepared: " + ex);
			return NOT_VERIFIED;
		}
		this.out.println();
		if (!blocked) {
			this.out.println("NOT VERIFIED: see the attempts above.");
			return NOT_VERIFIED;
		}
		this.out.println("VERIFIED: " + this.chosen.mechanismName() + " isolates commands on this host; every attempt "
				+ "was blocked.");
		return VERIFIED;
	}

	private void printMechanism(MechanismChoice choice, IsolationCapability capability) {
		String label = "  " + String.format(Locale.ROOT, "%-11s", name(choice));
		if (capability.available()) {
			this.out.println(label + "available (probe " + capability.probeTime().toMillis() + " ms)");
		}
		else {
			this.out.println(label + "unavailable");
			printCause(capability, " ".repeat(label.length()));
		}
	}

	private void printCause(IsolationCapability capability, String indent) {
		if (capability.cause() == null) {
			return;
		}
		this.out.println(indent + "cause: " + capability.cause() + ": " + capability.cause().description());
		this.out.println(indent + "fix: " + capability.cause().fix());
		if (!capability.detail().isEmpty()) {
			this.out.println(indented(indent + "detail: ", capability.detail()));
		}
	}

	static SandboxSettings withMechanism(SandboxSettings settings, MechanismChoice mechanism) {
		return new SandboxSettings(settings.mode(), settings.timeout(), settings.maxOutputBytes(),
				settings.killGracePeriod(), settings.probeTimeout(), settings.maxConcurrent(), settings.queueTimeout(),
				settings.workDirectory(), settings.env(), settings.linux(), mechanism, settings.loopback(),
				settings.readOnlyRoot(), settings.hiddenDirectories(), settings.macos(), settings.limits(),
				settings.filesystem());
	}

	/**
	 * The text after the prefix, its further lines (a wrapper's stderr has several)
	 * indented below it.
	 */
	private static String indented(String prefix, String text) {
		return prefix + text.strip().replace("\n", "\n" + " ".repeat(prefix.length()));
	}

	private static String name(MechanismChoice choice) {
		return choice.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
