package dev.cavesandbox;

import java.nio.file.Path;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.process.ProcessRunnerTests;

/**
 * Run in a child JVM by {@link SandboxedProcessTests} with a marker, a mechanism and a
 * work directory: starts one sandboxed long-running process that runs two {@code sleep}s
 * (one in the background, one in the foreground), waits until both run, prints
 * {@code READY} and then waits to be killed.
 */
public final class StartedProcessHolderMain {

	private StartedProcessHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		String marker = args[0];
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.valueOf(args[1]))
			.workDirectory(Path.of(args[2]))
			.build();
		IsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings,
				new NetworkIsolationProbe(settings).probe());
		executor.start(ExecutionRequest.of("sh", "-c", "sleep " + marker + "1 & exec sleep " + marker + "2"));
		long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
		while (ProcessRunnerTests.sleeping(marker).size() < 2) {
			if (System.nanoTime() > deadline) {
				System.out.println("NOT READY");
				System.exit(1);
			}
			Thread.sleep(20);
		}
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

}
