package dev.cavesandbox;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.process.ProcessRunnerTests;

/**
 * Run in a child JVM by {@link ProcessRunnerTests} with a marker, a mechanism and a work
 * directory: starts one sandboxed {@code sleep} from a short-lived thread, one from a
 * pooled thread, and (on Java 21+) one from a virtual thread, waits until all are
 * running, prints {@code READY} and then waits to be killed.
 */
public final class SandboxHolderMain {

	private SandboxHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		String marker = args[0];
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.valueOf(args[1]))
			.workDirectory(java.nio.file.Path.of(args[2]))
			.build();
		IsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings,
				new NetworkIsolationProbe(settings).probe());
		Thread shortLived = new Thread(() -> executor.executeAsync(ExecutionRequest.of("sleep", marker + "1")));
		shortLived.start();
		shortLived.join();
		ForkJoinPool.commonPool().execute(() -> executor.execute(ExecutionRequest.of("sleep", marker + "2")));
		int expected = 2;
		if (System.getProperty("os.arch").equals("amd64")) {
			// A command that clears its own parent-death signal (prctl(2)
			// PR_SET_PDEATHSIG, 0 is syscall 157 on x86-64) must still die with the JVM.
			executor.executeAsync(ExecutionRequest.of("perl", "-e",
					"syscall(157, 1, 0, 0, 0, 0) == 0 or die; exec 'sleep', '" + marker + "4'"));
			expected++;
		}
		ExecutorService virtual = virtualThreadExecutor();
		if (virtual != null) {
			virtual.execute(() -> executor.execute(ExecutionRequest.of("sleep", marker + "3")));
			virtual.shutdown();
			expected++;
		}
		long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
		while (running(marker).size() < expected) {
			if (System.nanoTime() > deadline) {
				System.out.println("NOT READY: " + running(marker).size() + " of " + expected + " sandboxes run");
				System.exit(1);
			}
			Thread.sleep(20);
		}
		System.out.println("READY " + expected);
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

	/** The sandboxed {@code sleep} processes themselves. */
	public static List<ProcessHandle> running(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info().command().orElse("").endsWith("/sleep"))
			.filter((process) -> process.info().commandLine().orElse("").matches(".*sleep " + marker + "\\d"))
			.toList();
	}

	/** Every process that names the marker: the sleeps and their wrappers. */
	public static List<ProcessHandle> anyNaming(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info().commandLine().orElse("").contains(marker))
			.toList();
	}

	private static ExecutorService virtualThreadExecutor() throws ReflectiveOperationException {
		try {
			Method method = java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
			return (ExecutorService) method.invoke(null);
		}
		catch (NoSuchMethodException ex) {
			return null;
		}
	}

}
