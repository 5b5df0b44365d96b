package dev.cavesandbox;

import java.util.Arrays;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One file that an execution's command left in its private working directory and that its
 * request asked back ({@link ExecutionRequest.Builder#outputFile},
 * {@link ExecutionRequest.Builder#outputFiles}): a regular file, read whole after the
 * process tree had ended and before the directory was removed.
 *
 * @param path the file's path relative to the working directory, with {@code /} between
 * its names, for example {@code out/report.pdf}
 * @param content the file's bytes (the accessor returns a copy)
 */
public record OutputFile(String path, byte[] content) {

	public OutputFile {
		Objects.requireNonNull(path, "path must not be null");
		content = content.clone();
	}

	/**
	 * Return a copy of the file's bytes.
	 * @return the bytes
	 */
	@Override
	public byte[] content() {
		return this.content.clone();
	}

	/**
	 * Return the file's size.
	 * @return the size in bytes
	 */
	public int size() {
		return this.content.length;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof OutputFile file && this.path.equals(file.path)
				&& Arrays.equals(this.content, file.content);
	}

	@Override
	public int hashCode() {
		return 31 * this.path.hashCode() + Arrays.hashCode(this.content);
	}

	@Override
	public String toString() {
		return "OutputFile[" + this.path + ", " + this.content.length + " bytes]";
	}

}
