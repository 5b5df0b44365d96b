package dev.cavesandbox.internal.process;

import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cavesandbox.ExecutionCancelledException;

/**
 * The long-lived platform threads that spawn every process ({@code cave-sandbox-spawn-N},
 * one per CPU, at least two): the parent-death signal that ties a sandbox to the JVM
 * ({@code setpriv --pdeathsig}) fires when the <em>thread</em> that spawned it ends
 * (prctl(2)), so spawning from a short-lived, pooled or virtual thread's carrier would
 * kill the sandbox early. They are started at once and never time out.
 */
final class SpawnThreads {

	private final ThreadPoolExecutor threads;

	SpawnThreads() {
		int count = Math.max(2, Runtime.getRuntime().availableProcessors());
		this.threads = new ThreadPoolExecutor(count, count, 0, TimeUnit.NANOSECONDS, new LinkedBlockingQueue<>(),
				daemons("cave-sandbox-spawn-"));
		// Started now and never timed out: a spawn thread that ended would take the
		// parent-death signal of its sandboxes with it.
		this.threads.prestartAllCoreThreads();
	}

	/**
	 * Return a factory of daemon threads named {@code prefix} and a count from 1.
	 * @param prefix the name before the count
	 * @return the factory
	 */
	static ThreadFactory daemons(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Start the process on a spawn thread and wait for it.
	 * @param builder what to start
	 * @return the process
	 * @throws IOException if it could not be started
	 * @throws InterruptedException if the calling thread was interrupted; a process that
	 * started meanwhile was killed
	 * @throws ExecutionCancelledException if the threads were {@linkplain #shutdown()
	 * shut down}
	 */
	Process start(ProcessBuilder builder) throws IOException, InterruptedException {
		Future<Process> launched;
		try {
			launched = this.threads.submit(builder::start);
		}
		catch (RejectedExecutionException ex) {
			// close() shut the spawn threads down after the check in spawn().
			throw new ExecutionCancelledException("the executor is closed", ex);
		}
		try {
			return launched.get();
		}
		catch (InterruptedException ex) {
			// The spawn may still complete: wait for it so that no process is left
			// behind.
			try {
				Process process = getUninterruptibly(launched);
				process.destroyForcibly();
			}
			catch (ExecutionException | CancellationException ignored) {
			}
			throw ex;
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof IOException io) {
				throw io;
			}
			throw new IOException(ex.getCause());
		}
		catch (RejectedExecutionException ex) {
			throw new ExecutionCancelledException("the executor is closed", ex);
		}
	}

	/**
	 * Let the threads end once the spawns already handed to them are done: a spawn thread
	 * that ends fires the parent-death signal of what it spawned (prctl(2)).
	 */
	void shutdown() {
		this.threads.shutdown();
	}

	private static <T> T getUninterruptibly(Future<T> future) throws ExecutionException {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return future.get();
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
