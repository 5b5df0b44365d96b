package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Private working directories: reuse of emptied ones, and removal of the directories of a JVM that
 * no longer runs, proven by its lock, never anyone else's. The other JVMs are real child JVMs.
 */
@EnabledOnOs(OS.LINUX)
class PrivateDirectoriesTests {

	@TempDir
	Path workDirectory;

	@Test
	void emptiedDirectoryIsReusedOwnerOnlyWhenReuseIsOn() throws IOException {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, true);
		Path first = directories.create();
		Files.writeString(first.resolve("left"), "x");
		Files.setPosixFilePermissions(first, PosixFilePermissions.fromString("rwxrwxrwx"));
		directories.release(first);
		Path second = directories.create();
		assertThat(second).isEqualTo(first).isEmptyDirectory();
		assertThat(Files.getPosixFilePermissions(second)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
		directories.close();
		directories.release(second);
		assertThat(second).doesNotExist();
	}

	@Test
	void directoryIsDeletedWhenReuseIsOff() {
		PrivateDirectories directories = new PrivateDirectories(this.workDirectory, 1, false);
		Path directory = directories.create();
		directories.release(directory);
		assertThat(directory).doesNotExist();
	}

	@Test
	void deadJvmsDirectoriesAreRemovedWhenAnExecutorIsCreated() throws Exception {
		List<Path> left = leftByAKilledJvm(2);
		assertThat(left).hasSize(3);
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(left).allSatisfy((path) -> assertThat(path).doesNotExist());
	}

	@Test
	void liveJvmsDirectoriesAreKeptEvenWhenThePidInTheirNameIsDead() throws Exception {
		long deadPid = deadPid();
		Process jvm = holder(2);
		List<Path> renamed = new ArrayList<>();
		try {
			// Seen from another PID namespace, the holder's pid would be someone else's or nobody's.
			for (Path path : ownedBy(jvm.pid())) {
				String name = path.getFileName().toString().replace("-" + jvm.pid() + "-", "-" + deadPid + "-");
				renamed.add(Files.move(path, path.resolveSibling(name)));
			}
			assertThat(renamed).hasSize(3);
			ProcessIsolatedExecutor.unisolated(settings()).close();
			assertThat(renamed).allSatisfy((path) -> assertThat(path).exists());
			assertThat(ownedBy(deadPid).stream().filter(Files::isDirectory))
				.allSatisfy((directory) -> assertThat(directory.resolve("left-behind")).hasContent("x"));
		}
		finally {
			kill(jvm);
		}
		// The lock was all that kept them.
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(renamed).allSatisfy((path) -> assertThat(path).doesNotExist());
	}

	@Test
	void anotherUsersDirectoriesAreLeftSilently() throws Exception {
		List<Path> left = leftByAKilledJvm(1);
		// A dead JVM of another user (nobody): as root this JVM could remove them, but must not.
		run("chown", "-R", "nobody", left.get(0).toString(), left.get(1).toString());
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(left).allSatisfy((path) -> assertThat(path).exists());
		assertThat(left.stream().filter(Files::isDirectory))
			.allSatisfy((directory) -> assertThat(directory.resolve("left-behind")).hasContent("x"));
	}

	@Test
	void directoriesWithoutALockFileAreLeft() throws Exception {
		// Nothing proves that their JVM is dead (an older version's, or not the executor's at all).
		Path directory = Files.createDirectory(this.workDirectory.resolve("cave-sandbox-" + deadPid() + "-123"));
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(directory).exists();
	}

	private SandboxSettings settings() {
		return SandboxSettings.builder().workDirectory(this.workDirectory).build();
	}

	/** The lock file and the directories of the given pid in the work directory. */
	private List<Path> ownedBy(long pid) throws IOException {
		try (Stream<Path> files = Files.list(this.workDirectory)) {
			return files
				.filter((file) -> file.getFileName().toString().startsWith("cave-sandbox-" + pid + "-")
						|| file.getFileName().toString().startsWith("cave-sandbox-lock-" + pid + "-"))
				.sorted()
				.toList();
		}
	}

	/** The lock file and directories of a JVM killed while it held them. */
	private List<Path> leftByAKilledJvm(int directories) throws Exception {
		Process jvm = holder(directories);
		try {
			return ownedBy(jvm.pid());
		}
		finally {
			kill(jvm);
		}
	}

	private Process holder(int directories) throws IOException {
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), PrivateDirectoriesHolderMain.class.getName(),
				this.workDirectory.toString(), Integer.toString(directories));
		Process jvm = new ProcessBuilder(command).redirectErrorStream(true).start();
		BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream()));
		assertThat(out.readLine()).as("child JVM output").isEqualTo("READY");
		return jvm;
	}

	private static void kill(Process jvm) throws InterruptedException {
		jvm.destroyForcibly();
		assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
	}

	private static long deadPid() throws Exception {
		Process process = new ProcessBuilder("true").start();
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
		assertThat(ProcessHandle.of(process.pid())).isEmpty();
		return process.pid();
	}

	private static void run(String... command) throws Exception {
		Process process = new ProcessBuilder(command).inheritIO().start();
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).isZero();
	}

}
