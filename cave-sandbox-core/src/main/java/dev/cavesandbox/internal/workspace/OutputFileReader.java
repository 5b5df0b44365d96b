package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.OutputFile;
import dev.cavesandbox.OutputFiles;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a request's output files ({@link ExecutionRequest#outputFiles()},
 * {@link ExecutionRequest#outputFileGlobs()}) from its private working directory once the
 * command's process tree has ended, before the directory is released. Nothing is followed
 * and nothing but a regular file is opened: every name is looked at relative to its open
 * directory ({@link SecureDirectoryStream}: {@code fstatat} with
 * {@code AT_SYMLINK_NOFOLLOW}), every directory and file opened relative to it with
 * {@code O_NOFOLLOW} ({@code openat}), so a symbolic link the command left (to
 * {@code /etc/shadow}, to another execution's directory) is never read through, and a
 * FIFO, socket or device is never opened (a FIFO's open would block until a writer came).
 * Since the tree has ended, nothing changes the directory between the look and the open.
 * <p>
 * The files are taken in order, the paths as given, then the globs' matches as a walk
 * finds them (each directory's names sorted, a directory's entries where its name sorts),
 * each path once; each one that fits whole in what is left of the cap is read, each other
 * one is omitted (not opened). A glob's walk reads at most {@value #MAX_ENTRIES} names,
 * over all directories, and, without {@code **}, goes only as deep as the glob has names.
 * A directory is read only up to what is left of that bound; where it holds more, the
 * walk is cut there (the result is truncated) and its names are sorted among those read,
 * which are the first the file system lists, not the first in sorted order. With an
 * {@link OutputDirectory} each file is copied into it as it is read instead of being
 * held.
 */
public final class OutputFileReader {

	/**
	 * The most names that the walk of the globs reads, over all directories, and so the
	 * most entries it visits.
	 */
	public static final int MAX_ENTRIES = 10_000;

	/** The deepest directory the walk of a glob with {@code **} enters. */
	private static final int MAX_DEPTH = 64;

	/** The largest file that one array holds. */
	private static final long MAX_FILE_BYTES = Integer.MAX_VALUE - 8;

	private static final Logger logger = LoggerFactory.getLogger(OutputFileReader.class);

	private final List<OutputFile> files = new ArrayList<>();

	private final Set<String> taken = new HashSet<>();

	private final List<String> missing = new ArrayList<>();

	private final List<String> skipped = new ArrayList<>();

	private final List<String> omitted = new ArrayList<>();

	private final List<Path> written = new ArrayList<>();

	private final List<String> unwritten = new ArrayList<>();

	private final @Nullable OutputDirectory destination;

	private boolean truncated;

	private long left;

	/** The names the walk has read, over all directories. */
	private int read;

	private OutputFileReader(long maxBytes, @Nullable OutputDirectory destination) {
		this.left = maxBytes;
		this.destination = destination;
	}

	/**
	 * Read the output files of a request.
	 * @param directory the private working directory, whose command's tree has ended
	 * @param paths the paths, as {@link ExecutionRequest#outputFiles()} checked them
	 * @param globs the globs, as {@link ExecutionRequest#outputFileGlobs()} checked them
	 * @param maxBytes the cap of all files together, in bytes
	 * @param destination the directory to write them into, or {@code null} to return
	 * their bytes
	 * @return the files, {@link OutputFiles#NONE} without paths and globs
	 */
	public static OutputFiles read(Path directory, List<String> paths, List<String> globs, long maxBytes,
			@Nullable OutputDirectory destination) {
		if (paths.isEmpty() && globs.isEmpty()) {
			return OutputFiles.NONE;
		}
		OutputFileReader reader = new OutputFileReader(maxBytes, destination);
		try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory)) {
			if (!(stream instanceof SecureDirectoryStream<Path> root)) {
				throw new IOException("no SecureDirectoryStream on this platform");
			}
			for (String path : paths) {
				reader.readPath(root, path);
			}
			if (!globs.isEmpty()) {
				reader.walk(root, "", 1, new Globs(directory.getFileSystem(), globs));
			}
		}
		catch (IOException ex) {
			logger.warn("Could not read the output files of {}: {}", directory, ex.toString());
			paths.stream().filter((path) -> !reader.taken.contains(path)).forEach(reader.skipped::add);
		}
		return new OutputFiles(reader.files, reader.missing, reader.skipped, reader.omitted, reader.truncated,
				reader.written, reader.unwritten);
	}

	/** Look a given path up name by name, each directory opened without a link. */
	private void readPath(SecureDirectoryStream<Path> root, String path) throws IOException {
		String[] names = path.split("/");
		List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
		try {
			SecureDirectoryStream<Path> directory = root;
			for (int i = 0; i < names.length - 1; i++) {
				@Nullable BasicFileAttributes attributes = attributes(directory, names[i]);
				if (attributes == null || !(attributes.isDirectory() || attributes.isSymbolicLink())) {
					this.missing.add(path);
					return;
				}
				if (attributes.isSymbolicLink()) {
					this.skipped.add(path);
					return;
				}
				directory = directory.newDirectoryStream(Path.of(names[i]), LinkOption.NOFOLLOW_LINKS);
				opened.add(directory);
			}
			@Nullable BasicFileAttributes attributes = attributes(directory, names[names.length - 1]);
			if (attributes == null) {
				this.missing.add(path);
			}
			else if (!attributes.isRegularFile()) {
				this.skipped.add(path);
			}
			else {
				take(directory, names[names.length - 1], path, attributes.size());
			}
		}
		catch (IOException ex) {
			logger.debug("Output file {} not read: {}", path, ex.toString());
			this.skipped.add(path);
		}
		finally {
			for (SecureDirectoryStream<Path> directory : opened) {
				directory.close();
			}
		}
	}

	/**
	 * Walk a directory in the order of its names, taking what a glob matches. At most
	 * what is left of {@link #MAX_ENTRIES} names are read; where the directory holds
	 * more, the rest is not read and the walk is cut, so the names held (read, sorted,
	 * visited) never exceed the bound, however many the command made.
	 */
	private void walk(SecureDirectoryStream<Path> directory, String prefix, int depth, Globs globs) throws IOException {
		List<String> names = new ArrayList<>();
		Iterator<Path> entries = directory.iterator();
		while (entries.hasNext()) {
			if (this.read == MAX_ENTRIES) {
				this.truncated = true;
				break;
			}
			names.add(entries.next().getFileName().toString());
			this.read++;
		}
		names.sort(null);
		for (String name : names) {
			String path = prefix + name;
			@Nullable BasicFileAttributes attributes = attributes(directory, name);
			if (attributes == null) {
				continue;
			}
			if (globs.match(path)) {
				if (attributes.isRegularFile()) {
					if (!this.taken.contains(path)) {
						take(directory, name, path, attributes.size());
					}
				}
				else if (!attributes.isDirectory() && !this.skipped.contains(path)) {
					this.skipped.add(path);
				}
			}
			if (attributes.isDirectory() && depth < globs.depth()) {
				try (SecureDirectoryStream<Path> child = directory.newDirectoryStream(Path.of(name),
						LinkOption.NOFOLLOW_LINKS)) {
					walk(child, path + "/", depth + 1, globs);
				}
				catch (IOException ex) {
					logger.debug("Output directory {} not walked: {}", path, ex.toString());
				}
			}
		}
	}

	/**
	 * Read a regular file whole if it fits in what is left of the cap, into the result or
	 * into the output directory.
	 */
	private void take(SecureDirectoryStream<Path> directory, String name, String path, long size) {
		if (size > this.left || (this.destination == null && size > MAX_FILE_BYTES)) {
			this.omitted.add(path);
			this.truncated = true;
			return;
		}
		if (this.destination != null) {
			write(directory, name, path, size, this.destination);
			return;
		}
		byte[] content = new byte[(int) size];
		try (SeekableByteChannel in = directory.newByteChannel(Path.of(name),
				Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
			ByteBuffer buffer = ByteBuffer.wrap(content);
			while (buffer.hasRemaining() && in.read(buffer) >= 0) {
				// read until full or the end
			}
			if (in.read(ByteBuffer.allocate(1)) > 0) {
				// It grew since its size was read: only a process still running could.
				this.omitted.add(path);
				this.truncated = true;
				return;
			}
			content = (buffer.position() < content.length) ? Arrays.copyOf(content, buffer.position()) : content;
		}
		catch (IOException ex) {
			logger.debug("Output file {} not read: {}", path, ex.toString());
			this.skipped.add(path);
			return;
		}
		this.files.add(new OutputFile(path, content));
		this.taken.add(path);
		this.left -= content.length;
	}

	/** Copy a regular file into the output directory, at most its size. */
	private void write(SecureDirectoryStream<Path> directory, String name, String path, long size,
			OutputDirectory destination) {
		OutputDirectory.Outcome outcome;
		try (SeekableByteChannel in = directory.newByteChannel(Path.of(name),
				Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
			outcome = destination.write(path, in, size);
		}
		catch (IOException ex) {
			logger.debug("Output file {} not read: {}", path, ex.toString());
			this.skipped.add(path);
			return;
		}
		switch (outcome) {
			case WRITTEN -> {
				this.written.add(destination.path().resolve(path));
				this.left -= size;
			}
			case GREW -> {
				this.omitted.add(path);
				this.truncated = true;
			}
			case REFUSED -> this.unwritten.add(path);
		}
		this.taken.add(path);
	}

	/**
	 * The attributes of a name itself (a link is not followed), or null if it is gone.
	 */
	private static @Nullable BasicFileAttributes attributes(SecureDirectoryStream<Path> directory, String name)
			throws IOException {
		try {
			return directory
				.getFileAttributeView(Path.of(name), BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.readAttributes();
		}
		catch (NoSuchFileException ex) {
			return null;
		}
	}

	/** The globs of a request, and how deep their walk goes. */
	private static final class Globs {

		private final List<PathMatcher> matchers = new ArrayList<>();

		private final FileSystem fileSystem;

		private int depth;

		Globs(FileSystem fileSystem, List<String> globs) {
			this.fileSystem = fileSystem;
			for (String glob : globs) {
				this.matchers.add(fileSystem.getPathMatcher("glob:" + glob));
				this.depth = Math.max(this.depth, glob.contains("**") ? MAX_DEPTH : glob.split("/").length);
			}
		}

		boolean match(String path) {
			Path relative = this.fileSystem.getPath(path);
			return this.matchers.stream().anyMatch((matcher) -> matcher.matches(relative));
		}

		int depth() {
			return this.depth;
		}

	}

}
