package dev.cavesandbox.internal.mechanism;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

/**
 * Loads the {@code sh} scripts of the probe from the resources in {@value #DIRECTORY}
 * (where the build runs {@code shellcheck -s sh} over them). Lines that are only a
 * comment (blanks, then {@code #}) are left out, so that a script's text carries no
 * comment, shellcheck directive or shebang into the command line; no script may therefore
 * hold a here-document or a quoted string with such a line.
 */
public final class ShellScripts {

	/** The absolute resource name of the directory that holds the scripts. */
	static final String DIRECTORY = "/dev/cavesandbox/scripts/";

	private ShellScripts() {
	}

	/**
	 * Return the text of a script, without its comment lines; call once and keep the
	 * result in a constant.
	 * @param name the script's file name in {@value #DIRECTORY}, such as {@code probe.sh}
	 * @return the text, each line ended by a newline
	 * @throws IllegalStateException if there is no such resource
	 */
	public static String load(String name) {
		try (InputStream in = ShellScripts.class.getResourceAsStream(DIRECTORY + name)) {
			if (in == null) {
				throw new IllegalStateException("the shell script " + DIRECTORY + name + " is not on the class path");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
				.filter((line) -> !line.stripLeading().startsWith("#"))
				.map((line) -> line + "\n")
				.collect(Collectors.joining());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("the shell script " + DIRECTORY + name + " could not be read", ex);
		}
	}

}
