package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.workspace.OrphanSweepTests;
import dev.cavesandbox.internal.workspace.PrivateDirectories;

/**
 * Run in a child JVM by {@link OrphanSweepTests}: creates private directories in the
 * given work directory as an executor does, leaves a file in each, prints {@code READY}
 * and waits to be killed. With a count of 0 it creates an executor on the work directory
 * (which removes the orphaned directories there), prints {@code DONE} and exits.
 */
public final class PrivateDirectoriesHolderMain {

	private PrivateDirectoriesHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		Path workDirectory = Path.of(args[0]);
		int count = Integer.parseInt(args[1]);
		if (count == 0) {
			ProcessIsolatedExecutor.unisolated(SandboxSettings.builder().workDirectory(workDirectory).build()).close();
			System.out.println("DONE");
			return;
		}
		PrivateDirectories directories = new PrivateDirectories(workDirectory, 1, false);
		for (int i = 0; i < count; i++) {
			Files.writeString(directories.create().resolve("left-behind"), "x");
		}
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

}
