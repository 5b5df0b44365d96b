package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * This JVM's lock on a work directory: shared by its executors there, and let go by the
 * last one only when none of its directories is left.
 */
@EnabledOnOs(OS.LINUX)
class OwnerLockTests {

	@TempDir
	Path workDirectory;

	@Test
	void lastUserLetsTheLockGoOnlyWhenNoDirectoryIsLeft() throws IOException {
		PrivateDirectories first = new PrivateDirectories(this.workDirectory, 1, false);
		PrivateDirectories second = new PrivateDirectories(this.workDirectory, 1, false);
		Path directory = second.create();
		first.close();
		second.close();
		// A directory still in use when its executor closed stays provable: the lock
		// stays.
		assertThat(lockFiles()).hasSize(1);
		DirectoryTrees.delete(directory);
		PrivateDirectories third = new PrivateDirectories(this.workDirectory, 1, false);
		third.close();
		assertThat(PrivateHome.of(this.workDirectory)).isEmptyDirectory();
	}

	private List<Path> lockFiles() throws IOException {
		try (Stream<Path> files = Files.list(PrivateHome.of(this.workDirectory))) {
			return files.filter((file) -> file.getFileName().toString().startsWith("cave-sandbox-lock-")).toList();
		}
	}

}
