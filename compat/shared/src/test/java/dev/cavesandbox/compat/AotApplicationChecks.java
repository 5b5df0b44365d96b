package dev.cavesandbox.compat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.compataot.AotCompatApplication;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The module's application jar, built with {@code process-aot} on this host, started
 * with {@code -Dspring.aot.enabled=true} as a user starts it: where isolation is
 * verified its execution runs isolated, and where the run's properties make isolation
 * unavailable (unshare as the only mechanism, at a path that does not exist) strict mode
 * fails at startup with the coded error (before the context has started: with the
 * verdict frozen at build time it started, and only the application's first execution
 * failed) and fallback mode starts and warns. Run by
 * failsafe after {@code package}; the jar's path comes in {@code compat.aot.jar}.
 */
abstract class AotApplicationChecks {

	private static final String[] UNAVAILABLE = { "--cave.sandbox.mechanism=unshare",
			"--cave.sandbox.linux.unshare-path=/nonexistent/compat/unshare" };

	/** A hang ends the child, and fails the test, after this many seconds. */
	private static final long DEADLINE_SECONDS = 300;

	@TempDir
	private Path directory;

	@Test
	@Tag("sandbox")
	void verifiedHostRunsTheExecutionIsolated() throws Exception {
		Run run = start();
		assertThat(run.exitCode()).as(run.output()).isZero();
		assertThat(run.output()).contains("Starting AOT-processed AotCompatApplication")
			.contains(AotCompatApplication.RESULT + "exit 0, mechanism ")
			.contains(", network isolated true");
	}

	@Test
	void strictModeFailsStartupWithTheCodedErrorWhereIsolationIsUnavailable() throws Exception {
		Run run = start(UNAVAILABLE);
		assertThat(run.exitCode()).as(run.output()).isNotZero();
		assertThat(run.output()).contains("Starting AOT-processed AotCompatApplication")
			.contains("APPLICATION FAILED TO START")
			.contains("cave.sandbox.mode is strict, so it failed closed (cave_sandbox_os_network_isolation_unavailable)")
			.contains("Cause: BINARY_MISSING")
			.doesNotContain("Started AotCompatApplication")
			.doesNotContain(AotCompatApplication.RESULT);
	}

	@Test
	void fallbackModeStartsAndWarnsWhereIsolationIsUnavailable() throws Exception {
		List<String> arguments = new ArrayList<>(List.of(UNAVAILABLE));
		arguments.add("--cave.sandbox.mode=fallback");
		Run run = start(arguments.toArray(String[]::new));
		assertThat(run.exitCode()).as(run.output()).isZero();
		assertThat(run.output()).contains("Starting AOT-processed AotCompatApplication")
			.contains("runs in fallback mode WITHOUT network isolation")
			.contains(AotCompatApplication.RESULT + "exit 0, mechanism none, network isolated false");
	}

	private Run start(String... arguments) throws IOException, InterruptedException {
		String jar = System.getProperty("compat.aot.jar");
		assertThat(jar).as("system property compat.aot.jar (set by failsafe)").isNotNull();
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Dspring.aot.enabled=true", "-jar", jar));
		command.addAll(List.of(arguments));
		Path log = this.directory.resolve("output.log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
			.start();
		try {
			if (!process.waitFor(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly().waitFor();
				throw new AssertionError("the application did not end within its deadline: "
						+ Files.readString(log, StandardCharsets.UTF_8));
			}
			return new Run(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
		}
		finally {
			process.destroyForcibly();
		}
	}

	private record Run(int exitCode, String output) {
	}

}
