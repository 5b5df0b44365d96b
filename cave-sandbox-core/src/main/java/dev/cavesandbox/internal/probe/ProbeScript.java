package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.ShellScripts;

/**
 * The script that the Linux probe runs in the sandbox ({@code probe.sh}, only sh,
 * coreutils and /proc: nothing that a minimal host lacks), its command line, and its
 * report: one {@code KEY=VALUE} line per fact, read into the facts by key (a key may
 * repeat: {@code if=}, {@code limit=}, {@code refused=}).
 */
public final class ProbeScript {

	/** The text of {@code probe.sh}. */
	private static final String SCRIPT = ShellScripts.load("probe.sh");

	private ProbeScript() {
	}

	/**
	 * Return the command that runs the script: the names of {@link ProbeSession}'s files
	 * follow as arguments, then the hidden directories of the view.
	 * @param view the view whose hidden directories the child reports on
	 * @return the command line inside the sandbox
	 */
	static List<String> argv(FilesystemView view) {
		List<String> argv = new ArrayList<>(
				List.of("/bin/sh", "-c", SCRIPT, "cave-sandbox-probe", ProbeSession.MARKER_FILE,
						ProbeSession.WRITE_FILE, ProbeSession.OUTSIDE_SUFFIX, ProbeSession.PLANTED_SUFFIX));
		view.hiddenDirectories().forEach((directory) -> argv.add(directory.toString()));
		return argv;
	}

	/**
	 * Read the child's report: each line {@code KEY=VALUE} (value trimmed), in order;
	 * other lines are left out.
	 * @param stdout what the child wrote
	 * @return the values by key
	 */
	static Map<String, List<String>> facts(String stdout) {
		Map<String, List<String>> facts = new LinkedHashMap<>();
		for (String line : stdout.lines().toList()) {
			int separator = line.indexOf('=');
			if (separator > 0) {
				facts.computeIfAbsent(line.substring(0, separator), (key) -> new ArrayList<>())
					.add(line.substring(separator + 1).trim());
			}
		}
		return facts;
	}

	/**
	 * Return the first value of a key of the report.
	 * @param facts the report's values by key
	 * @param key the key
	 * @return the value, or empty when the child did not report the key
	 */
	public static String first(Map<String, List<String>> facts, String key) {
		List<String> values = facts.getOrDefault(key, List.of());
		return values.isEmpty() ? "" : values.get(0);
	}

	/**
	 * Return the value of a {@code KEY=VALUE PATH} fact about the path.
	 * @param facts the report's values by key
	 * @param key the key ({@code hidden}, {@code size})
	 * @param path the path that ends the fact
	 * @return the value, or empty when the child did not report it
	 */
	static String about(Map<String, List<String>> facts, String key, Path path) {
		String suffix = " " + path;
		return facts.getOrDefault(key, List.of())
			.stream()
			.filter((fact) -> fact.endsWith(suffix))
			.map((fact) -> fact.substring(0, fact.length() - suffix.length()))
			.findFirst()
			.orElse("");
	}

}
