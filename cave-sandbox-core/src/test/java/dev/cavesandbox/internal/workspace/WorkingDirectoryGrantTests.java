package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The working directory's group given to a root JVM's seccomp command user for an
 * execution and taken back, for real on the file system (root only: only root may give a
 * directory to a group it is not in).
 */
@EnabledOnOs(OS.LINUX)
class WorkingDirectoryGrantTests {

	private static final long NOBODY = 65534;

	@TempDir
	Path temp;

	private Path directory;

	@BeforeEach
	void rootAndAPrivateDirectory() throws IOException {
		assumeThat(System.getProperty("user.name")).as("only root may give a directory to another group")
			.isEqualTo("root");
		this.directory = Files.createDirectory(this.temp.resolve("work"));
		Files.setPosixFilePermissions(this.directory, PosixFilePermissions.fromString("rwx------"));
	}

	@Test
	void theGroupGetsReadWriteAndSearchForTheGrantOnly() throws IOException {
		try (WorkingDirectoryGrant grant = WorkingDirectoryGrant.grant(this.directory, NOBODY)) {
			assertThat(state(this.directory)).isEqualTo("65534 rwxrwx---");
		}
		assertThat(state(this.directory)).isEqualTo("0 rwx------");
	}

	/**
	 * Found by a break-in attempt: two executions in one request working directory
	 * overlapped, the second saved the first one's grant as the state to put back, and
	 * the directory stayed the command user's group with mode 0770 for good.
	 */
	@Test
	void overlappingGrantsPutBackWhatTheFirstFoundWhenTheLastEnds() throws IOException {
		WorkingDirectoryGrant first = WorkingDirectoryGrant.grant(this.directory, NOBODY);
		WorkingDirectoryGrant second = WorkingDirectoryGrant.grant(this.directory, NOBODY);
		first.close();
		assertThat(state(this.directory)).as("the second execution still runs").isEqualTo("65534 rwxrwx---");
		second.close();
		assertThat(state(this.directory)).isEqualTo("0 rwx------");
		try (WorkingDirectoryGrant third = WorkingDirectoryGrant.grant(this.directory, NOBODY)) {
			assertThat(state(this.directory)).isEqualTo("65534 rwxrwx---");
		}
		assertThat(state(this.directory)).isEqualTo("0 rwx------");
	}

	/**
	 * Found by a break-in attempt: the nine permission bits of
	 * {@link java.nio.file.attribute.PosixFilePermission} dropped a set-group-ID or
	 * sticky bit for good.
	 */
	@Test
	void setGroupIdAndStickyBitsArePutBack() throws IOException {
		Files.setAttribute(this.directory, "unix:mode", 03750);
		try (WorkingDirectoryGrant grant = WorkingDirectoryGrant.grant(this.directory, NOBODY)) {
			assertThat(state(this.directory)).isEqualTo("65534 rwxrwx---");
		}
		assertThat(Integer.toOctalString((Integer) Files.getAttribute(this.directory, "unix:mode") & 07777))
			.isEqualTo("3750");
		assertThat(state(this.directory)).isEqualTo("0 rwxr-x---");
	}

	@Test
	void aDirectoryGivenToOneGroupIsNotGivenToAnotherMeanwhile() throws IOException {
		try (WorkingDirectoryGrant grant = WorkingDirectoryGrant.grant(this.directory, NOBODY)) {
			assertThatIOException().isThrownBy(() -> WorkingDirectoryGrant.grant(this.directory, 4242))
				.withMessageContaining("is given to the group 65534 for another execution");
			assertThat(state(this.directory)).isEqualTo("65534 rwxrwx---");
		}
		assertThat(state(this.directory)).isEqualTo("0 rwx------");
	}

	@Test
	void aPathThroughASymbolicLinkIsRefusedAndNothingChanges() throws IOException {
		Path link = Files.createSymbolicLink(this.temp.resolve("link"), this.directory);
		assertThatIOException().isThrownBy(() -> WorkingDirectoryGrant.grant(link, NOBODY))
			.withMessageContaining("without following symbolic links");
		assertThat(state(this.directory)).isEqualTo("0 rwx------");
	}

	@Test
	void theFirstAncestorTheCommandUserCannotPassIsNamed() throws IOException {
		Path inner = Files.createDirectories(this.directory.resolve("a/b"));
		assertThat(WorkingDirectoryGrant.unpassableAncestor(inner, NOBODY)).isEqualTo(this.directory);
		Files.setPosixFilePermissions(this.directory, PosixFilePermissions.fromString("rwx-----x"));
		assertThat(WorkingDirectoryGrant.unpassableAncestor(inner, NOBODY)).isNull();
	}

	private static String state(Path directory) throws IOException {
		return Files.getAttribute(directory, "unix:gid", LinkOption.NOFOLLOW_LINKS) + " "
				+ PosixFilePermissions.toString(Files.getPosixFilePermissions(directory, LinkOption.NOFOLLOW_LINKS));
	}

}
