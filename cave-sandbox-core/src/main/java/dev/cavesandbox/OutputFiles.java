package dev.cavesandbox;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The files an execution's request asked back
 * ({@link ExecutionRequest.Builder#outputFile},
 * {@link ExecutionRequest.Builder#outputFiles}), read from its private working directory
 * after the process tree had ended and before the directory was removed. Immutable.
 * <p>
 * Only regular files are read, each whole, relative to the open working directory and
 * never through a symbolic link ({@code O_NOFOLLOW} at every name): a link the command
 * left, to {@code /etc/shadow} or to another execution's directory, is not followed, and
 * a FIFO, socket or device is not opened; they are named in {@link #skipped()}. The
 * request's cap ({@link ExecutionRequest.Builder#maxOutputFileBytes}, by default
 * {@link SandboxSettings#maxOutputFileBytes()}) bounds the bytes of all files together:
 * the files are taken in order (the paths as given, then each glob's matches sorted by
 * path), each one that fits whole in what is left of the cap is returned, each one that
 * does not is left out, not cut short, and named in {@link #omitted()}.
 * <p>
 * With an output directory ({@link ExecutionRequest.Builder#outputDirectory}) the files
 * are not returned but written into it, each copied as it is read, and named in
 * {@link #written()}; {@link #files()} is empty. A file whose name the directory already
 * holds (a file, a directory or a symbolic link, which is not followed) is not written
 * and named in {@link #unwritten()}, as is one whose write failed.
 *
 * @param files the files returned, in order
 * @param missing the paths given ({@link ExecutionRequest.Builder#outputFile}) that named
 * nothing (a glob that matches nothing adds nothing here)
 * @param skipped the paths given or matched that are not regular files: symbolic links,
 * FIFOs, sockets, devices, and directories given as a path (a directory a glob matches is
 * left out silently), or a path through a link
 * @param omitted the regular files left out because they did not fit in the cap
 * @param truncated whether files were left out for the cap ({@link #omitted()} not
 * empty), or a glob's walk stopped at its bound of entries before it had seen every one
 * @param written the files written into the output directory, in order: each one's path
 * there ({@code outputDirectory.resolve(path)}); empty without an output directory
 * @param unwritten the paths (relative to the working directory) of regular files that
 * were read but not written into the output directory: it already held that name, or a
 * name on its path that is not a directory (nothing there is followed or replaced), or
 * the write failed (an I/O error, logged at WARN; what was written of it is removed)
 */
public record OutputFiles(List<OutputFile> files, List<String> missing, List<String> skipped, List<String> omitted,
		boolean truncated, List<Path> written, List<String> unwritten) {

	/** No output files: what a request that asks for none gets. */
	public static final OutputFiles NONE = new OutputFiles(List.of(), List.of(), List.of(), List.of(), false);

	public OutputFiles {
		files = List.copyOf(files);
		missing = List.copyOf(missing);
		skipped = List.copyOf(skipped);
		omitted = List.copyOf(omitted);
		written = List.copyOf(written);
		unwritten = List.copyOf(unwritten);
	}

	/**
	 * Output files returned in the result, none written into a directory.
	 * @param files the files returned, in order
	 * @param missing the paths given that named nothing
	 * @param skipped the paths given or matched that are not regular files
	 * @param omitted the regular files left out for the cap
	 * @param truncated whether files were left out for the cap or a walk stopped
	 */
	public OutputFiles(List<OutputFile> files, List<String> missing, List<String> skipped, List<String> omitted,
			boolean truncated) {
		this(files, missing, skipped, omitted, truncated, List.of(), List.of());
	}

	/**
	 * Return the file of the given path.
	 * @param path the path relative to the working directory, as
	 * {@link OutputFile#path()}
	 * @return the file, or empty where it was not returned (missing, skipped, omitted or
	 * not asked for)
	 */
	public Optional<OutputFile> file(String path) {
		return this.files.stream().filter((file) -> file.path().equals(path)).findFirst();
	}

	/**
	 * Return the bytes of the file of the given path.
	 * @param path the path relative to the working directory, as
	 * {@link OutputFile#path()}
	 * @return a copy of its bytes, or empty where it was not returned
	 */
	public Optional<byte[]> content(String path) {
		return file(path).map(OutputFile::content);
	}

	/**
	 * Return the size of all files returned.
	 * @return the sum of their sizes in bytes
	 */
	public long totalBytes() {
		return this.files.stream().mapToLong(OutputFile::size).sum();
	}

	@Override
	public String toString() {
		return "OutputFiles[" + this.files.size() + " files, " + totalBytes() + " bytes"
				+ (this.written.isEmpty() ? "" : ", written " + this.written)
				+ (this.unwritten.isEmpty() ? "" : ", unwritten " + this.unwritten)
				+ (this.missing.isEmpty() ? "" : ", missing " + this.missing)
				+ (this.skipped.isEmpty() ? "" : ", skipped " + this.skipped)
				+ (this.omitted.isEmpty() ? "" : ", omitted " + this.omitted) + (this.truncated ? ", truncated" : "")
				+ "]";
	}

}
