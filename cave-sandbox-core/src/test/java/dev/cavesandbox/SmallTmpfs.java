package dev.cavesandbox;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * A small real tmpfs, mounted on a directory of its own, to make a work directory
 * read-only, full, out of inodes or {@code noexec} for real. Mounting needs root: the
 * test is skipped otherwise. Closing unmounts it (lazily if it is busy), so a failed test
 * leaves no mount behind.
 */
public final class SmallTmpfs implements AutoCloseable {

	private final Path mountPoint;

	private final List<Path> filler = new ArrayList<>();

	private SmallTmpfs(Path mountPoint) {
		this.mountPoint = mountPoint;
	}

	/**
	 * Mount a tmpfs on a new directory.
	 * @param parent where the mount point is created
	 * @param options the mount options, for example {@code size=1m,nr_inodes=64}
	 * @return the mounted tmpfs
	 * @throws IOException if the mount point cannot be created
	 */
	public static SmallTmpfs mount(Path parent, String options) throws IOException {
		assumeThat(System.getProperty("user.name")).as("mounting a tmpfs needs root").isEqualTo("root");
		Path mountPoint = Files.createTempDirectory(parent, "tmpfs-").toRealPath();
		run("mount", "-t", "tmpfs", "-o", options + ",mode=0755", "tmpfs", mountPoint.toString());
		return new SmallTmpfs(mountPoint);
	}

	/**
	 * Return where it is mounted.
	 * @return the mount point, a real path
	 */
	public Path path() {
		return this.mountPoint;
	}

	/**
	 * Remount it read-only ({@code true}) or writable again.
	 * @param readOnly whether it becomes read-only
	 */
	public void remount(boolean readOnly) {
		run("mount", "-o", "remount," + (readOnly ? "ro" : "rw"), this.mountPoint.toString());
	}

	/**
	 * Write one file until the file system has no space left.
	 * @throws IOException if the file cannot be created
	 */
	public void fill() throws IOException {
		Path file = this.mountPoint.resolve("filler-" + this.filler.size());
		this.filler.add(file);
		byte[] block = new byte[64 * 1024];
		try (OutputStream out = Files.newOutputStream(file)) {
			while (true) {
				out.write(block);
			}
		}
		catch (IOException ex) {
			assertThat(ex).hasMessageContaining("No space left on device");
		}
		assertThat(Files.getFileStore(this.mountPoint).getUsableSpace()).isZero();
	}

	/**
	 * Create empty files until the file system has no inode left; space is left.
	 * @throws IOException if a file system check fails
	 */
	public void exhaustInodes() throws IOException {
		while (true) {
			Path file = this.mountPoint.resolve("inode-" + this.filler.size());
			try {
				Files.createFile(file);
			}
			catch (IOException ex) {
				assertThat(ex).hasMessageContaining("No space left on device");
				break;
			}
			this.filler.add(file);
		}
		assertThat(Files.getFileStore(this.mountPoint).getUsableSpace()).isPositive();
	}

	/**
	 * Delete what {@link #fill()} and {@link #exhaustInodes()} created.
	 * @throws IOException if a file cannot be deleted
	 */
	public void free() throws IOException {
		for (Path file : this.filler) {
			Files.deleteIfExists(file);
		}
		this.filler.clear();
	}

	/**
	 * Return every entry under the mount point but the filler files, as relative paths.
	 * @return the entries, sorted
	 * @throws IOException if the tree cannot be read
	 */
	public List<String> entries() throws IOException {
		try (Stream<Path> walk = Files.walk(this.mountPoint)) {
			return walk.filter((path) -> !this.filler.contains(path))
				.map((path) -> this.mountPoint.relativize(path).toString())
				.sorted()
				.toList();
		}
	}

	/**
	 * Unmount it; lazily if it is still busy. The mount point stays, empty.
	 */
	@Override
	public void close() {
		if (!run("umount", this.mountPoint.toString())) {
			run("umount", "-l", this.mountPoint.toString());
		}
	}

	private static boolean run(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s finished", List.of(command)).isTrue();
			String output = new String(process.getInputStream().readAllBytes());
			if (process.exitValue() != 0 && command[0].equals("mount")) {
				throw new IllegalStateException(List.of(command) + " failed: " + output);
			}
			return process.exitValue() == 0;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
