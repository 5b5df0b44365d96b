package dev.cavesandbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A test's own load on every core: one busy thread per available processor in the test
 * JVM, until closed or at most two minutes, so that what it loads the machine for races
 * the sandbox for CPU as an attacker's own load would (issue 26). Threads of the JVM, so
 * that nothing of it can outlive the test.
 */
final class CpuHog implements AutoCloseable {

	private static final Duration LONGEST = Duration.ofMinutes(2);

	private final List<Thread> threads = new ArrayList<>();

	private volatile boolean running = true;

	private CpuHog(int threads) {
		long deadline = System.nanoTime() + LONGEST.toNanos();
		for (int i = 0; i < threads; i++) {
			Thread thread = new Thread(() -> spin(deadline), "cpu-hog-" + i);
			thread.setDaemon(true);
			this.threads.add(thread);
			thread.start();
		}
	}

	/** Start a busy thread on every core. */
	static CpuHog start() {
		return new CpuHog(Runtime.getRuntime().availableProcessors());
	}

	/** Start the hog if asked to, else an idle one that closes at once. */
	static CpuHog startIf(boolean load) {
		return new CpuHog(load ? Runtime.getRuntime().availableProcessors() : 0);
	}

	private void spin(long deadline) {
		long sink = 0;
		while (this.running && System.nanoTime() < deadline) {
			for (int i = 0; i < 100_000; i++) {
				sink = sink * 31 + i;
			}
		}
		if (sink == 42) {
			System.out.print("");
		}
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		for (Thread thread : this.threads) {
			thread.join();
		}
	}

}
