package dev.cavesandbox.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One phase of a throughput benchmark: callers that run the same call back to back until
 * a deadline, on a shared pool of threads.
 *
 * @param perSecond the calls completed per second of the phase's wall time
 * @param share the share of calls that returned {@code true}, from 0 to 1
 */
record ThroughputPhase(double perSecond, double share) {

	/**
	 * Run a phase.
	 * @param threads the pool, with at least {@code callers} threads
	 * @param callers how many callers run at once
	 * @param millis the phase's length in milliseconds
	 * @param call one call; what it returns is counted in {@link #share()}
	 * @return the phase's rate and share
	 * @throws Exception what a call threw
	 */
	static ThroughputPhase run(ExecutorService threads, int callers, long millis, Callable<Boolean> call)
			throws Exception {
		long start = System.nanoTime();
		long deadline = start + TimeUnit.MILLISECONDS.toNanos(millis);
		AtomicLong done = new AtomicLong();
		AtomicLong counted = new AtomicLong();
		CountDownLatch stopped = new CountDownLatch(callers);
		List<Future<?>> workers = new ArrayList<>();
		for (int i = 0; i < callers; i++) {
			workers.add(threads.submit(() -> {
				try {
					while (System.nanoTime() < deadline) {
						boolean result = call.call();
						done.incrementAndGet();
						if (result) {
							counted.incrementAndGet();
						}
					}
				}
				finally {
					stopped.countDown();
				}
				return null;
			}));
		}
		stopped.await();
		long elapsed = System.nanoTime() - start;
		for (Future<?> worker : workers) {
			worker.get();
		}
		return new ThroughputPhase(done.get() / (elapsed / 1e9), (double) counted.get() / Math.max(1, done.get()));
	}

}
