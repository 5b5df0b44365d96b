package dev.cavesandbox.internal.workspace;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A path that the kernel resolves through a descriptor of an open directory,
 * {@code /proc/self/fd/N} (proc(5)), for what Java 17 cannot do relative to a
 * {@link SecureDirectoryStream}: it has no {@code mkdirat}, no {@code fchmod}, no
 * {@code bind} relative to a directory. A name below the path ({@code /proc/self/fd/N/x})
 * is created in, or looked up in, the directory held, whatever its path names meanwhile:
 * no rename or link of another user leads it elsewhere.
 * <p>
 * Java does not give a descriptor's number. This opens a descriptor of its own of the
 * directory (relative to the stream, {@code "."}, {@code O_NOFOLLOW}), gives it a file
 * offset drawn at random ({@code lseek}, a tag no other descriptor of the directory has)
 * and finds it in {@code /proc/self/fd} by the directory's file key and, in
 * {@code /proc/self/fdinfo/N}, that offset. The file key alone does not tell descriptors
 * of one directory apart: another thread's (two executions writing into one output
 * directory) could be found, closed by that thread, and its number reused for another
 * directory before the path is used. The descriptor found is this one's own, open until
 * {@link #close()}, so its number names the directory for as long as the path is used.
 * Linux only.
 */
public final class DescriptorPath implements Closeable {

	private static final Path DESCRIPTORS = Path.of("/proc/self/fd");

	private static final Path DESCRIPTOR_INFO = Path.of("/proc/self/fdinfo");

	/** Tags are below 2^31: ext4's offsets of a directory with 32-bit hashes are. */
	private static final int TAG_BOUND = Integer.MAX_VALUE;

	private static final int ATTEMPTS = 3;

	private static final SecureRandom RANDOM = new SecureRandom();

	private final SeekableByteChannel descriptor;

	private final Path path;

	private DescriptorPath(SeekableByteChannel descriptor, Path path) {
		this.descriptor = descriptor;
		this.path = path;
	}

	/**
	 * Open a descriptor of the directory of its own and find its path.
	 * @param directory the open directory; it may be closed while this is open
	 * @return the path, open until closed
	 * @throws IOException if the directory cannot be opened again (it must be readable),
	 * its descriptor cannot be tagged or is not found (no {@code /proc})
	 */
	public static DescriptorPath open(SecureDirectoryStream<Path> directory) throws IOException {
		Object key = Objects.requireNonNull(
				directory.getFileAttributeView(BasicFileAttributeView.class).readAttributes().fileKey(),
				"a directory's file key");
		SeekableByteChannel descriptor = directory.newByteChannel(Path.of("."),
				Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
		try {
			for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
				long tag = 1 + RANDOM.nextInt(TAG_BOUND - 1);
				descriptor.position(tag);
				List<Path> found = find(key, tag);
				if (found.size() == 1) {
					return new DescriptorPath(descriptor, found.get(0));
				}
			}
			throw new IOException("no single descriptor of the directory " + key + " with the offset given to it in "
					+ DESCRIPTORS + " (is /proc mounted?)");
		}
		catch (IOException | RuntimeException ex) {
			descriptor.close();
			throw ex;
		}
	}

	/** The entries of /proc/self/fd of the directory whose offset is the tag. */
	private static List<Path> find(Object key, long tag) throws IOException {
		List<Path> found = new ArrayList<>();
		try (DirectoryStream<Path> descriptors = Files.newDirectoryStream(DESCRIPTORS)) {
			for (Path descriptor : descriptors) {
				try {
					if (key.equals(Files.readAttributes(descriptor, "fileKey").get("fileKey"))
							&& Files.readAllLines(DESCRIPTOR_INFO.resolve(descriptor.getFileName()))
								.contains("pos:\t" + tag)) {
						found.add(descriptor);
					}
				}
				catch (NoSuchFileException ex) {
					// closed meanwhile by another thread
				}
			}
		}
		return found;
	}

	/**
	 * Return the path through the descriptor.
	 * @return {@code /proc/self/fd/N}, valid until {@link #close()}
	 */
	public Path path() {
		return this.path;
	}

	/**
	 * Close the descriptor; the path then names nothing, or another file.
	 * @throws IOException if closing failed
	 */
	@Override
	public void close() throws IOException {
		this.descriptor.close();
	}

	@Override
	public String toString() {
		return "DescriptorPath[" + this.path + "]";
	}

}
