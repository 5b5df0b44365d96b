package dev.cavesandbox.internal.workspace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.cavesandbox.PrivateDirectoriesHolderMain;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Removal of the private directories of a JVM that no longer runs, proven by its lock,
 * never anyone else's. The other JVMs are real child JVMs
 * ({@link PrivateDirectoriesHolderMain}).
 */
@EnabledOnOs(OS.LINUX)
public class OrphanSweepTests {

	@TempDir
	Path workDirectory;

	@Test
	void deadJvmsDirectoriesAreRemovedWhenAnExecutorIsCreated() throws Exception {
		List<Path> left = leftByAKilledJvm(this.workDirectory, 2);
		assertThat(left).hasSize(3);
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(left).allSatisfy((path) -> assertThat(path).doesNotExist());
	}

	@Test
	void extractedLauncherIsLeftWhenADeadJvmsDirectoriesAreRemoved() throws Exception {
		Path launcher = new LauncherInstallation().resolve(settings());
		String sha256 = LauncherInstallation.sha256(launcher);
		List<Path> left = leftByAKilledJvm(this.workDirectory, 2);
		assertThat(left).hasSize(3);
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(left).allSatisfy((path) -> assertThat(path).doesNotExist());
		assertThat(launcher).isRegularFile();
		assertThat(LauncherInstallation.sha256(launcher)).isEqualTo(sha256);
		assertThat(Files.getPosixFilePermissions(launcher)).isEqualTo(PosixFilePermissions.fromString("r-x------"));
	}

	@Test
	void liveJvmsDirectoriesAreKeptEvenWhenThePidInTheirLockFileIsDead() throws Exception {
		long deadPid = deadPid();
		Process jvm = holder(this.workDirectory, 2);
		List<Path> owned;
		try {
			owned = ownedBy(this.workDirectory, jvm.pid());
			assertThat(owned).hasSize(3);
			// Seen from another PID namespace, the holder's pid would be someone else's
			// or nobody's.
			Path lockFile = owned.stream().filter(Files::isRegularFile).findFirst().orElseThrow();
			Files.writeString(lockFile, deadPid + "\n");
			assertThat(ownedBy(this.workDirectory, deadPid)).isEqualTo(owned);
			ProcessIsolatedExecutor.unisolated(settings()).close();
			assertThat(owned).allSatisfy((path) -> assertThat(path).exists());
			assertThat(owned.stream().filter(Files::isDirectory))
				.allSatisfy((directory) -> assertThat(directory.resolve("left-behind")).hasContent("x"));
		}
		finally {
			kill(jvm);
		}
		// The lock was all that kept them.
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(owned).allSatisfy((path) -> assertThat(path).doesNotExist());
	}

	/**
	 * The issue-10 case for real: a second JVM started in a PID namespace of its own
	 * (where the first JVM's pid is nobody's, as in a second container on the same
	 * {@code /tmp}) creates an executor on the same work directory while the first JVM is
	 * alive. It leaves the first JVM's directories alone; once the first JVM is dead, the
	 * same second JVM removes them.
	 */
	@Test
	void liveJvmsDirectoriesAreLeftAloneByAJvmInAnotherPidNamespace() throws Exception {
		Process jvm = holder(this.workDirectory, 2);
		List<Path> owned;
		try {
			owned = ownedBy(this.workDirectory, jvm.pid());
			assertThat(owned).hasSize(3);
			assertThat(cleanUpFromAnotherPidNamespace(jvm.pid())).as("the holder is nobody there").isFalse();
			assertThat(owned).allSatisfy((path) -> assertThat(path).exists());
			assertThat(owned.stream().filter(Files::isDirectory))
				.allSatisfy((directory) -> assertThat(directory.resolve("left-behind")).hasContent("x"));
		}
		finally {
			kill(jvm);
		}
		cleanUpFromAnotherPidNamespace(jvm.pid());
		assertThat(owned).allSatisfy((path) -> assertThat(path).doesNotExist());
	}

