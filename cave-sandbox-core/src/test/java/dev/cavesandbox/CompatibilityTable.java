package dev.cavesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The compatibility suite's results as a Markdown table, rewritten after each cell into
 * {@code target/compat/compatibility.md} of the module: a row per program, a column per
 * shape, each cell {@code ok}, a numbered failure whose error line is listed under the
 * table (a line shared by several cells gets one number), or {@code -} where the cell did
 * not run. {@code compat/compatibility-table.sh} copies the file into
 * docs/compatibility.md.
 */
final class CompatibilityTable {

	/** Where the table is written, relative to the module ({@code basedir}). */
	static final Path FILE = Path.of("target", "compat", "compatibility.md");

	private final List<CompatibilityShape> shapes;

	private final Map<String, CompatibilityOutcome> cells = new LinkedHashMap<>();

	private final Instant started = Instant.now();

	CompatibilityTable(List<CompatibilityShape> shapes) {
		this.shapes = shapes;
	}

	/**
	 * Record a cell and rewrite the file.
	 * @param program the row
	 * @param shape the column
	 * @param outcome what the program did there
	 */
	synchronized void record(CompatibilityProgram program, CompatibilityShape shape, CompatibilityOutcome outcome) {
		this.cells.put(key(program, shape), outcome);
		Path file = Path.of(System.getProperty("basedir", ".")).resolve(FILE);
		try {
			Files.createDirectories(file.getParent());
			Files.writeString(file, markdown());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The table, its legend and the numbered failures. */
	synchronized String markdown() {
		List<String> failures = new ArrayList<>();
		StringBuilder table = new StringBuilder("| program |");
		this.shapes.forEach((shape) -> table.append(' ').append(shape.column()).append(" |"));
		table.append("\n| --- |").append(" --- |".repeat(this.shapes.size())).append('\n');
		int ok = 0;
		int run = 0;
		for (CompatibilityProgram program : CompatibilityProgram.values()) {
			table.append("| ").append(program.title()).append(" |");
			for (CompatibilityShape shape : this.shapes) {
				CompatibilityOutcome outcome = this.cells.get(key(program, shape));
				run += (outcome != null) ? 1 : 0;
				if (outcome == null) {
					table.append(" - |");
				}
				else if (outcome.ok()) {
					ok++;
					table.append(" ok |");
				}
				else {
					if (!failures.contains(outcome.summary())) {
						failures.add(outcome.summary());
					}
					table.append(" **fails** (").append(failures.indexOf(outcome.summary()) + 1).append(") |");
				}
			}
			table.append('\n');
		}
		StringBuilder text = new StringBuilder();
		text.append(ok)
			.append(" of ")
			.append(run)
			.append(" cells ok (run of ")
			.append(this.shapes.size() * CompatibilityProgram.values().length)
			.append("); `CompatibilityTests`, started ")
			.append(this.started.truncatedTo(ChronoUnit.SECONDS))
			.append(", Linux ")
			.append(System.getProperty("os.version"))
			.append(", Java ")
			.append(System.getProperty("java.version"))
			.append(".\n\n")
			.append(table)
			.append('\n')
			.append(legend());
		if (!failures.isEmpty()) {
			text.append("\nFailures (a program that exited non-zero: its exit code and the last line of its stderr "
					+ "that names an error, else its last line; a timeout, a wrong output and an error of the "
					+ "executor say so):\n\n");
			for (int i = 0; i < failures.size(); i++) {
				text.append(i + 1).append(". `").append(failures.get(i).replace('`', '\'')).append("`\n");
			}
		}
		return text.toString();
	}

	private static String legend() {
		return """
				Columns: each mechanism as a root JVM (its commands run as the command user) and as nobody's JVM \
				(uid 65534); then a JVM whose probe picks the mechanism itself (`auto`, it picks `seccomp` in \
				each): as root under Docker's default seccomp profile and capabilities, and as nobody there (the \
				Kubernetes restricted shape), both reproduced with a seccomp filter (`container-confinement.py`); \
				and the same two in a real container of Debian's `runc` (`RuncContainer`: Docker's default \
				capabilities as uid 0; uid 65534, no capabilities and `no_new_privs`; a network namespace with \
				nothing but its loopback).
				""";
	}

	private static String key(CompatibilityProgram program, CompatibilityShape shape) {
		return program.name() + "@" + shape.column();
	}

}
