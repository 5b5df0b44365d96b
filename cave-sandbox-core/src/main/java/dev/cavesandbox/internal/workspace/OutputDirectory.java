package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.SandboxLaunchException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The caller's directory that a request's output files are written into
 * ({@link ExecutionRequest#outputDirectory()}), opened once before the command runs and
 * held open until they are written. Nothing in it is followed: the directory itself is
 * opened relative to its parent without following a link ({@code O_NOFOLLOW}), each file
 * is created relative to it, new ({@code O_CREAT|O_EXCL|O_NOFOLLOW}, which fails on any
 * name already there, a symbolic link too, and creates nothing through it), owner-only
 * ({@code 0600}), and a name already taken is left as it is and reported, never replaced.
 * <p>
 * A file below a directory ({@code out/a.png}) is written below the same directory in the
 * destination: an existing one is opened relative without following a link (a link or
 * another file at its name refuses the file), a missing one is created ({@code 0700}).
 * Java has no {@code mkdirat}: the directory is created through the parent's descriptor
 * ({@link DescriptorPath}, {@code /proc/self/fd/N/name}), never by its path, so a link
 * swapped onto the path does not lead it elsewhere, and then opened relative to the
 * parent.
 */
public final class OutputDirectory implements AutoCloseable {

	/** What became of one file. */
	public enum Outcome {

		/** Written whole. */
		WRITTEN,

		/**
		 * Not written: its name (or a directory on its path) was taken, or writing it
		 * failed.
		 */
		REFUSED,

		/**
		 * Not written: it held more than its size said (only a running process could).
		 */
		GREW

	}

	private static final FileAttribute<Set<PosixFilePermission>> OWNER_FILE = PosixFilePermissions
		.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

	private static final FileAttribute<Set<PosixFilePermission>> OWNER_DIRECTORY = PosixFilePermissions
		.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

	private static final int BUFFER_BYTES = 64 * 1024;

	private static final Logger logger = LoggerFactory.getLogger(OutputDirectory.class);

	private final Path path;

	private final SecureDirectoryStream<Path> directory;

	private OutputDirectory(Path path, SecureDirectoryStream<Path> directory) {
		this.path = path;
		this.directory = directory;
	}

	/**
	 * Open the caller's directory, without following a link at its name.
	 * @param path the absolute path, as {@link ExecutionRequest#outputDirectory()}
	 * checked it
	 * @return the open directory, which the caller closes
	 * @throws InvalidExecutionRequestException ({@code cave_sandbox_invalid_request}) if
	 * it is missing, a symbolic link, not a directory, or not writable by the JVM's user
	 * @throws SandboxLaunchException if it could not be opened for another reason
	 */
	public static OutputDirectory open(Path path) {
		Path parent = Objects.requireNonNull(path.getParent(), "path must have a parent");
		Path name = Objects.requireNonNull(path.getFileName(), "path must have a name");
		try (DirectoryStream<Path> parentStream = Files.newDirectoryStream(parent)) {
			if (!(parentStream instanceof SecureDirectoryStream<Path> secureParent)) {
				throw new InvalidExecutionRequestException("output directory " + path + " cannot be written without "
						+ "following links on this platform (no SecureDirectoryStream); leave it unset and take the "
						+ "files from the result");
			}
			@Nullable BasicFileAttributes attributes = attributes(secureParent, name);
			if (attributes == null) {
				throw unusable(path, "does not exist", "create it first (the sandbox does not create it)");
			}
			if (attributes.isSymbolicLink()) {
				throw unusable(path, "is a symbolic link, which is not followed",
						"give the path of the directory itself");
			}
			if (!attributes.isDirectory()) {
				throw unusable(path, "is not a directory", "give a directory");
			}
			if (!Files.isWritable(path) || !Files.isExecutable(path)) {
				throw unusable(path, "is not writable by the JVM's user (or is on a read-only file system)",
						"give that user write and search permission on it, or use another directory");
			}
			return new OutputDirectory(path, secureParent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS));
		}
		catch (NoSuchFileException ex) {
			throw unusable(path, "does not exist", "create it first (the sandbox does not create it)");
		}
		catch (IOException ex) {
			throw new SandboxLaunchException(
					"could not open the output directory " + path + ", the command did not run: " + ex, ex);
		}
	}

	private static InvalidExecutionRequestException unusable(Path path, String cause, String fix) {
		return new InvalidExecutionRequestException("output directory " + path + " " + cause + "; " + fix
				+ ", or leave the output directory unset to get the files in the result");
	}

	/**
	 * Return the path the directory was given by.
	 * @return the absolute path
	 */
	public Path path() {
		return this.path;
	}

	/**
	 * Write one file, copying at most {@code size} bytes of the source.
	 * @param relativePath the path below the directory, with {@code /} between names
	 * @param source the open source file
	 * @param size the source's size, in bytes, which the cap let through
	 * @return what became of it; a file not written whole is removed again
	 */
	public Outcome write(String relativePath, SeekableByteChannel source, long size) {
		String[] names = relativePath.split("/");
		List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
		try {
			SecureDirectoryStream<Path> parent = this.directory;
			Path parentPath = this.path;
			for (int i = 0; i < names.length - 1; i++) {
				@Nullable SecureDirectoryStream<Path> child = subdirectory(parent, names[i]);
				if (child == null) {
					logger.debug("Output file {} not written: {} is not a directory of {}", relativePath, names[i],
							parentPath);
					return Outcome.REFUSED;
				}
				opened.add(child);
				parent = child;
				parentPath = parentPath.resolve(names[i]);
			}
			return copy(parent, names[names.length - 1], relativePath, source, size);
		}
		catch (IOException ex) {
			logger.warn("Output file {} not written into {}: {}", relativePath, this.path, ex.toString());
			return Outcome.REFUSED;
		}
		finally {
			for (SecureDirectoryStream<Path> stream : opened) {
				closeQuietly(stream);
			}
		}
	}

	/**
	 * Open a subdirectory relative to its parent, creating it if it is missing; null
	 * where its name is taken by anything else.
	 */
	private static @Nullable SecureDirectoryStream<Path> subdirectory(SecureDirectoryStream<Path> parent, String name)
			throws IOException {
		Path relative = Path.of(name);
		@Nullable BasicFileAttributes attributes = attributes(parent, relative);
		if (attributes == null) {
			// No mkdirat: created through the parent's descriptor, never by its path.
			try (DescriptorPath through = DescriptorPath.open(parent)) {
				Files.createDirectory(through.path().resolve(name), OWNER_DIRECTORY);
			}
			catch (FileAlreadyExistsException ex) {
				// Made in between: looked at below, as any other.
			}
			attributes = attributes(parent, relative);
		}
		if (attributes == null || !attributes.isDirectory()) {
			return null;
		}
		return parent.newDirectoryStream(relative, LinkOption.NOFOLLOW_LINKS);
	}

	private static Outcome copy(SecureDirectoryStream<Path> parent, String name, String relativePath,
			SeekableByteChannel source, long size) throws IOException {
		Path file = Path.of(name);
		SeekableByteChannel target;
		try {
			target = parent.newByteChannel(file,
					Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
					OWNER_FILE);
		}
		catch (FileAlreadyExistsException ex) {
			logger.debug("Output file {} not written: its name is taken in the output directory", relativePath);
			return Outcome.REFUSED;
		}
		boolean whole = false;
		try (target) {
			ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(BUFFER_BYTES, Math.max(size, 1)));
			long left = size;
			while (left > 0) {
				buffer.clear().limit((int) Math.min(buffer.capacity(), left));
				int read = source.read(buffer);
				if (read < 0) {
					break;
				}
				buffer.flip();
				while (buffer.hasRemaining()) {
					target.write(buffer);
				}
				left -= read;
			}
			// Read past the size: it grew, which only a process still running could do.
			if (source.read(ByteBuffer.allocate(1)) > 0) {
				return Outcome.GREW;
			}
			whole = true;
			return Outcome.WRITTEN;
		}
		finally {
			if (!whole) {
				removePartial(parent, file, relativePath);
			}
		}
	}

	/** Remove a file this created and did not write whole. */
	private static void removePartial(SecureDirectoryStream<Path> parent, Path file, String relativePath) {
		try {
			parent.deleteFile(file);
		}
		catch (IOException ex) {
			logger.warn("Output file {} was not written whole and could not be removed: {}", relativePath,
					ex.toString());
		}
	}

	/**
	 * The attributes of a name itself (a link is not followed), or null if it is gone.
	 */
	private static @Nullable BasicFileAttributes attributes(SecureDirectoryStream<Path> directory, Path name)
			throws IOException {
		try {
			return directory.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.readAttributes();
		}
		catch (NoSuchFileException ex) {
			return null;
		}
	}

	private static void closeQuietly(SecureDirectoryStream<Path> stream) {
		try {
			stream.close();
		}
		catch (IOException ex) {
			logger.debug("Could not close a directory of the output directory: {}", ex.toString());
		}
	}

	@Override
	public void close() {
		closeQuietly(this.directory);
	}

	@Override
	public String toString() {
		return "OutputDirectory[" + this.path + "]";
	}

}
