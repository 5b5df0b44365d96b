package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Break-in attempts on the private working directories: an unprivileged local user
 * (nobody) planting entries in a shared sticky work directory like {@code /tmp} before a
 * root JVM's executor is created, a sandboxed command leaving state in the private
 * directory it is given, for the next execution that reuses it, and one opening what it
 * creates to other local users. Each test is an attack that must stay stopped. The
 * executors' commands stay root ({@code command-user} 0), the strongest attacker a root
 * JVM can have: a command user cannot even change the home's mode on the seccomp
 * mechanism (root owns it), see
 * {@link #theSeccompMechanismsCommandUserCannotOpenTheHome}.
 */
@EnabledOnOs(OS.LINUX)
class PrivateDirectoriesBreakInTests {

	private static final String NOBODY = "65534";

	@TempDir
	Path root;

	/** A sticky, world-writable work directory, like /tmp. */
	private Path shared;

	/** Root's files outside the work directory that nothing may delete or change. */
	private Path victim;

	@BeforeEach
	void sharedWorkDirectory() throws Exception {
		assumeThat(System.getProperty("user.name")).as("the attacker is made by switching from root").isEqualTo("root");
		Files.setPosixFilePermissions(this.root, PosixFilePermissions.fromString("rwxr-xr-x"));
		this.shared = Files.createDirectory(this.root.resolve("shared"));
		run("chmod", "1777", this.shared.toString());
		this.victim = Files.createDirectory(this.root.resolve("victim"));
		Files.writeString(this.victim.resolve("precious"), "keep");
		Files.setPosixFilePermissions(this.victim.resolve("precious"), PosixFilePermissions.fromString("rw-rw-rw-"));
	}

	@Test
	void plantedSymlinksFifosAndLookalikesAreNeitherFollowedNorBlocking() throws Exception {
		String id = "1-planted";
		asNobody("cd " + this.shared + " && ln -s " + this.victim + "/precious cave-sandbox-lock-" + id + " && ln -s "
				+ this.victim + " cave-sandbox-" + id + "-dir"
				+ " && mkfifo cave-sandbox-lock-2-fifo && mkdir cave-sandbox-2-fifo-x"
				+ " && mkdir cave-sandbox-lock-3-dir && mkdir cave-sandbox-3-dir-x"
				+ " && touch cave-sandbox-lock-4-mine && mkdir cave-sandbox-4-mine-x"
				+ " && ln -s / cave-sandbox-lock-5-root && mkdir cave-sandbox-lock-6-x.tmp"
				+ " && perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => \"cave-sandbox-lock-7-sock\", Listen => 1) or die'");
		List<Path> planted = entries(this.shared);
		assertThat(planted).hasSizeGreaterThanOrEqualTo(10);
		// A FIFO opened for writing blocks until a reader comes: the constructor must
		// not.
		assertTimeoutPreemptively(Duration.ofSeconds(60), () -> new PrivateDirectories(this.shared, 1, true).close());
		assertThat(planted).allSatisfy((path) -> assertThat(path).existsNoFollowLinks());
		assertThat(this.victim.resolve("precious")).hasContent("keep");
		assertThat(Files.getPosixFilePermissions(this.victim.resolve("precious")))
			.isEqualTo(PosixFilePermissions.fromString("rw-rw-rw-"));
	}

	/**
	 * The home's name is predictable: nobody creates it first, as its own directory, as a
	 * symbolic link to a directory nobody can read, or as a file. Each is refused with an
	 * error naming it, and nothing is created in it or through it.
	 */
	@Test
	void homePlantedBeforeTheExecutorIsRefusedNamingIt() throws Exception {
		Map<String, String> plants = Map.of("nobody's directory", "mkdir -m 700 cave-sandbox-0", "a symbolic link",
				"ln -s " + this.victim + " cave-sandbox-0", "a file", "touch cave-sandbox-0");
		for (Map.Entry<String, String> plant : plants.entrySet()) {
			Path work = Files.createDirectory(this.shared.resolve("work-" + plant.getKey().replaceAll("[^a-z]", "")));
			run("chmod", "1777", work.toString());
			Path home = work.resolve("cave-sandbox-0");
			asNobody("cd " + work + " && " + plant.getValue());
			List<Path> before = entries(work);
			PrivateDirectories directories = new PrivateDirectories(work, 1, true);
			try {
				assertThatExceptionOfType(SandboxLaunchException.class).as(plant.getKey())
					.isThrownBy(directories::create)
					.withMessageContaining("refusing " + home);
			}
			finally {
				directories.close();
			}
			assertThat(entries(work)).as(plant.getKey()).isEqualTo(before);
			if (Files.isDirectory(home, LinkOption.NOFOLLOW_LINKS)) {
				assertThat(home).as(plant.getKey()).isEmptyDirectory();
			}
		}
		assertThat(entries(this.victim)).containsExactly(this.victim.resolve("precious"));
	}

	/**
	 * Root's own home, opened to others (as a command of a mechanism without a mount
	 * namespace can, with {@code chmod 755 ..}), before the executor is created or
	 * between two executions: it is made owner-only again and used.
	 */
	@Test
	void homeOpenedToOthersIsRepairedAndUsed() throws Exception {
		for (String mode : List.of("rwxr-xr-x", "rwx--x---", "rwxrwxrwx")) {
			Path work = Files.createDirectory(this.shared.resolve("work-" + mode.replace('-', '_')));
			run("chmod", "1777", work.toString());
			Path home = Files.createDirectory(work.resolve("cave-sandbox-0"));
			Files.setPosixFilePermissions(home, PosixFilePermissions.fromString(mode));
			PrivateDirectories directories = new PrivateDirectories(work, 1, true);
			try {
				Path first = directories.create();
				assertThat(first.getParent()).isEqualTo(home);
				assertThat(modeOf(home)).as(mode).isEqualTo("rwx------");
				Files.setPosixFilePermissions(home, PosixFilePermissions.fromString(mode));
				Path second = directories.create();
				assertThat(second.getParent()).isEqualTo(home);
				assertThat(modeOf(home)).as(mode + ", between two executions").isEqualTo("rwx------");
				directories.release(first);
				directories.release(second);
			}
			finally {
				directories.close();
			}
		}
	}

	/**
	 * The home is repaired while the cleaner removes released directories from it (seen
	 * in CI: a command opened the home, and the next execution's repair met an entry that
	 * the cleaner deleted between listing and checking it): an entry that is gone is no
	 * threat and does not refuse the home.
	 */
	@Test
	void homeOpenedToOthersIsRepairedWhileItsEntriesAreDeleted() throws Exception {
		Path work = Files.createDirectory(this.shared.resolve("work"));
		Path home = PrivateHome.of(work);
		List<Path> entries = new ArrayList<>();
		for (int i = 0; i < 4000; i++) {
			entries.add(Files.createDirectory(home.resolve("cave-sandbox-released-" + i)));
		}
		java.util.concurrent.CompletableFuture<Void> cleaner = java.util.concurrent.CompletableFuture
			.runAsync(() -> entries.forEach((entry) -> {
				try {
					Files.delete(entry);
				}
				catch (IOException ex) {
					throw new java.io.UncheckedIOException(ex);
				}
			}));
		int repairs = 0;
		while (!cleaner.isDone()) {
			Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
			assertThat(PrivateHome.of(work)).isEqualTo(home);
			assertThat(modeOf(home)).isEqualTo("rwx------");
			repairs++;
		}
		cleaner.get(60, TimeUnit.SECONDS);
		assertThat(repairs).as("repairs while the cleaner ran").isPositive();
	}

	/**
	 * While root's home was open to others, nobody put an entry in it: the home is closed
	 * again (owner-only) but refused, naming the entry, until the entry is gone.
	 */
	@Test
	void homeOpenedToOthersWithAnotherUsersEntryInItIsRefusedNamingIt() throws Exception {
		Path work = Files.createDirectory(this.shared.resolve("work"));
		run("chmod", "1777", work.toString());
		PrivateDirectories directories = new PrivateDirectories(work, 1, false);
		try {
			directories.release(directories.create());
			Path home = work.resolve("cave-sandbox-0");
			Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxrwxrwx"));
			asNobody("mkdir " + home + "/planted");
			for (int attempt = 1; attempt <= 2; attempt++) {
				assertThatExceptionOfType(SandboxLaunchException.class).as("attempt %d", attempt)
					.isThrownBy(directories::create)
					.withMessageContaining("refusing " + home)
					.withMessageContaining(home.resolve("planted") + ", owned by nobody");
				assertThat(modeOf(home)).isEqualTo("rwx------");
				assertThat(asNobodyProcess("ls " + home + "/planted").exitValue()).as("nobody reaches in again")
					.isNotZero();
			}
			Files.delete(home.resolve("planted"));
			directories.release(directories.create());
		}
		finally {
			directories.close();
		}
	}

	/**
	 * A command opens the home of the private directories ({@code chmod 755 ..}). With a
	 * mount namespace it reaches only the sandbox's own parent, never the home; without
	 * one it reaches the home (the documented gap) for the rest of its execution, and the
	 * next execution makes it owner-only again and runs.
	 */
	@ForEachLinuxMechanism
	void homeOpenedByACommandDoesNotStopTheNextExecution(MechanismChoice mechanism) throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path home = work.resolve("cave-sandbox-0");
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work).commandUser(0))) {
			ExecutionResult first = executor.execute("sh", "-c", "chmod 755 .. 2>/dev/null; echo chmod=$?");
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			boolean mount = LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT);
			assertThat(modeOf(home)).as("the command reached the home").isEqualTo(mount ? "rwx------" : "rwxr-xr-x");
			if (!mount) {
				assertThat(first.stdoutText()).isEqualTo("chmod=0\n");
			}
			ExecutionResult next = executor.execute("sh", "-c", "echo next");
			assertThat(next.exitCode()).as(next.stderrText()).isZero();
			assertThat(next.stdoutText()).isEqualTo("next\n");
			assertThat(modeOf(home)).isEqualTo("rwx------");
		}
	}

	/**
	 * On the seccomp mechanism a root JVM's command user, a uid of the host from the
	 * range, cannot open the home ({@code chmod 755 ..}: root owns it), nor its own
	 * directory (root owns that too; its group is the command user's for the execution).
	 */
	@Test
	void theSeccompMechanismsCommandUserCannotOpenTheHome() throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path home = work.resolve("cave-sandbox-0");
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(MechanismChoice.SECCOMP,
				(settings) -> settings.maxConcurrent(1).workDirectory(work))) {
			ExecutionResult first = executor.execute("sh", "-c",
					"id -u; chmod 755 .. 2>/dev/null; echo home=$?; chmod 777 . 2>/dev/null; echo own=$?");
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			// a uid of the command user range (which one depends on what executions
			// of this JVM with the same range released before: they share its uids)
			String uid = first.stdoutText().lines().findFirst().orElse("");
			assertThat(uid.matches("\\d+") && SandboxSettings.CommandUserRange.DEFAULT.contains(Long.parseLong(uid)))
				.as(uid)
				.isTrue();
			assertThat(first.stdoutText()).isEqualTo(uid + "\nhome=1\nown=1\n");
			assertThat(modeOf(home)).isEqualTo("rwx-----x");
		}
	}

	@Test
	void hardLinkedRootFileAsLockFileOnlyLosesTheLink() throws Exception {
		// protected_hardlinks lets nobody link a root file it can read and write:
		// root-owned, so it passes the owner check and gets locked; what is named after
		// it must still be safe.
		String id = "1-hardlink";
		asNobody("cd " + this.shared + " && ln " + this.victim + "/precious cave-sandbox-lock-" + id + " && ln -s "
				+ this.victim + " cave-sandbox-" + id + "-link && mkdir cave-sandbox-" + id + "-dir");
		new PrivateDirectories(this.shared, 1, true).close();
		assertThat(this.victim.resolve("precious")).hasContent("keep");
		assertThat(this.shared.resolve("cave-sandbox-" + id + "-link")).existsNoFollowLinks();
		assertThat(this.shared.resolve("cave-sandbox-" + id + "-dir")).isDirectory();
		assertThat(this.victim).isDirectory();
	}

	@Test
	void nobodyCannotRenameADeadRootJvmsDirectoryIntoASymlink() throws Exception {
		// The race "owner checked, then the directory swapped for a symlink" needs a
		// rename that the sticky bit forbids: the entries of a root JVM cannot be
		// replaced by another user.
		List<Path> left = leftByAKilledJvm(this.shared);
		Path directory = left.stream().filter(Files::isDirectory).findFirst().orElseThrow();
		Process rename = asNobodyProcess(
				"mv " + directory + " " + directory + "-moved && ln -s " + this.victim + " " + directory);
		assertThat(rename.exitValue()).isNotZero();
		new PrivateDirectories(this.shared, 1, true).close();
		assertThat(left).allSatisfy(
				(path) -> assertThat(Files.exists(path, LinkOption.NOFOLLOW_LINKS)).as(path.toString()).isFalse());
		assertThat(this.victim.resolve("precious")).hasContent("keep");
	}

	/**
	 * Nobody cannot put a look-alike directory in root's home; only root can, and the
	 * executor does (the shared-memory directory it hands to a command user is that
	 * user's): a directory of the dead JVM's tag goes with its lock file, whoever owns
	 * it, and keeps nothing forever.
	 */
	@Test
	void aDirectoryOfAnotherOwnerGoesWithADeadRootJvmsLockFile() throws Exception {
		List<Path> left = leftByAKilledJvm(this.shared);
		Path lockFile = left.stream()
			.filter((path) -> path.getFileName().toString().startsWith("cave-sandbox-lock-"))
			.findFirst()
			.orElseThrow();
		String id = lockFile.getFileName().toString().substring("cave-sandbox-lock-".length());
		Path planted = lockFile.resolveSibling(id + "plant0");
		Process plant = asNobodyProcess("mkdir " + planted);
		assertThat(plant.exitValue()).as("nobody cannot enter root's home").isNotZero();
		// Only root could put another user's directory there, as the executor does.
		Files.createDirectory(planted);
		run("chown", NOBODY, planted.toString());
		new PrivateDirectories(this.shared, 1, true).close();
		assertThat(left).allSatisfy(
				(path) -> assertThat(Files.exists(path, LinkOption.NOFOLLOW_LINKS)).as(path.toString()).isFalse());
		assertThat(Files.exists(planted, LinkOption.NOFOLLOW_LINKS)).as("swept with the dead JVM's").isFalse();
	}

	@Test
	void aSecondNameForThisJvmsLockFileDoesNotMakeItLetItsLockGo() throws Exception {
		// On a host with fs.protected_hardlinks=0 (or for a user allowed to link it) the
		// lock file of a live JVM can get a second name. Opening and closing that name
		// releases the process's fcntl(2) lock on the file: then any other JVM removes
		// this one's directories.
		PrivateDirectories mine = new PrivateDirectories(this.shared, 1, false);
		Path directory = mine.create();
		Files.writeString(directory.resolve("in-use"), "x");
		Path lockFile;
		try (Stream<Path> files = Files.list(PrivateHome.of(this.shared))) {
			lockFile = files.filter((file) -> file.getFileName().toString().startsWith("cave-sandbox-lock-"))
				.findFirst()
				.orElseThrow();
		}
		// A name of the lock files' shape, so that the sweep considers it.
		String tag = lockFile.getFileName().toString().substring("cave-sandbox-lock-".length());
		Files.createLink(lockFile.resolveSibling("cave-sandbox-lock-" + (tag.equals("zz1") ? "zz2" : "zz1")), lockFile);
		new PrivateDirectories(this.shared, 1, false).close();
		try {
			assertThat(cleanupInAnotherJvm(this.shared)).isEqualTo("DONE\n");
			assertThat(directory.resolve("in-use")).hasContent("x");
		}
		finally {
			mine.release(directory);
			mine.close();
		}
	}

	@ForEachLinuxMechanism
	void extendedAttributesOnTheDirectoryDoNotReachTheNextExecution(MechanismChoice mechanism) throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work).commandUser(0))) {
			// setxattr(2) is syscall 188 on x86_64
			ExecutionResult first = executor.execute("sh", "-c",
					"pwd; perl -e '($p, $n, $v) = (\".\", \"user.leak\", \"secret\");"
							+ " syscall(188, $p, $n, $v, 6, 0) == 0 or die \"setxattr: $!\\n\"'");
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			// New directories until the cleaner has renewed the old one: then the old
			// one, without the attribute.
			executeUntilIn(executor, first, "pwd; " + LIST_XATTRS,
					(second) -> assertThat(second.stdoutText()).endsWith("\n[]\n"));
		}
	}

	@ForEachLinuxMechanism
	void defaultAclOnTheDirectoryDoesNotReachTheNextExecution(MechanismChoice mechanism) throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work).commandUser(0))) {
			// A default ACL (user::rwx, user:<self>:rwx, group::---, mask::rwx,
			// other::---) in the kernel's xattr format, set with setxattr(2) (188 on
			// x86_64).
			String acl = "pack(\"V\", 2) . pack(\"vvV\", 1, 7, 0xFFFFFFFF) . pack(\"vvV\", 2, 7, $<)"
					+ " . pack(\"vvV\", 4, 0, 0xFFFFFFFF) . pack(\"vvV\", 0x10, 7, 0xFFFFFFFF)"
					+ " . pack(\"vvV\", 0x20, 0, 0xFFFFFFFF)";
			ExecutionResult first = executor.execute("sh", "-c",
					"pwd; perl -e '$a = " + acl + "; ($p, $n) = (\".\", \"system.posix_acl_default\");"
							+ " syscall(188, $p, $n, $a, length($a), 0) == 0 or die \"setxattr: $!\\n\"'; "
							+ LIST_XATTRS);
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			assertThat(first.stdoutText()).as("the attack took effect").contains("system.posix_acl_default");
			executeUntilIn(executor, first, "pwd; " + LIST_XATTRS,
					(second) -> assertThat(second.stdoutText()).endsWith("\n[]\n"));
		}
	}

	@ForEachLinuxMechanism
	void timestampsOfTheDirectoryDoNotReachTheNextExecution(MechanismChoice mechanism) throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work).commandUser(0))) {
			ExecutionResult first = executor.execute("sh", "-c", "pwd; touch -d @1000000007 .; stat -c %Y .");
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			assertThat(first.stdoutText()).endsWith("\n1000000007\n");
			executeUntilIn(executor, first, "pwd; stat -c %X-%Y .",
					(second) -> assertThat(second.stdoutText()).doesNotContain("1000000007"));
		}
	}

	@ForEachLinuxMechanism
	void immutableOrUnremovableEntriesDoNotReachTheNextExecution(MechanismChoice mechanism) throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work).commandUser(0))) {
			ExecutionResult first = executor.execute("sh", "-c",
					"pwd; echo secret > kept; chattr +i kept 2>/dev/null; chattr +a . 2>/dev/null;"
							+ " mkfifo fifo; ln -s / root; ln kept hard; mkdir -p deep/er; chmod 000 deep; true");
			assertThat(first.exitCode()).as(first.stderrText()).isZero();
			executeUntilIn(executor, first, "pwd; ls -A; stat -c %a .",
					(second) -> assertThat(second.stdoutText()).endsWith("\n700\n")
						.doesNotContain("kept", "fifo", "deep"));
		}
	}

	/**
	 * A command of a root JVM makes a copy of {@code id} setuid and opens its directory
	 * and the home. With a mount namespace nobody reaches the file at all. Without one
	 * the home is open to others for the rest of the execution (the documented gap:
	 * Landlock does not cover metadata), but the filter refused the set-user-ID bit, so
	 * no set-id file exists, nothing runs as root for nobody, and the next execution
	 * repairs the home and runs.
	 */
	@ForEachLinuxMechanism
	void setuidFileInTheDirectoryIsNotReachableByAnotherUserDuringTheExecution(MechanismChoice mechanism)
			throws Exception {
		Path work = Files.createDirectory(this.root.resolve("work"));
		Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxr-xr-x"));
		assertSetuidFileUnreachableByNobody(mechanism, work);
	}

	/**
	 * A work directory outside the hidden directories: the command sees its home's host
	 * directory, read-only like the rest of the root, and cannot open it.
	 */
	@ForEachLinuxMechanism
	void setuidFileInADirectoryOutsideTheHiddenOnesIsNotReachableByAnotherUser(MechanismChoice mechanism)
			throws Exception {
		// target/ of this module: not below a hidden directory, and traversable by
		// nobody.
		Path work = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "break-in-");
		try {
			Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxr-xr-x"));
			assertThat(asNobodyProcess("test -x " + work).exitValue()).as("nobody reaches " + work).isZero();
			assertSetuidFileUnreachableByNobody(mechanism, work);
		}
		finally {
			DirectoryTrees.delete(work);
		}
	}

	private static void assertSetuidFileUnreachableByNobody(MechanismChoice mechanism, Path work) throws Exception {
		boolean mount = LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT);
		Path home = work.resolve("cave-sandbox-0");
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work).commandUser(0))) {
			java.util.concurrent.CompletableFuture<ExecutionResult> running = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> executor
					.execute("sh", "-c", "cp /usr/bin/id ./id && { chmod 4755 id; echo chmod=$?; } "
							+ "&& stat -c mode=%a id && chmod 755 . && { chmod 755 .. 2>/dev/null; true; } && touch ready "
							+ "&& while [ ! -e done ]; do sleep 0.1; done"));
			Path ready = org.awaitility.Awaitility.await()
				.atMost(Duration.ofSeconds(60))
				.until(() -> readyMarker(work), java.util.Optional::isPresent)
				.orElseThrow();
			Process attacker = asNobodyProcess(
					ready.resolveSibling("id") + " -u > /dev/null 2>&1 && " + ready.resolveSibling("id") + " -u; true");
			String euid = new String(attacker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			String homeDuring = modeOf(home);
			int idMode = (Integer) Files.getAttribute(ready.resolveSibling("id"), "unix:mode",
					LinkOption.NOFOLLOW_LINKS);
			Files.writeString(ready.resolveSibling("done"), "");
			ExecutionResult result = running.get(120, TimeUnit.SECONDS);
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			// The launcher's seccomp filter refuses the set-user-ID bit (chmod exits
			// 1)...
			assertThat(result.stdoutText()).contains("chmod=1\n", "mode=755\n");
			assertThat(result.stderrText()).contains("Operation not permitted");
			assertThat(idMode & 06000).as("set-id bits of the command's file").isZero();
			// ... and nothing the command left runs as the JVM's user for another one.
			assertThat(euid).as("nobody ran a setuid file of the sandboxed command").isNotEqualTo("0\n");
			if (mount) {
				assertThat(homeDuring).as("the home during the execution").isEqualTo("rwx------");
				assertThat(euid).as("nobody reached the command's file").isEmpty();
				return;
			}
			// The documented gap (README, threat model; the probe's "not given: the
			// metadata of files outside the working directory"): the command opened the
			// home for the rest of its execution, and nobody ran its (not set-id) file.
			assertThat(homeDuring).as("the home during the execution").isEqualTo("rwxr-xr-x");
			assertThat(euid).isEqualTo("65534\n");
			ExecutionResult next = executor.execute("sh", "-c", "echo next");
			assertThat(next.exitCode()).as(next.stderrText()).isZero();
			assertThat(modeOf(home)).as("the home after the next execution").isEqualTo("rwx------");
		}
	}

	/** The mode of a file, without following a link, as {@code rwx------}. */
	private static String modeOf(Path file) throws IOException {
		return PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS));
	}

	/**
	 * Look in root's home directly: {@link PrivateHome#of} would repair a home that the
	 * command opened.
	 */
	private static java.util.Optional<Path> readyMarker(Path work) throws IOException {
		for (Path directory : entries(work.resolve("cave-sandbox-0"))) {
			if (Files.exists(directory.resolve("ready"))) {
				return java.util.Optional.of(directory.resolve("ready"));
			}
		}
		return java.util.Optional.empty();
	}

	private static final String LIST_XATTRS = "perl -e '$p = \".\"; $b = \"\\0\" x 4096; $n = syscall(194, $p, $b, 4096);"
			+ " $n >= 0 or die \"listxattr: $!\\n\"; print \"[\", join(\",\", grep { length } split(/\\0/, substr($b, 0, $n))), \"]\\n\"'";

	/** The lock file and directories of a root JVM killed while it held them. */
	private static List<Path> leftByAKilledJvm(Path workDirectory) throws Exception {
		Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), PrivateDirectoriesHolderMain.class.getName(),
				workDirectory.toString(), "2")
			.redirectErrorStream(true)
			.start();
		try {
			byte[] ready = jvm.getInputStream().readNBytes("READY\n".length());
			assertThat(new String(ready, StandardCharsets.UTF_8)).isEqualTo("READY\n");
			List<Path> left = PrivateDirectoriesHolderMain.ownedBy(PrivateHome.of(workDirectory), jvm.pid());
			assertThat(left).hasSize(3);
			return left;
		}
		finally {
			jvm.destroyForcibly();
			assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
		}
	}

	private static String cleanupInAnotherJvm(Path workDirectory) throws Exception {
		Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), PrivateDirectoriesHolderMain.class.getName(),
				workDirectory.toString(), "0")
			.redirectErrorStream(true)
			.start();
		String output = new String(jvm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return output;
	}

	private static List<Path> entries(Path directory) throws IOException {
		try (Stream<Path> files = Files.list(directory)) {
			return files.sorted().toList();
		}
	}

	private static void asNobody(String script) throws Exception {
		Process process = asNobodyProcess(script);
		assertThat(process.exitValue()).as(script).isZero();
	}

	private static Process asNobodyProcess(String script) throws Exception {
		Process process = new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
				"--clear-groups", "--", "/bin/sh", "-c", script)
			.redirectInput(ProcessBuilder.Redirect.INHERIT)
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return process;
	}

	private static void run(String... command) throws Exception {
		Process process = new ProcessBuilder(command).inheritIO().start();
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).isZero();
	}

	/**
	 * Run a script that prints its working directory first, again and again until it runs
	 * in the private directory of the given earlier execution: the cleaner renews that
	 * one in the background and until then a new one is used. Every run must succeed and
	 * pass the check, the one in the old directory included.
	 */
	private static void executeUntilIn(ProcessIsolatedExecutor executor, ExecutionResult earlier, String script,
			Consumer<ExecutionResult> check) {
		String directory = earlier.stdoutText().lines().findFirst().orElseThrow();
		await().atMost(Duration.ofSeconds(60)).until(() -> {
			ExecutionResult next = executor.execute("sh", "-c", script);
			assertThat(next.exitCode()).as(next.stderrText()).isZero();
			check.accept(next);
			return next.stdoutText().lines().findFirst().orElseThrow().equals(directory);
		});
	}

}
