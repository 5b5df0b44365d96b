package dev.cavesandbox.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo, run as {@code spring-boot:run} and {@code java -jar} run it: a real child
 * JVM.
 */
@EnabledOnOs(OS.LINUX)
class DemoReportTests {

	@Test
	void everyRowOfTheDemoBehavesAsExpectedWhenIsolated() throws Exception {
		SampleJvm.Result result = SampleJvm.run();
		assertThat(result.exitCode()).as("%s", result).isZero();
		// auto picks bubblewrap where it is installed (CI installs it), else unshare.
		assertThat(result.stdout()).containsPattern("isolation: (bwrap|unshare) \\(network isolated\\)")
			.containsPattern(
					"exfiltrate a secret to 127\\.0\\.0\\.1:\\d+ +(bwrap|unshare) +1 .*BLOCKED: the listener received 0 bytes")
			.containsPattern("DNS lookup of example\\.com +(bwrap|unshare) +2 .*FAILED as it should")
			.containsPattern("sha256sum upload\\.bin .* (bwrap|unshare) +0 .*matches the JVM's SHA-256")
			.containsPattern("runaway .* (bwrap|unshare) +kill .*KILLED by the timeout, 0 processes left")
			.containsPattern(
					"LibreOffice: an uploaded \\.fodt to PDF \\(offline\\) +(bwrap|unshare) +0 .*OK: invoice\\.pdf, \\d+ bytes")
			.contains("Every row behaved as expected.");
	}

	/**
	 * The seccomp mechanism (Docker's default profile, Kubernetes' restricted pods): no
	 * mount namespace, LibreOffice's pipe made beside the command by the launcher's
	 * supervisor.
	 */
	@Test
	void onTheSeccompMechanismLibreOfficeConvertsTheUpload() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.mechanism=seccomp");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout())
			.containsPattern(
					"LibreOffice: an uploaded \\.fodt to PDF \\(offline\\) +seccomp +0 .*OK: invoice\\.pdf, \\d+ bytes")
			.contains("Every row behaved as expected.");
	}

	@Test
	void strictModeWithoutFailFastRefusesEveryRowAndSaysWhy() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.fail-fast=false", "--cave.sandbox.mechanism=unshare",
				"--cave.sandbox.linux.unshare-path=/nonexistent/unshare");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout()).contains("strict mode refuses every execution (BINARY_MISSING)")
			.contains("REFUSED: cave_sandbox_os_network_isolation_unavailable")
			.contains("Every row behaved as expected.");
	}

	@Test
	void inFallbackModeTheDemoShowsTheLeakAndSendsNoRealQuery() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.mode=fallback", "--cave.sandbox.mechanism=unshare",
				"--cave.sandbox.linux.unshare-path=/nonexistent/unshare");
		assertThat(result.stdout()).as("%s", result)
			.contains("isolation: none (NOT network isolated)")
			.contains("LEAKED: the listener received")
			.contains("SKIPPED: not isolated (fallback mode), the demo sends no real query")
			.contains("Every row behaved as expected.");
	}

}
