package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SmallTmpfs;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The work directory check on real file systems: small tmpfs mounts that are read-only,
 * full, out of inodes or {@code noexec}. Each is reported by the probe of each mechanism
 * as {@link UnavailabilityCause#WORK_DIRECTORY_UNUSABLE} before any wrapper runs, with a
 * detail that names the directory and the problem, and the exception's text gives the fix
 * but no advice to fall back.
 */
@EnabledOnOs(OS.LINUX)
class WorkDirectoryCheckTests {

	@TempDir
	Path parent;

	@ForEachLinuxMechanism
	void missingWorkDirectoryIsNamed(MechanismChoice mechanism) {
		Path missing = this.parent.resolve("missing");
		assertUnusable(mechanism, missing, "the work directory " + missing + " (workDirectory) does not exist");
		assertThat(missing).doesNotExist();
	}

	@ForEachLinuxMechanism
	void fileAsWorkDirectoryIsNamed(MechanismChoice mechanism) throws IOException {
		Path file = Files.writeString(this.parent.resolve("file"), "x");
		assertUnusable(mechanism, file, "the work directory " + file + " (workDirectory) is not a directory");
	}

	/**
	 * /proc has no block at all: it is not full, nothing can be created in it (the first
	 * README trial saw "no space left" here).
	 */
	@ForEachLinuxMechanism
	void pseudoFileSystemIsNotWritableRatherThanFull(MechanismChoice mechanism) {
		assertUnusable(mechanism, Path.of("/proc"), "the work directory /proc (workDirectory) is not writable");
	}

	@ForEachLinuxMechanism
	void readOnlyWorkDirectoryIsNamedWithItsMount(MechanismChoice mechanism) throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(this.parent, "size=1m")) {
			tmpfs.remount(true);
			assertUnusable(mechanism, tmpfs.path(), "the work directory " + tmpfs.path()
					+ " (workDirectory) is on a read-only file system (EROFS); its mount " + tmpfs.path());
			assertThat(tmpfs.entries()).containsExactly("");
		}
	}

	@ForEachLinuxMechanism
	void fullWorkDirectoryHasNoSpaceLeft(MechanismChoice mechanism) throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(this.parent, "size=1m")) {
			tmpfs.fill();
			assertUnusable(mechanism, tmpfs.path(), "the work directory " + tmpfs.path()
					+ " (workDirectory) has no space left (ENOSPC, no usable space)");
			assertThat(tmpfs.entries()).as("nothing left behind").containsExactly("");
		}
	}

	@ForEachLinuxMechanism
	void workDirectoryWithoutInodesIsToldFromAFullOne(MechanismChoice mechanism) throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(this.parent, "size=1m,nr_inodes=16")) {
			tmpfs.exhaustInodes();
			assertUnusable(mechanism, tmpfs.path(), "the work directory " + tmpfs.path()
					+ " (workDirectory) has no inodes left (ENOSPC while space is left)");
			assertThat(tmpfs.entries()).as("nothing left behind").containsExactly("");
		}
	}

	@ForEachLinuxMechanism
	void noexecWorkDirectoryIsUnusableOnlyWhereTheLauncherIsExtractedToIt(MechanismChoice mechanism) throws Exception {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(this.parent, "size=1m,noexec")) {
			assertUnusable(mechanism, tmpfs.path(), "the work directory " + tmpfs.path()
					+ " (workDirectory) is mounted noexec, and the launcher is extracted to it and executed from it");
			SandboxSettings withLauncher = SandboxSettings.builder()
				.mechanism(mechanism)
				.workDirectory(tmpfs.path())
				.launcherPath(LauncherInstallation.shared().resolve(SandboxSettings.builder().build()))
				.build();
			assertThat(WorkDirectoryCheck.problem(withLauncher)).isNull();
			IsolationCapability verified = new NetworkIsolationProbe(withLauncher).probe();
			assertThat(verified.available()).as("%s", verified).isTrue();
		}
	}

	@Test
	void usableWorkDirectoryPassesAndKeepsNothingOfTheTrial() throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(this.parent, "size=1m,nr_inodes=16")) {
			SandboxSettings settings = SandboxSettings.builder().workDirectory(tmpfs.path()).build();
			assertThat(WorkDirectoryCheck.problem(settings)).isNull();
			assertThat(tmpfs.entries()).containsExactly("");
		}
	}

	/**
	 * A failure that happened (rather than one the check provoked) is classified the same
	 * way: the read-only file system from the error itself, ENOSPC by the space left.
	 */
	@Test
	void failuresAreClassifiedAsTheCheckDoes() throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(this.parent, "size=1m,nr_inodes=16")) {
			tmpfs.exhaustInodes();
			IOException noInode = failureToCreateIn(tmpfs.path());
			assertThat(WorkDirectoryCheck.reason(tmpfs.path(), noInode)).isEqualTo(WorkDirectoryCheck.Reason.NO_INODES);
			tmpfs.free();
			tmpfs.fill();
			IOException noSpace = failureToWriteIn(tmpfs.path());
			assertThat(WorkDirectoryCheck.reason(tmpfs.path(), noSpace)).isEqualTo(WorkDirectoryCheck.Reason.NO_SPACE);
			tmpfs.free();
			tmpfs.remount(true);
			IOException readOnly = failureToCreateIn(tmpfs.path());
			assertThat(WorkDirectoryCheck.reason(tmpfs.path(), readOnly))
				.isEqualTo(WorkDirectoryCheck.Reason.READ_ONLY);
			assertThat(WorkDirectoryCheck.explain(tmpfs.path(), readOnly)).contains("Read-only file system");
		}
	}

	private static IOException failureToCreateIn(Path directory) {
		try {
			Files.createTempDirectory(directory, "x");
		}
		catch (IOException ex) {
			return ex;
		}
		throw new AssertionError("a directory could be created in " + directory);
	}

	private static IOException failureToWriteIn(Path directory) {
		try {
			Files.write(Files.createTempFile(directory, "x", null), new byte[] { 1 });
		}
		catch (IOException ex) {
			return ex;
		}
		throw new AssertionError("a file could be written in " + directory);
	}

	/**
	 * The probe reports the cause with the detail, and the exception of a strict executor
	 * gives the fix without any advice to fall back.
	 */
	private static void assertUnusable(MechanismChoice mechanism, Path workDirectory, String detail) {
		SandboxSettings settings = SandboxSettings.builder().mechanism(mechanism).workDirectory(workDirectory).build();
		IsolationCapability verdict = new NetworkIsolationProbe(settings).probe();
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE);
		assertThat(verdict.detail()).startsWith(detail);
		String message = new NetworkIsolationUnavailableException(verdict).getMessage();
		assertThat(message).contains(detail)
			.contains("emptyDir")
			.contains(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE.fix())
			.doesNotContainIgnoringCase("fallback");
	}

}
