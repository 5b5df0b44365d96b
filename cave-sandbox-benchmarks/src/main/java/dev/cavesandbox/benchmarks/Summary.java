package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The Markdown summary of a run, as BENCHMARKS.md reproduces it: a header with the
 * machine, the JDK and the plan, then the reports' sections, line by line
 * ({@link Locale#ROOT} formats).
 */
final class Summary {

	private final StringBuilder text = new StringBuilder();

	void header(MeasurementPlan plan, String load) {
		line("# Benchmark run %s", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
		line("");
		line("- Machine: %d CPUs (%s), Linux %s, %s", Runtime.getRuntime().availableProcessors(), cpuModel(),
				System.getProperty("os.version"), memory());
		line("- JDK: %s %s (%s)", System.getProperty("java.vm.vendor"), System.getProperty("java.runtime.version"),
				System.getProperty("java.vm.name"));
		line("- JMH 1.37; spawn and output configurations run in %d interleaved rounds of 1 fork each, merged%s",
				plan.rounds(), plan.quick() ? " (--quick: smoke run, not for figures)" : "");
		line("- Mechanisms measured: %s", String.join(", ", plan.mechanisms()));
		line("- Load average at start: %s", load);
	}

	/** Append a line: the format and its arguments as {@link String#format}. */
	void line(String format, Object... args) {
		this.text.append(String.format(Locale.ROOT, format, args)).append('\n');
	}

	static String verdict(boolean met) {
		return met ? "(met)" : "(MISSED)";
	}

	/** The 1, 5 and 15 minute load averages of {@code /proc/loadavg}, or "unknown". */
	static String loadAverage() {
		return read("/proc/loadavg").map((text) -> String.join(" ", List.of(text.trim().split(" ")).subList(0, 3)))
			.orElse("unknown");
	}

	private static String cpuModel() {
		return read("/proc/cpuinfo")
			.flatMap((text) -> text.lines()
				.filter((l) -> l.startsWith("model name"))
				.map((l) -> l.substring(l.indexOf(':') + 1).trim())
				.findFirst())
			.orElse("unknown CPU");
	}

	private static String memory() {
		return read("/proc/meminfo")
			.flatMap((text) -> text.lines()
				.filter((l) -> l.startsWith("MemTotal:"))
				.map((l) -> Long.parseLong(l.replaceAll("[^0-9]", "")) / (1024 * 1024) + " GiB RAM")
				.findFirst())
			.orElse("");
	}

	private static Optional<String> read(String file) {
		try {
			return Optional.of(Files.readString(Path.of(file)));
		}
		catch (IOException ex) {
			return Optional.empty();
		}
	}

	@Override
	public String toString() {
		return this.text.toString();
	}

}
