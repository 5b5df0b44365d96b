package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import org.jspecify.annotations.Nullable;

/**
 * {@code java -jar sample-app.jar [--cave.sandbox.*=...] verify}: what a user runs in an
 * image before deploying it. It probes each rung of the Linux ladder on its own (bwrap,
 * unshare, namespaces, seccomp, with the application's other settings) and prints its
 * verdict, then the rung that the application's {@code cave.sandbox.mechanism} chooses
 * and the facts the probe verified (what the rung does not give included). Through an
 * isolated executor of that rung, a child JVM ({@link EgressAttempts}) then attempts TCP
 * (127.0.0.1, ::1, ::ffff:127.0.0.1), UDP, a DNS query and a unix socket against
 * listeners that this command opens itself, on loopback and at a path it creates, and
 * nowhere else. Each listener must see nothing from the sandbox, and the same child run
 * unsandboxed afterwards (the control) must reach it, so that the silence means
 * something.
 * <p>
 * Exit code 0 when a rung is verified and every attempt was blocked; 125 when no rung is
 * verified, an attempt got through, or an attempt or its control did not happen.
 */
final class VerifyCommand {

	static final int VERIFIED = 0;

	static final int NOT_VERIFIED = 125;

	static final List<MechanismChoice> LADDER = List.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE,
			MechanismChoice.NAMESPACES, MechanismChoice.SECCOMP);

	private static final Duration CONTROL_LIMIT = Duration.ofSeconds(30);

	private static final Duration CHILD_LIMIT = Duration.ofSeconds(120);

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
		this.out.println("Rungs, strongest first, each probed on its own with the other cave.sandbox.* settings:");
		List<String> available = new ArrayList<>();
		for (MechanismChoice rung : LADDER) {
			IsolationCapability capability = new NetworkIsolationProbe(withMechanism(this.settings, rung)).probe();
			printRung(rung, capability);
			if (capability.available()) {
				available.add(name(rung));
			}
		}
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
		boolean blocked;
		try {
			blocked = attempt();
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

	private void printRung(MechanismChoice rung, IsolationCapability capability) {
		String label = "  " + String.format(Locale.ROOT, "%-11s", name(rung));
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

	/**
	 * Run the attempts inside the sandbox, then the control outside it, and print one
	 * line per attempt.
	 * @return whether every attempt was blocked (and its control got through)
	 */
	private boolean attempt() throws IOException {
		Path base = Files.createTempDirectory(this.settings.workDirectory(), "cave-sandbox-verify-");
		try {
			// Passable, not listable, by other uids: on the seccomp rung a root JVM's
			// commands run as the command user, a uid of the host, which reaches its
			// working directory by its path.
			Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx--x--x"));
			// The command's working directory is shared with it by design; the socket
			// lies beside it, where the rungs with a mount namespace hide it and the
			// others refuse socket(AF_UNIX).
			Path work = Files.createDirectory(base.resolve("work"));
			writeChildClass(work);
			List<Listener> listeners = openListeners(base.resolve("host.sock"));
			try {
				List<String> arguments = new ArrayList<>();
				listeners.stream().filter((listener) -> listener.skipped == null).forEach((listener) -> {
					arguments.add(listener.kind + "=" + listener.target);
				});
				this.out.println("Egress attempts from a child JVM inside " + this.chosen.mechanismName()
						+ ", against listeners of this command (loopback and a path it created only):");
				Map<String, String> inside = runSandboxed(work, arguments);
				Map<String, String> control = runControl(work, arguments);
				boolean blocked = true;
				for (Listener listener : listeners) {
					blocked &= report(listener, inside, control);
				}
				this.out.println(column("abstract unix socket")
						+ "skipped: the JDK cannot bind or connect an abstract address (UnixDomainSocketAddress "
						+ "takes paths only), and verify uses nothing but the JDK");
				return blocked;
			}
			finally {
				for (Listener listener : listeners) {
					listener.close();
				}
			}
		}
		finally {
			deleteTree(base);
		}
	}

	private boolean report(Listener listener, Map<String, String> inside, Map<String, String> control) {
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

	private Map<String, String> runSandboxed(Path work, List<String> arguments) {
		try (IsolatedExecutor executor = IsolatedExecutors.create(this.settings, this.chosen)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(childCommand("sandboxed", arguments))
				.workingDirectory(work)
				.timeout(CHILD_LIMIT)
				.build());
			if (result.exitCode() != 0 || result.timedOut()) {
				this.out.println("  (the child JVM inside exited with " + result.exitCode()
						+ (result.timedOut() ? ", timed out" : "") + ": " + result.stderrText().strip() + ")");
			}
			return reports(result.stdoutText());
		}
		catch (CaveSandboxException ex) {
			this.out.println("  (the child JVM could not run inside: " + ex.getMessage() + ")");
			return Map.of();
		}
	}

	/**
	 * The same child, unsandboxed: it must reach every listener, or the sandboxed run's
	 * silence would prove nothing.
	 */
	private Map<String, String> runControl(Path work, List<String> arguments) throws IOException {
		Process process = new ProcessBuilder(childCommand("control", arguments)).directory(work.toFile())
			.redirectErrorStream(true)
			.start();
		process.getOutputStream().close();
		CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()));
		try {
			if (!process.waitFor(CHILD_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return Map.of();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			process.destroyForcibly();
			return Map.of();
		}
		return reports(new String(output.join(), StandardCharsets.UTF_8));
	}

	private static List<String> childCommand(String role, List<String> arguments) {
		List<String> command = new ArrayList<>(
				List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:-UsePerfData",
						"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m", "-cp", ".",
						EgressAttempts.class.getName(), role));
		command.addAll(arguments);
		return command;
	}

	/**
	 * The child's report: one {@code KIND sent: ...} or {@code KIND failed: ...} line per
	 * attempt.
	 */
	private static Map<String, String> reports(String output) {
		Map<String, String> reports = new LinkedHashMap<>();
		output.lines().forEach((line) -> {
			int space = line.indexOf(' ');
			if (space > 0 && (line.startsWith("sent: ", space + 1) || line.startsWith("failed: ", space + 1))) {
				reports.put(line.substring(0, space), line.substring(space + 1));
			}
		});
		return reports;
	}

	/**
	 * Write the child's class file, read from this application's class loader, into the
	 * command's working directory (the one directory every rung shows the command).
	 */
	private static void writeChildClass(Path work) throws IOException {
		String resource = EgressAttempts.class.getName().replace('.', '/') + ".class";
		try (InputStream in = VerifyCommand.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IOException("the class file " + resource + " is not on the class path");
			}
			Path file = work.resolve(resource);
			Files.createDirectories(file.getParent());
			Files.write(file, in.readAllBytes());
		}
	}

	private List<Listener> openListeners(Path socket) throws IOException {
		InetAddress ipv4 = InetAddress.getByAddress(new byte[] { 127, 0, 0, 1 });
		InetAddress ipv6 = InetAddress.getByAddress(new byte[] { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 });
		List<Listener> listeners = new ArrayList<>();
		listeners.add(new TcpListener("tcp4", "TCP 127.0.0.1", ipv4, null));
		listeners.add(new TcpListener("tcp6", "TCP [::1]", ipv6, null));
		listeners.add(new TcpListener("tcp-mapped", "TCP [::ffff:127.0.0.1]", ipv4, ipv6Unavailable()));
		listeners.add(new UdpListener("udp", "UDP 127.0.0.1", ipv4));
		listeners.add(new UdpListener("dns", "DNS query, UDP 127.0.0.1", ipv4));
		listeners.add(new UnixListener("unix", "unix socket " + socket, socket));
		return listeners;
	}

	/**
	 * Return why this JVM cannot connect an AF_INET6 socket to an IPv4-mapped address, or
	 * {@code null} if it can.
	 */
	private static @Nullable String ipv6Unavailable() {
		try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.INET6)) {
			return null;
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "this JVM has no IPv6 sockets (" + ex + ")";
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

	private static String column(String label) {
		return "  " + String.format(Locale.ROOT, "%-30s", label) + " ";
	}

	private static String name(MechanismChoice choice) {
		return choice.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	private static byte[] readAll(InputStream in) {
		try (in) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
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

	/**
	 * A listener of this command: what arrived there, in order, up to the control's
	 * payload.
	 */
	private abstract static class Listener implements AutoCloseable {

		final String kind;

		String label;

		String target = "";

		@Nullable String skipped;

		Listener(String kind, String label) {
			this.kind = kind;
			this.label = label;
		}

		/**
		 * Collect what arrives until the control's payload does.
		 * @param control the control's payload
		 * @param limit how long to wait for it at most
		 * @return what arrived before the control (anything else than the control), or
		 * {@code null} if the control did not arrive within the limit
		 */
		@Nullable List<String> arrivalsUntil(byte[] control, Duration limit) throws IOException {
			List<String> arrived = new ArrayList<>();
			long deadline = System.nanoTime() + limit.toNanos();
			while (System.nanoTime() < deadline) {
				byte[] next = next();
				if (next == null) {
					continue;
				}
				if (Arrays.equals(next, control)) {
					return arrived;
				}
				arrived.add(printable(next));
			}
			return null;
		}

		/**
		 * Return the next arrival, or {@code null} if none came within a short wait.
		 */
		abstract byte @Nullable [] next() throws IOException;

		@Override
		public abstract void close();

		private static String printable(byte[] bytes) {
			StringBuilder text = new StringBuilder("\"");
			for (byte b : bytes) {
				text.append((b >= 0x20 && b < 0x7f) ? String.valueOf((char) b) : ".");
			}
			return text.append("\"").toString();
		}

	}

	private static final class TcpListener extends Listener {

		private @Nullable ServerSocket server;

		TcpListener(String kind, String label, InetAddress address, @Nullable String skipped) {
			super(kind, label);
			this.skipped = skipped;
			if (skipped != null) {
				return;
			}
			try {
				ServerSocket server = new ServerSocket();
				server.bind(new InetSocketAddress(address, 0));
				server.setSoTimeout(200);
				this.server = server;
				this.target = String.valueOf(server.getLocalPort());
				this.label = label + ":" + this.target;
			}
			catch (IOException ex) {
				this.skipped = "this host has no " + address.getHostAddress() + " to listen on (" + ex + ")";
			}
		}

		@Override
		byte @Nullable [] next() throws IOException {
			try (Socket connection = this.server.accept()) {
				connection.setSoTimeout(5000);
				return connection.getInputStream().readAllBytes();
			}
			catch (SocketTimeoutException ex) {
				return null;
			}
		}

		@Override
		public void close() {
			try {
				if (this.server != null) {
					this.server.close();
				}
			}
			catch (IOException ex) {
				// closing
			}
		}

	}

	private static final class UdpListener extends Listener {

		private final DatagramSocket socket;

		UdpListener(String kind, String label, InetAddress address) throws IOException {
			super(kind, label);
			this.socket = new DatagramSocket(new InetSocketAddress(address, 0));
			this.socket.setSoTimeout(200);
			this.target = String.valueOf(this.socket.getLocalPort());
			this.label = label + ":" + this.target;
		}

		@Override
		@Nullable List<String> arrivalsUntil(byte[] control, Duration limit) throws IOException {
			// The DNS listener expects the control's query, not its plain payload.
			return super.arrivalsUntil(this.kind.equals("dns") ? EgressAttempts.dnsQuery("control") : control, limit);
		}

		@Override
		byte @Nullable [] next() throws IOException {
			DatagramPacket packet = new DatagramPacket(new byte[2048], 2048);
			try {
				this.socket.receive(packet);
				return Arrays.copyOf(packet.getData(), packet.getLength());
			}
			catch (SocketTimeoutException ex) {
				return null;
			}
		}

		@Override
		public void close() {
			this.socket.close();
		}

	}

	private static final class UnixListener extends Listener {

		private final ServerSocketChannel server;

		UnixListener(String kind, String label, Path path) throws IOException {
			super(kind, label);
			this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
			this.server.bind(UnixDomainSocketAddress.of(path));
			this.server.configureBlocking(false);
			this.target = path.toString();
		}

		@Override
		byte @Nullable [] next() throws IOException {
			SocketChannel channel = this.server.accept();
			if (channel == null) {
				try {
					Thread.sleep(20);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IOException("interrupted", ex);
				}
				return null;
			}
			try (channel) {
				channel.configureBlocking(true);
				ByteBuffer buffer = ByteBuffer.allocate(2048);
				while (channel.read(buffer) > 0 && buffer.hasRemaining()) {
					// until the client closes
				}
				return Arrays.copyOf(buffer.array(), buffer.position());
			}
		}

		@Override
		public void close() {
			try {
				this.server.close();
			}
			catch (IOException ex) {
				// closing
			}
		}

	}

}
