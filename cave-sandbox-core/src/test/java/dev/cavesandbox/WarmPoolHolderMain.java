package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;

/**
 * Run in a child JVM by {@link WarmBreakInTests} with a mechanism and a work directory:
 * an executor with two warm sandboxes; once both wait, prints {@code READY} and waits to
 * be killed.
 */
public final class WarmPoolHolderMain {

	private WarmPoolHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.valueOf(args[0]))
			.workDirectory(Path.of(args[1]))
			.warm(new WarmPoolSettings(2, Duration.ofSeconds(300)))
			.build();
		ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings,
				new NetworkIsolationProbe(settings).probe());
		long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
		while (executor.warmPool().ready() < 2) {
			if (System.nanoTime() > deadline) {
				System.out.println("NOT READY: " + executor.warmPool());
				System.exit(1);
			}
			Thread.sleep(20);
		}
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

}
