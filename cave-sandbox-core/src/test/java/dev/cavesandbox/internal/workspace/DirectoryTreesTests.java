package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Removing a tree that an untrusted command wrote: links are removed, never followed, and
 * permissions the command took away are restored first.
 */
@EnabledOnOs(OS.LINUX)
class DirectoryTreesTests {

	@TempDir
	Path temp;

	@Test
	void linksAreRemovedNotFollowed() throws IOException {
		Path outside = Files.createDirectory(this.temp.resolve("outside"));
		Files.writeString(outside.resolve("keep.txt"), "kept");
		Path tree = Files.createDirectory(this.temp.resolve("tree"));
		Files.createSymbolicLink(tree.resolve("link-to-dir"), outside);
		Files.createSymbolicLink(tree.resolve("link-to-file"), outside.resolve("keep.txt"));
		DirectoryTrees.delete(tree);
		assertThat(tree).doesNotExist();
		assertThat(outside.resolve("keep.txt")).hasContent("kept");
	}

	@Test
	void directoriesMadeUnreadableAndUnwritableAreRemoved() throws IOException {
		Path tree = Files.createDirectory(this.temp.resolve("tree"));
		Path locked = Files.createDirectories(tree.resolve("a/b"));
		Files.writeString(locked.resolve("file"), "x");
		Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
		Files.setPosixFilePermissions(tree.resolve("a"), PosixFilePermissions.fromString("r-x------"));
		DirectoryTrees.delete(tree);
		assertThat(tree).doesNotExist();
	}

	@Test
	void treeDeeperThanPathMaxIsRemoved() throws Exception {
		Path tree = Files.createDirectory(this.temp.resolve("tree"));
		// 30 levels of 200 characters: over PATH_MAX (4096), made relative to each level.
		Process process = new ProcessBuilder("perl", "-e",
				"chdir $ARGV[0] or die; for (1..30) { mkdir 'd' x 200 or die; chdir 'd' x 200 or die } "
						+ "open F, '>deep' or die",
				tree.toString())
			.inheritIO()
			.start();
		assertThat(process.waitFor()).isZero();
		DirectoryTrees.delete(tree);
		assertThat(tree).doesNotExist();
	}

	@Test
	void contentOfAnyDepthIsRemovedThroughTheOpenDirectoryLeavingNoDescriptorOpen() throws Exception {
		Path tree = Files.createDirectory(this.temp.resolve("tree"));
		// 20000 nested directories, one a file: deeper than a recursion's stack.
		Process process = new ProcessBuilder("perl", "-e",
				"chdir $ARGV[0] or die; for (1..20000) { mkdir 'd' or die; chdir 'd' or die } open F, '>deep' or die",
				tree.toString())
			.inheritIO()
			.start();
		assertThat(process.waitFor()).isZero();
		Files.writeString(tree.resolve("file"), "x");
		long before = descriptors();
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(tree);
				SecureDirectoryStream<Path> directory = ((SecureDirectoryStream<Path>) parent)
					.newDirectoryStream(Path.of("."), LinkOption.NOFOLLOW_LINKS)) {
			DirectoryTrees.deleteContent(directory);
		}
		assertThat(tree).isEmptyDirectory();
		assertThat(descriptors()).isLessThanOrEqualTo(before);
	}

	private static long descriptors() throws IOException {
		try (Stream<Path> entries = Files.list(Path.of("/proc/self/fd"))) {
			return entries.count();
		}
	}

}