	/**
	 * Run a JVM in a new PID namespace (with its own {@code /proc}) that creates an
	 * executor on the work directory and closes it; return whether that JVM could see the
	 * given pid.
	 */
	private boolean cleanUpFromAnotherPidNamespace(long pid) throws Exception {
		List<String> command = List.of("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--",
				"sh", "-c", "if [ -e /proc/" + pid + " ]; then echo SEEN; fi; exec \"$@\"", "sh",
				Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), PrivateDirectoriesHolderMain.class.getName(),
				this.workDirectory.toString(), "0");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(output).isTrue();
		assertThat(process.exitValue()).as(output).isZero();
		assertThat(output).endsWith("DONE\n");
		return output.contains("SEEN");
	}

	@Test
	void anotherUsersDirectoriesAreLeftSilently() throws Exception {
		List<Path> left = leftByAKilledJvm(this.workDirectory, 1);
		// A dead JVM of another user (nobody): as root this JVM could remove them, but
		// must not.
		run("chown", "-R", "nobody", left.get(0).toString(), left.get(1).toString());
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(left).allSatisfy((path) -> assertThat(path).exists());
		assertThat(left.stream().filter(Files::isDirectory))
			.allSatisfy((directory) -> assertThat(directory.resolve("left-behind")).hasContent("x"));
	}

	/**
	 * A directory the executor handed to a command user (the shared-memory directory of
	 * the mechanisms without a mount namespace, owned by that uid) goes with the rest of
	 * the killed JVM's: the lock file is this user's, and only this user creates entries
	 * in its home.
	 */
	@Test
	void aDirectoryHandedToACommandUserGoesWithTheKilledJvmsOthers() throws Exception {
		assumeThat(System.getProperty("user.name")).as("chown to nobody needs root").isEqualTo("root");
		List<Path> left = leftByAKilledJvm(this.workDirectory, 2);
		List<Path> directories = left.stream().filter(Files::isDirectory).toList();
		assertThat(directories).hasSize(2);
		run("chown", "-R", "nobody", directories.get(0).toString());
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(left).allSatisfy((path) -> assertThat(path).doesNotExist());
	}

	/**
	 * Two users sharing a work directory (like {@code /tmp}): an unprivileged JVM
	 * (nobody) finds the directories of a killed root JVM. It can neither lock nor remove
	 * them, and says nothing.
	 */
	@Test
	void unprivilegedJvmLeavesAnotherUsersDirectoriesWithoutAWarning() throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		Path shared = Files.createDirectory(this.workDirectory.resolve("shared"));
		Files.setPosixFilePermissions(this.workDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
		run("chmod", "1777", shared.toString());
		List<Path> left = leftByAKilledJvm(shared, 2);
		String classPath = readableClassPath(Files.createDirectory(this.workDirectory.resolve("classpath")));
		Process jvm = new ProcessBuilder("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
				Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath,
				PrivateDirectoriesHolderMain.class.getName(), shared.toString(), "0")
			.redirectErrorStream(true)
			.start();
		String output = new String(jvm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(output).isEqualTo("DONE\n");
		assertThat(left).hasSize(3).allSatisfy((path) -> assertThat(path).exists());
	}

	/** The core's classes and its logging, copied where nobody can read them. */
	private static String readableClassPath(Path directory) throws Exception {
		List<String> entries = new ArrayList<>();
		for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
			Path path = Path.of(entry);
			if (Files.isDirectory(path) || path.getFileName().toString().startsWith("slf4j-")) {
				Path copy = directory.resolve(entries.size() + "-" + path.getFileName());
				run("cp", "-r", path.toString(), copy.toString());
				entries.add(copy.toString());
			}
		}
		run("chmod", "-R", "a+rX", directory.toString());
		return String.join(java.io.File.pathSeparator, entries);
	}

	@Test
	void directoriesWithoutALockFileAreLeft() throws Exception {
		// Nothing proves that their JVM is dead (an older version's, or not the
		// executor's at all).
		Path home = PrivateHome.of(this.workDirectory);
		List<Path> directories = List.of(Files.createDirectory(home.resolve("zzzabc123")),
				Files.createDirectory(home.resolve("cave-sandbox-" + deadPid() + "-123-456")));
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(directories).allSatisfy((directory) -> assertThat(directory).exists());
	}

	/**
	 * A dead JVM's tag covers exactly the names of its tag and a random part: a longer
	 * name that starts with the tag (another program's, in the home) is left.
	 */
	@Test
	void onlyNamesOfTheDeadJvmsTagAreRemoved() throws Exception {
		List<Path> left = leftByAKilledJvm(this.workDirectory, 1);
		Path directory = left.stream().filter(Files::isDirectory).findFirst().orElseThrow();
		Path longer = Files.createDirectory(directory.resolveSibling(directory.getFileName() + "0"));
		Path lockFile = left.stream().filter(Files::isRegularFile).findFirst().orElseThrow();
		ProcessIsolatedExecutor.unisolated(settings()).close();
		assertThat(directory).doesNotExist();
		assertThat(longer).exists();
		assertThat(lockFile).doesNotExist();
	}

	/**
	 * A JVM killed after it created its new lock file and before it gave it a tag's name
	 * leaves the new name, unlocked: it is removed; a new name that a live JVM holds
	 * locked is left.
	 */
	@Test
	void newLockFileOfAKilledJvmIsRemovedAndALockedOneLeft() throws Exception {
		Path home = PrivateHome.of(this.workDirectory);
		Path killed = Files.writeString(home.resolve("cave-sandbox-lock-new-0123456789abcdef"), "1\n");
		Path live = Files.writeString(home.resolve("cave-sandbox-lock-new-fedcba9876543210"), "2\n");
		// lockf(3) takes an fcntl(2) record lock, as FileChannel.lock does
		Process locker = new ProcessBuilder("python3", "-c",
				"import fcntl, sys, time\nf = open(sys.argv[1], 'r+')\nfcntl.lockf(f, fcntl.LOCK_EX)\n"
						+ "print('LOCKED', flush=True)\ntime.sleep(600)",
				live.toString())
			.redirectErrorStream(true)
			.start();
		try {
			BufferedReader out = new BufferedReader(new InputStreamReader(locker.getInputStream()));
			assertThat(out.readLine()).isEqualTo("LOCKED");
			ProcessIsolatedExecutor.unisolated(settings()).close();
			assertThat(killed).doesNotExist();
			assertThat(live).exists();
		}
		finally {
			kill(locker);
		}
	}

	private SandboxSettings settings() {
		return SandboxSettings.builder().workDirectory(this.workDirectory).build();
	}

	/**
	 * The lock file and the directories of the given pid in this user's home in the work
	 * directory.
	 */
	private static List<Path> ownedBy(Path workDirectory, long pid) throws IOException {
		return PrivateDirectoriesHolderMain.ownedBy(PrivateHome.of(workDirectory), pid);
	}

	/** The lock file and directories of a JVM killed while it held them. */
	private static List<Path> leftByAKilledJvm(Path workDirectory, int directories) throws Exception {
		Process jvm = holder(workDirectory, directories);
		try {
			return ownedBy(workDirectory, jvm.pid());
		}
		finally {
			kill(jvm);
		}
	}

	private static Process holder(Path workDirectory, int directories) throws IOException {
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), PrivateDirectoriesHolderMain.class.getName(),
				workDirectory.toString(), Integer.toString(directories));
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
