package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A raw spawn with the thread structure of the executor's {@code ProcessRunner} and
 * nothing else: the spawn handed to a fixed pool of long-lived spawn threads, both
 * streams drained on a cached pool while the caller waits for the process. Either
 * hand-off can be left out.
 */
final class ThreadedSpawn implements AutoCloseable {

	private final ExecutorService launcher = Executors
		.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));

	private final ExecutorService io = Executors.newCachedThreadPool();

	/**
	 * Spawn and wait.
	 * @param builder what to spawn
	 * @param viaLauncher whether to hand the spawn to a spawn thread
	 * @param viaDrains whether to drain both streams on the io pool
	 * @return the exit code, always 0
	 */
	int run(ProcessBuilder builder, boolean viaLauncher, boolean viaDrains)
			throws IOException, InterruptedException, ExecutionException {
		Process process = viaLauncher ? this.launcher.submit(builder::start).get() : builder.start();
		process.getOutputStream().close();
		if (!viaDrains) {
			process.getInputStream().readAllBytes();
			return BenchmarkMechanism.Raw.exited(process, process.getErrorStream().readAllBytes());
		}
		Future<byte[]> stdout = this.io.submit(() -> readAll(process.getInputStream()));
		Future<byte[]> stderr = this.io.submit(() -> readAll(process.getErrorStream()));
		process.waitFor(30, TimeUnit.SECONDS);
		stdout.get();
		return BenchmarkMechanism.Raw.exited(process, stderr.get());
	}

	int run(List<String> commandLine) throws IOException, InterruptedException, ExecutionException {
		return run(new ProcessBuilder(commandLine), true, true);
	}

	private static byte[] readAll(InputStream in) throws IOException {
		try (in) {
			return in.readAllBytes();
		}
	}

	@Override
	public void close() {
		this.launcher.shutdownNow();
		this.io.shutdownNow();
	}

}
