package dev.cavesandbox.sample;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the sample application in a child JVM, exactly as {@code java -jar} would run its
 * main class, optionally behind a wrapper (for example a nested user namespace).
 */
final class SampleJvm {

	/**
	 * Runs the JVM inside a user namespace where no further user namespace may be
	 * created.
	 */
	static final List<String> NAMESPACE_LIMIT_ZERO = List.of("unshare", "--user", "--map-root-user", "sh", "-c",
			"echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"", "sh");

	private SampleJvm() {
	}

	static Result run(List<String> wrapper, String stdin, String... args) throws IOException, InterruptedException {
		List<String> command = command(wrapper, args);
		Process process = new ProcessBuilder(command).start();
		CompletableFuture<byte[]> stdout = CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()));
		CompletableFuture<byte[]> stderr = CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
		try (var in = process.getOutputStream()) {
			in.write(stdin.getBytes(StandardCharsets.UTF_8));
		}
		if (!process.waitFor(120, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			throw new IllegalStateException("the sample JVM did not finish: " + command);
		}
		return new Result(process.exitValue(), new String(stdout.join(), StandardCharsets.UTF_8),
				new String(stderr.join(), StandardCharsets.UTF_8));
	}

	static Result run(String... args) throws IOException, InterruptedException {
		return run(List.of(), "", args);
	}

	/**
	 * Start the JVM with its stdin closed and its stderr in {@code stderr}, for a caller
	 * that reads its stdout as it comes.
	 */
	static Process start(Path stderr, String... args) throws IOException {
		Process process = new ProcessBuilder(command(List.of(), args)).redirectError(stderr.toFile()).start();
		process.getOutputStream().close();
		return process;
	}

	private static List<String> command(List<String> wrapper, String... args) {
		List<String> command = new ArrayList<>(wrapper);
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(SampleApplication.class.getName());
		command.addAll(List.of(args));
		return command;
	}

	private static byte[] readAll(java.io.InputStream in) {
		try (in) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	record Result(int exitCode, String stdout, String stderr) {

		@Override
		public String toString() {
			return "exit " + this.exitCode + "\n--- stdout\n" + this.stdout + "\n--- stderr\n" + this.stderr;
		}

	}

}
