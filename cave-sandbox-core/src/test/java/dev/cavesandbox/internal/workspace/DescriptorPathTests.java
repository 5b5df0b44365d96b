package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A path through a descriptor of its own of an open directory: it leads to the directory
 * held whatever its path names, and it is its own descriptor among others of the same
 * directory.
 */
@EnabledOnOs(OS.LINUX)
class DescriptorPathTests {

	@TempDir
	Path temp;

	@Test
	void aDirectoryIsCreatedInTheDirectoryHeldAfterItsPathWasSwappedForALink() throws IOException {
		Path held = Files.createDirectory(this.temp.resolve("held"));
		Path elsewhere = Files.createDirectory(this.temp.resolve("elsewhere"));
		try (SecureDirectoryStream<Path> directory = open(held)) {
			Path moved = Files.move(held, this.temp.resolve("moved"));
			Files.createSymbolicLink(held, elsewhere);
			try (DescriptorPath through = DescriptorPath.open(directory)) {
				Files.createDirectory(through.path().resolve("new"));
			}
			assertThat(moved.resolve("new")).isDirectory();
			assertThat(elsewhere).isEmptyDirectory();
		}
	}

	@Test
	void itsDescriptorIsItsOwnAmongOthersOfTheSameDirectory() throws IOException {
		Path held = Files.createDirectory(this.temp.resolve("held"));
		Object key = Files.readAttributes(held, "fileKey").get("fileKey");
		List<SecureDirectoryStream<Path>> others = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			others.add(open(held));
		}
		DescriptorPath through;
		try (SecureDirectoryStream<Path> directory = open(held)) {
			through = DescriptorPath.open(directory);
		}
		try (through) {
			for (SecureDirectoryStream<Path> other : others) {
				other.close();
			}
			// Every other descriptor of the directory is closed: the path still leads
			// to it.
			assertThat(Files.readAttributes(through.path(), "fileKey").get("fileKey")).isEqualTo(key);
			assertThat(through.path().getParent()).isEqualTo(Path.of("/proc/self/fd"));
		}
	}

	@Test
	void closingItClosesItsDescriptor() throws IOException {
		Path held = Files.createDirectory(this.temp.resolve("held"));
		Path path;
		try (SecureDirectoryStream<Path> directory = open(held);
				DescriptorPath through = DescriptorPath.open(directory)) {
			path = through.path();
			assertThat(Files.isSameFile(path, held)).isTrue();
		}
		assertThat(Files.exists(path, LinkOption.NOFOLLOW_LINKS) && Files.isSameFile(path, held)).isFalse();
	}

	private static SecureDirectoryStream<Path> open(Path directory) throws IOException {
		DirectoryStream<Path> stream = Files.newDirectoryStream(directory);
		assertThat(stream).isInstanceOf(SecureDirectoryStream.class);
		return (SecureDirectoryStream<Path>) stream;
	}

}
