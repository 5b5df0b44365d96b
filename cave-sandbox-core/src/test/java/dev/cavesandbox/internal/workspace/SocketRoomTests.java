package dev.cavesandbox.internal.workspace;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The room a private working directory leaves for a program's own unix socket beneath it,
 * and the startup warning where a long work directory leaves too little.
 */
@EnabledOnOs(OS.LINUX)
class SocketRoomTests {

	@TempDir
	Path workDirectory;

	/**
	 * The default work directory, {@code /tmp}: a private directory's path has at most 32
	 * characters for any uid below 10000 (29 for root), which leaves at least 74 bytes.
	 */
	@Test
	void privateDirectoryInTmpHasAShortPath() throws Exception {
		PrivateDirectories directories = new PrivateDirectories(Path.of("/tmp"), 1, false);
		try {
			Path directory = directories.create();
			int uid = (Integer) Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
			assertThat(directory.getParent()).isEqualTo(Path.of("/tmp/cave-sandbox-" + uid));
			assertThat(directory.getFileName().toString()).matches("[0-9a-z]{9}");
			assertThat(directory.toString()).hasSize(("/tmp/cave-sandbox-" + uid).length() + 1 + 9);
			assertThat(SocketRoom.directoryBytes(directory.getParent())).isEqualTo(directory.toString().length());
			assertThat(SocketRoom.bytesLeft(directory.getParent())).isEqualTo(107 - directory.toString().length() - 1);
			if (uid < 10000) {
				assertThat(directory.toString().length()).isLessThanOrEqualTo(32);
			}
			if (uid == 0) {
				assertThat(directory.toString()).hasSize(29);
				assertThat(SocketRoom.bytesLeft(directory.getParent())).isEqualTo(77);
			}
			assertThat(SocketRoom.warning(directory.getParent())).isNull();
			directories.release(directory);
		}
		finally {
			directories.close();
		}
	}

	@Test
	void workDirectoryThatLeavesFewerThan60BytesIsWarnedAboutNamingTheFix() {
		// /tmp/cave-sandbox-0/<9> leaves 77: 17 more bytes of work directory leave 60
		Path justEnough = Path.of("/tmp/" + "a".repeat(16) + "/cave-sandbox-0");
		assertThat(SocketRoom.bytesLeft(justEnough)).isEqualTo(60);
		assertThat(SocketRoom.warning(justEnough)).isNull();
		Path tooLong = Path.of("/tmp/" + "a".repeat(17) + "/cave-sandbox-0");
		assertThat(SocketRoom.bytesLeft(tooLong)).isEqualTo(59);
		assertThat(SocketRoom.warning(tooLong)).contains(tooLong.toString(), "paths of 47 bytes", "leaves 59 bytes",
				"cave.sandbox.work-directory", "at most 21 bytes");
	}

	@Test
	void workDirectoryTooLongForAnySocketIsWarnedAboutWithNothingLeft() {
		Path home = Path.of("/" + "b".repeat(120) + "/cave-sandbox-1000");
		assertThat(SocketRoom.bytesLeft(home)).isNegative();
		assertThat(SocketRoom.warning(home)).contains("leaves 0 bytes", "at most 18 bytes");
	}

	/**
	 * The executor still works with a long work directory: the warning is a warning, and
	 * a program's socket that fits still binds.
	 */
	@Test
	void longWorkDirectoryStillGivesPrivateDirectories() throws Exception {
		Path deep = Files.createDirectories(this.workDirectory.resolve("c".repeat(60)));
		PrivateDirectories directories = new PrivateDirectories(deep, 1, false);
		try {
			Path directory = directories.create();
			assertThat(directory).isEmptyDirectory();
			assertThat(SocketRoom.warning(directory.getParent())).isNotNull();
			directories.release(directory);
		}
		finally {
			directories.close();
		}
	}

}
