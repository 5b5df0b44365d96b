package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.workspace.OrphanSweepTests;
import dev.cavesandbox.internal.workspace.PrivateDirectories;

/**
 * Run in a child JVM by {@link OrphanSweepTests}: creates private directories in the
 * given work directory as an executor does, leaves a file in each, prints {@code READY}
 * and waits to be killed. With a count of 0 it creates an executor on the work directory
 * (which removes the orphaned directories there), prints {@code DONE} and exits.
 * {@link #ownedBy} finds what such a JVM holds.
 */
public final class PrivateDirectoriesHolderMain {

	private PrivateDirectoriesHolderMain() {
	}

	public static void main(String[] args) throws Exception {
		// The tests read this JVM's output, stderr included: the warning about a work
		// directory as long as a @TempDir's (SocketRoomTests) is not theirs.
		System.setProperty("org.slf4j.simpleLogger.log.dev.cavesandbox.internal.workspace.SocketRoom", "error");
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

	/**
	 * The lock file of a JVM in a home of private directories (the one that names its
	 * pid) and the directories of its tag ({@code <tag>} and 6 base-36 characters).
	 * @param home a home, {@code <workDirectory>/cave-sandbox-<uid>}
	 * @param pid the JVM's pid
	 * @return them, sorted
	 * @throws IOException if the home cannot be read
	 */
	public static List<Path> ownedBy(Path home, long pid) throws IOException {
		String lockPrefix = "cave-sandbox-lock-";
		List<Path> owned = new ArrayList<>();
		try (Stream<Path> files = Files.list(home)) {
			for (Path file : files.filter((each) -> each.getFileName().toString().startsWith(lockPrefix)).toList()) {
				if (Files.readString(file).strip().equals(Long.toString(pid))) {
					String tag = file.getFileName().toString().substring(lockPrefix.length());
					owned.add(file);
					try (Stream<Path> directories = Files.list(home)) {
						directories.filter((each) -> each.getFileName().toString().matches(tag + "[0-9a-z]{6}"))
							.forEach(owned::add);
					}
				}
			}
		}
		return owned.stream().sorted().toList();
	}

}
