package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Run in a child JVM by {@link PrivateDirectoriesTests}: creates private directories in the given
 * work directory as an executor does, leaves a file in each, prints {@code READY} and waits to be
 * killed.
 */
public final class PrivateDirectoriesHolderMain {

	private PrivateDirectoriesHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		PrivateDirectories directories = new PrivateDirectories(Path.of(args[0]), 1, false);
		int count = Integer.parseInt(args[1]);
		for (int i = 0; i < count; i++) {
			Files.writeString(directories.create().resolve("left-behind"), "x");
		}
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

}
