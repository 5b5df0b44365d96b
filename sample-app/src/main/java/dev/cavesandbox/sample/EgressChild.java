package dev.cavesandbox.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxSettings;

/**
 * The child JVM of {@link VerifyCommand}'s egress attempts ({@link EgressAttempts}), run
 * from its class file in the command's working directory, for at most 120 s: inside the
 * sandbox of the chosen mechanism, and unsandboxed as the control. Its report is one
 * {@code KIND sent: ...} or {@code KIND failed: ...} line per attempt; a child that fails
 * inside is noted in brackets on the output.
 */
final class EgressChild {

	private static final Duration CHILD_LIMIT = Duration.ofSeconds(120);

	private final SandboxSettings settings;

	private final IsolationCapability chosen;

	private final PrintStream out;

	EgressChild(SandboxSettings settings, IsolationCapability chosen, PrintStream out) {
		this.settings = settings;
		this.chosen = chosen;
		this.out = out;
	}

	/**
	 * Write the child's class file, read from this application's class loader, into the
	 * command's working directory (the one directory every mechanism shows the command).
	 */
	static void writeClass(Path work) throws IOException {
		String resource = EgressAttempts.class.getName().replace('.', '/') + ".class";
		try (InputStream in = EgressChild.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IOException("the class file " + resource + " is not on the class path");
			}
			Path file = work.resolve(resource);
			Files.createDirectories(file.getParent());
			Files.write(file, in.readAllBytes());
		}
	}

	/**
	 * Run the child inside the sandbox.
	 * @return its report by kind, empty if it could not run
	 */
	Map<String, String> runSandboxed(Path work, List<String> arguments) {
		try (IsolatedExecutor executor = IsolatedExecutors.create(this.settings, this.chosen)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder(command("sandboxed", arguments))
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
	 * @return its report by kind, empty if it did not end in time
	 */
	Map<String, String> runControl(Path work, List<String> arguments) throws IOException {
		Process process = new ProcessBuilder(command("control", arguments)).directory(work.toFile())
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

	private static List<String> command(String role, List<String> arguments) {
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

	private static byte[] readAll(InputStream in) {
		try (in) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
