package dev.cavesandbox;

import java.nio.file.FileSystems;
import java.util.regex.PatternSyntaxException;

import org.jspecify.annotations.Nullable;

/**
 * The rules of a request's output files ({@link ExecutionRequest.Builder#outputFile} and
 * {@link ExecutionRequest.Builder#outputFiles}): a path or a glob relative to the working
 * directory, with the rules of {@link InputFilePaths#requireRelative} (not absolute, no
 * empty, {@code .} or {@code ..} name, no NUL, valid Unicode), and a glob of valid
 * {@link java.nio.file.FileSystem#getPathMatcher glob syntax}. A path or glob that breaks
 * one fails with {@link InvalidExecutionRequestException}.
 */
final class OutputFilePaths {

	private OutputFilePaths() {
	}

	/**
	 * Check the path of an output file.
	 * @param relativePath the path
	 * @return the path
	 * @throws InvalidExecutionRequestException if it breaks a rule
	 */
	static String requirePath(@Nullable String relativePath) {
		return InputFilePaths.requireRelative("output file path", relativePath);
	}

	/**
	 * Check a glob of output files.
	 * @param glob the glob
	 * @return the glob
	 * @throws InvalidExecutionRequestException if it breaks a rule
	 */
	static String requireGlob(@Nullable String glob) {
		String checked = InputFilePaths.requireRelative("output file glob", glob);
		try {
			FileSystems.getDefault().getPathMatcher("glob:" + checked);
		}
		catch (PatternSyntaxException ex) {
			throw new InvalidExecutionRequestException("output file glob " + checked + " is not a valid glob ("
					+ ex.getDescription() + " at index " + ex.getIndex() + "); write it as FileSystem.getPathMatcher "
					+ "reads globs, such as *.pdf or out/**.png");
		}
		return checked;
	}

}
