package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The native launcher, extracted from the class path into the work directory or taken
 * from {@code launcherPath}, and verified by its SHA-256 and by executing it. Every
 * installation here is a new one, with nothing remembered from another test.
 */
@EnabledOnOs(OS.LINUX)
class LauncherInstallationTests {

	@TempDir
	Path workDirectory;

	@TempDir
	Path elsewhere;

	@Test
	void extractedCopyIsOwnerOnlyReadAndExecuteInAnOwnerOnlyDirectoryWithTheBuildsSha256() throws Exception {
		LauncherInstallation installation = new LauncherInstallation();
		LauncherBuild build = installation.build();
		String recorded = build.sha256();
		Path launcher = installation.resolve(settings(this.workDirectory));
		Path home = PrivateHome.of(this.workDirectory);
		assertThat(launcher)
			.isEqualTo(home.resolve("launcher-" + recorded.substring(0, 16)).resolve("cave-sandbox-launcher"));
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(launcher))).isEqualTo("r-x------");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(launcher.getParent())))
			.isEqualTo("rwx------");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home))).isEqualTo("rwx------");
		assertThat(sha256(Files.readAllBytes(launcher))).isEqualTo(recorded).isEqualTo(sha256(resource()));
		// Nothing else: the temporary copy was renamed, not left.
		try (var entries = Files.list(launcher.getParent())) {
			assertThat(entries).containsExactly(launcher);
		}
		assertThat(run(launcher.toString(), "--version")).isEqualTo("cave-sandbox-launcher " + build.version() + "\n");
	}

	@Test
	void tamperedCopyIsReplacedByTheNextInstallation() throws Exception {
		Path launcher = new LauncherInstallation().resolve(settings(this.workDirectory));
		Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwx------"));
		Files.writeString(launcher, "#!/bin/sh\necho cave-sandbox-launcher 2\n");
		Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("r-x------"));
		Path again = new LauncherInstallation().resolve(settings(this.workDirectory));
		assertThat(again).isEqualTo(launcher);
		assertThat(sha256(Files.readAllBytes(again))).isEqualTo(sha256(resource()));
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(again))).isEqualTo("r-x------");
	}

	@Test
	void verifiedPathIsRememberedByItsInstallationWithoutReadingTheCopyAgain() throws Exception {
		LauncherInstallation installation = new LauncherInstallation();
		Path launcher = installation.resolve(settings(this.workDirectory));
		Files.delete(launcher);
		assertThat(installation.resolve(settings(this.workDirectory))).isEqualTo(launcher);
		assertThat(launcher).doesNotExist();
		assertThat(new LauncherInstallation().resolve(settings(this.workDirectory))).isEqualTo(launcher);
		assertThat(launcher).isRegularFile();
	}

	@Test
	void launcherPathToAnUnmodifiedExecutableCopyIsUsedAsItIs() throws Exception {
		Path copy = copy(this.elsewhere.resolve("launcher"), resource(), "r-xr-xr-x");
		assertThat(new LauncherInstallation().resolve(withLauncher(copy))).isEqualTo(copy);
		assertThat(PrivateHome.of(this.workDirectory)).isEmptyDirectory();
	}

	@Test
	void launcherPathToAMissingFileIsUnavailable() {
		Path missing = this.elsewhere.resolve("missing");
		assertThat(failure(withLauncher(missing))).isEqualTo("launcherPath " + missing + " does not exist");
	}

	@Test
	void launcherPathToADirectoryIsUnavailable() {
		assertThat(failure(withLauncher(this.elsewhere)))
			.isEqualTo("launcherPath " + this.elsewhere + " is not a regular file");
	}

	@Test
	void launcherPathToANonExecutableCopyIsUnavailable() throws Exception {
		Path copy = copy(this.elsewhere.resolve("launcher"), resource(), "rw-r--r--");
		assertThat(failure(withLauncher(copy)))
			.isEqualTo("launcherPath " + copy + " is not executable (mode rw-r--r--) for the user that runs the JVM");
	}

	/**
	 * Found by the i10 break-in attempt: a copy that another user may rewrite (or replace
	 * in its directory) after its one check would run before every wrapper, as root for a
	 * root JVM.
	 */
	@Test
	void launcherPathThatOthersMayWriteOrReplaceIsUnavailable() throws Exception {
		Path writable = copy(this.elsewhere.resolve("launcher"), resource(), "r-xr-xrwx");
		assertThat(failure(withLauncher(writable))).startsWith("launcherPath " + writable
				+ " is writable by group or others (r-xr-xrwx), who could replace the launcher after its check");
		Path shared = Files.createDirectory(this.elsewhere.resolve("shared"));
		Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
		Path inShared = copy(shared.resolve("launcher"), resource(), "r-xr-xr-x");
		assertThat(failure(withLauncher(inShared))).startsWith("the directory " + shared.toRealPath()
				+ " of launcherPath " + inShared + " is writable by group or others (rwxrwxrwx)");
		// Found by the new-user trial: an open directory further up lets anyone rename
		// the launcher's own directory away and put another in its place.
		Path below = Files.createDirectory(shared.resolve("sub"));
		Path deeper = copy(below.resolve("launcher"), resource(), "r-xr-xr-x");
		assertThat(failure(withLauncher(deeper))).startsWith("the directory " + shared.toRealPath()
				+ " of launcherPath " + deeper + " is writable by group or others (rwxrwxrwx)");
		// Sticky, like /tmp: others cannot rename what is not theirs.
		Files.setAttribute(shared, "unix:mode", 01777);
		assertThat(new LauncherInstallation().resolve(withLauncher(deeper))).isEqualTo(deeper);
	}

	/**
	 * Found by the second i10 break-in attempt: the directories were checked on the real
	 * path, but the configured path was spawned, so a symbolic link in a directory that
	 * others may write (or a link another user owns in a sticky one) could be pointed at
	 * another program after the check. The real path is what runs now: swapping the link
	 * changes nothing.
	 */
	@Test
	void launcherPathThroughASymbolicLinkRunsTheRealPathThatWasChecked() throws Exception {
		Files.setPosixFilePermissions(this.elsewhere, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path installed = Files.createDirectory(this.elsewhere.resolve("lib"));
		Path launcher = copy(installed.resolve("cave-sandbox-launcher"), resource(), "r-xr-xr-x");
		Path open = Files.createDirectory(this.elsewhere.resolve("open"));
		Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
		Path link = Files.createSymbolicLink(open.resolve("launcher"), launcher);
		LauncherInstallation installation = new LauncherInstallation();
		assertThat(installation.resolve(withLauncher(link))).isEqualTo(launcher.toRealPath());
		Path directoryLink = Files.createSymbolicLink(open.resolve("lib"), installed);
		assertThat(new LauncherInstallation().resolve(withLauncher(directoryLink.resolve("cave-sandbox-launcher"))))
			.isEqualTo(launcher.toRealPath());
		// Pointed elsewhere after the check: what was resolved stays the checked copy.
		Path other = copy(this.elsewhere.resolve("other"), "#!/bin/sh\nexit 0\n".getBytes(), "r-xr-xr-x");
		Files.delete(link);
		Files.createSymbolicLink(link, other);
		assertThat(installation.resolve(withLauncher(link))).isEqualTo(launcher.toRealPath());
		installation.checkUnchanged(launcher.toRealPath());
	}

	/**
	 * A verified copy replaced afterwards (renamed over, or written) is refused before it
	 * runs; one that is still this jar's build is taken again.
	 */
	@Test
	void launcherReplacedAfterItsCheckIsRefusedBeforeTheNextSpawn() throws Exception {
		Path launcher = copy(this.elsewhere.resolve("launcher"), resource(), "r-xr-xr-x");
		LauncherInstallation installation = new LauncherInstallation();
		Path resolved = installation.resolve(withLauncher(launcher));
		installation.checkUnchanged(resolved);
		Path script = copy(this.elsewhere.resolve("script"), "#!/bin/sh\nexit 0\n".getBytes(), "r-xr-xr-x");
		Files.move(script, resolved, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
		assertThatExceptionOfType(LauncherInstallation.UnavailableException.class)
			.isThrownBy(() -> installation.checkUnchanged(resolved))
			.withMessageStartingWith("the launcher " + resolved + " changed after it was verified: SHA-256 ");
		Path genuine = copy(this.elsewhere.resolve("genuine"), resource(), "r-xr-xr-x");
		Files.move(genuine, resolved, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
		installation.checkUnchanged(resolved);
	}

	@Test
	void relativeLauncherPathIsUnavailable() {
		Path relative = Path.of("cave-sandbox-launcher");
		assertThat(failure(withLauncher(relative)))
			.isEqualTo("launcherPath cave-sandbox-launcher is not an absolute path");
	}

	@Test
	void launcherPathToACopyWithOneByteChangedIsUnavailable() throws Exception {
		byte[] changed = resource();
		changed[changed.length / 2] ^= 1;
		Path copy = copy(this.elsewhere.resolve("launcher"), changed, "r-xr-xr-x");
		assertThat(failure(withLauncher(copy)))
			.isEqualTo("launcherPath " + copy + ": SHA-256 mismatch: expected " + sha256(resource()) + " (this jar's "
					+ LauncherBuild.platform(System.getProperty("os.arch")) + " build), got " + sha256(changed));
	}

	@Test
	void architectureWithoutABuildIsUnavailable() {
		assertThatExceptionOfType(LauncherInstallation.UnavailableException.class)
			.isThrownBy(() -> new LauncherInstallation("linux-sparc64").resolve(settings(this.workDirectory)))
			.withMessageStartingWith("no build of the launcher for architecture linux-sparc64 ")
			.withMessageContaining("the jar has no dev/cavesandbox/launcher/linux-sparc64/cave-sandbox-launcher")
			.withMessageEndingWith("build cave-sandbox-core on that architecture");
	}

	/**
	 * A work directory on a real {@code noexec} mount: the extracted copy is refused by
	 * the kernel (EACCES), and the failure names the mount and the way out,
	 * {@code launcherPath} with the SHA-256 the copy must have; a copy elsewhere works.
	 */
	@Test
	void workDirectoryOnANoexecMountIsUnavailableUnlessLauncherPathNamesACopyElsewhere() throws Exception {
		Path mount = noexecMount();
		try {
			String sha256 = sha256(resource());
			assertThat(failure(settings(mount))).startsWith("the launcher " + mount)
				.contains("cannot be executed: its filesystem " + mount + " is mounted noexec (EACCES)")
				.contains("point launcherPath at an executable copy")
				.contains("with SHA-256 " + sha256);
			Path copy = copy(this.elsewhere.resolve("launcher"), resource(), "r-x------");
			SandboxSettings settings = SandboxSettings.builder().workDirectory(mount).launcherPath(copy).build();
			assertThat(new LauncherInstallation().resolve(settings)).isEqualTo(copy);
		}
		finally {
			run("umount", "-l", mount.toString());
		}
	}

	@Test
	void launcherPathOnANoexecMountIsUnavailable() throws Exception {
		Path mount = noexecMount();
		try {
			Path copy = copy(mount.resolve("launcher"), resource(), "r-xr-xr-x");
			assertThat(failure(withLauncher(copy))).isEqualTo("launcherPath " + copy
					+ " cannot be executed: its filesystem " + mount
					+ " is mounted noexec (EACCES); point launcherPath at a copy on a filesystem that allows execution");
		}
		finally {
			run("umount", "-l", mount.toString());
		}
	}

	/**
	 * The probe of each mechanism reports the noexec work directory as
	 * {@link UnavailabilityCause#WORK_DIRECTORY_UNUSABLE} (its check runs before the
	 * launcher is extracted), and verifies isolation with the same work directory once
	 * {@code launcherPath} names an executable copy.
	 */
	@ForEachLinuxMechanism
	void probeReportsANoexecWorkDirectoryAsUnusable(MechanismChoice mechanism) throws Exception {
		Path mount = noexecMount();
		try {
			IsolationCapability refused = new NetworkIsolationProbe(
					SandboxSettings.builder().mechanism(mechanism).workDirectory(mount).build())
				.probe();
			assertThat(refused.cause()).isEqualTo(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE);
			assertThat(refused.detail()).contains(mount + " (workDirectory) is mounted noexec");
			Path copy = copy(this.elsewhere.resolve("launcher"), resource(), "r-x------");
			IsolationCapability verified = new NetworkIsolationProbe(
					SandboxSettings.builder().mechanism(mechanism).workDirectory(mount).launcherPath(copy).build())
				.probe();
			assertThat(verified.available()).as("%s", verified).isTrue();
		}
		finally {
			run("umount", "-l", mount.toString());
		}
	}

	/**
	 * Found by the i10 break-in attempt (before the fix): a persistent working directory
	 * that contained the work directory put the extracted launcher within the command's
	 * reach; the command (with the JVM's uid, or uid 0 mapped to it) renamed a script
	 * over it, and the next execution ran the script as {@code outer}, in the host's
	 * network namespace. Such a working directory is now refused, naming the home it
	 * contains.
	 */
	@ForEachLinuxMechanism
	void workingDirectoryThatContainsTheLaunchersHomeIsRefused(MechanismChoice mechanism) throws Exception {
		Path base = this.elsewhere.toRealPath();
		Path work = Files.createDirectory(base.resolve("work"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.workDirectory(work))) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> executor
					.execute(ExecutionRequest.builder("/bin/sh", "-c", plant(base)).workingDirectory(base).build()))
				.withMessageContaining("contains " + work.resolve("cave-sandbox-" + uid()))
				.withMessageContaining("a home of the private working directories and of the launcher");
			Path launcherHome = Files.list(work.resolve("cave-sandbox-" + uid()))
				.filter((path) -> path.getFileName().toString().startsWith("launcher-"))
				.findFirst()
				.orElseThrow();
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> executor
					.execute(ExecutionRequest.builder("/bin/true").workingDirectory(launcherHome).build()))
				.withMessageContaining("lies in " + work.resolve("cave-sandbox-" + uid()));
			assertThat(executor.execute("sh", "-c", "echo second").stdoutText()).isEqualTo("second\n");
			assertThat(base.resolve("escaped")).doesNotExist();
		}
	}

	/**
	 * Found by the second i10 break-in attempt: the refusal knew the home of the
	 * extracted launcher, not a configured {@code launcherPath}. A request whose working
	 * directory was (or contained) the directory of the installed copy got it mounted
	 * writable; the command renamed a script over the copy, and the next execution ran
	 * the script as {@code outer}, in the host's network namespace. Now refused, as are
	 * the directories of the wrappers' programs. (The same reach, without any request,
	 * with {@code read-only-root=false}, which the threat model already names.)
	 */
	@ForEachLinuxMechanism
	void workingDirectoryThatContainsLauncherPathIsRefused(MechanismChoice mechanism) throws Exception {
		Path base = this.elsewhere.toRealPath();
		Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path installed = Files.createDirectory(base.resolve("lib"));
		Path launcher = copy(installed.resolve("cave-sandbox-launcher"), resource(), "r-xr-xr-x");
		Path escaped = base.resolve("escaped");
		String replace = "printf '#!/bin/sh\\necho \"net=$(readlink /proc/self/ns/net)\" > " + escaped
				+ "\\nexit 1\\n' > .x && chmod 755 .x && mv -f .x cave-sandbox-launcher";
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.workDirectory(this.workDirectory).launcherPath(launcher))) {
			Throwable refusal = catchThrowable(() -> executor
				.execute(ExecutionRequest.builder("/bin/sh", "-c", replace).workingDirectory(installed).build()));
			catchThrowable(() -> executor.execute("true"));
			assertThat(escaped).as("the replaced launcherPath ran its script in the host").doesNotExist();
			assertThat(refusal).isInstanceOf(InvalidExecutionRequestException.class);
		}
	}

	/**
	 * The other way the break-in attempt reached the launcher: a writable root and a work
	 * directory outside the hidden directories. The home of the private directories (and
	 * of the launcher) is now hidden as well: the command sees only its own directory of
	 * it, and cannot find the launcher to replace it. A mechanism without a mount
	 * namespace hides nothing in the host view, the one with a root to make writable (the
	 * launcher's directory is in sight, as its verdict says) and has no writable root to
	 * give: Landlock refuses the replacement outside the working directory.
	 */
	@ForEachLinuxMechanism
	void commandCannotReachTheLauncherThroughAWritableRoot(MechanismChoice mechanism) throws Exception {
		Path base = this.elsewhere.toRealPath();
		Path work = Files.createDirectory(base.resolve("work"));
		boolean hides = LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.workDirectory(work)
					.readOnlyRoot(false)
					.filesystemView(SandboxSettings.Filesystem.View.HOST))) {
			ExecutionResult first = executor.execute("/bin/sh", "-c",
					"cd " + work + " && ls -A cave-sandbox-*; " + plant(base));
			assertThat(first.exitCode()).as(first.stderrText()).isNotZero();
			assertThat(first.stdoutText()).doesNotContain("planted");
			if (hides) {
				assertThat(first.stdoutText()).doesNotContain("launcher-");
			}
			else {
				// Landlock refuses the write (EACCES); on namespaces a root JVM's command
				// user, without CAP_FOWNER, cannot even chmod root's directory (EPERM).
				assertThat(first.stderrText()).containsAnyOf("Permission denied", "Operation not permitted");
			}
			ExecutionResult second = executor.execute("sh", "-c", "echo second");
			assertThat(second.stdoutText()).isEqualTo("second\n");
			assertThat(base.resolve("escaped")).as("the second execution ran the command's own code in the host")
				.doesNotExist();
		}
	}

	/** What the break-in attempt ran: a script renamed over the launcher. */
	private static String plant(Path base) {
		return """
				cd %s
				L=$(ls -d work/cave-sandbox-*/launcher-*)
				chmod u+w "$L" && mv "$L/cave-sandbox-launcher" "$L/real" && cat > "$L/x" <<'EOF'
				#!/bin/sh
				echo "outer ran with net=$(readlink /proc/self/ns/net)" > %s
				exec "$(dirname "$0")/real" "$@"
				EOF
				chmod 500 "$L/x" && mv "$L/x" "$L/cave-sandbox-launcher" && chmod u-w "$L" && echo planted
				""".formatted(base, base.resolve("escaped"));
	}

	private static long uid() throws IOException {
		return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
	}

	private Path noexecMount() throws Exception {
		assumeThat(System.getProperty("user.name")).as("mounting a tmpfs needs root").isEqualTo("root");
		Path mount = Files.createTempDirectory(this.workDirectory, "noexec-");
		run("mount", "-t", "tmpfs", "-o", "noexec,size=16m,mode=0755", "tmpfs", mount.toString());
		assertThat(ExecutionCheck.noexecMount(mount)).isEqualTo(mount);
		return mount;
	}

	private static SandboxSettings settings(Path workDirectory) {
		return SandboxSettings.builder().workDirectory(workDirectory).build();
	}

	private SandboxSettings withLauncher(Path launcher) {
		return SandboxSettings.builder().workDirectory(this.workDirectory).launcherPath(launcher).build();
	}

	private static String failure(SandboxSettings settings) {
		try {
			Path launcher = new LauncherInstallation().resolve(settings);
			throw new AssertionError("the launcher " + launcher + " was accepted");
		}
		catch (LauncherInstallation.UnavailableException ex) {
			return ex.getMessage();
		}
	}

	private static Path copy(Path target, byte[] content, String mode) throws IOException {
		Files.write(target, content);
		Files.setPosixFilePermissions(target, PosixFilePermissions.fromString(mode));
		return target;
	}

	/** The launcher's build on the class path, read without the class under test. */
	private static byte[] resource() throws IOException {
		String name = "/dev/cavesandbox/launcher/" + LauncherBuild.platform(System.getProperty("os.arch"))
				+ "/cave-sandbox-launcher";
		try (InputStream in = LauncherInstallationTests.class.getResourceAsStream(name)) {
			assertThat(in).as(name).isNotNull();
			return in.readAllBytes();
		}
	}

	private static String sha256(byte[] content) throws Exception {
		return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
	}

	private static String run(String... command) throws Exception {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes());
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as("%s: %s", String.join(" ", command), output).isZero();
		return output;
	}

}
