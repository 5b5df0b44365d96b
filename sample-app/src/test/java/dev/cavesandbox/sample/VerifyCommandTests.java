package dev.cavesandbox.sample;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code java -jar sample-app.jar verify}, run in a real child JVM on this host: the
 * probes of every mechanism, and real egress attempts from a child JVM inside the sandbox
 * against the command's own loopback listeners and unix socket.
 */
@EnabledOnOs(OS.LINUX)
class VerifyCommandTests {

	/** The attempts' labels, each followed by its port or path. */
	private static final List<String> ATTEMPTS = List.of("TCP 127.0.0.1:", "TCP [::1]:", "TCP [::ffff:127.0.0.1]:",
			"UDP 127.0.0.1:", "DNS query, UDP 127.0.0.1:", "unix socket /");

	@Test
	void onThisHostEveryMechanismIsProbedAndEveryAttemptIsBlocked() throws Exception {
		SampleJvm.Result result = SampleJvm.run("verify");
		assertThat(result.exitCode()).as("%s", result).isZero();
		List<String> lines = result.stdout().lines().toList();
		for (String choice : List.of("bwrap", "unshare", "namespaces", "seccomp")) {
			assertThat(lines).as("%s", result).anyMatch((line) -> line.matches("  " + choice + " +available \\(.*"));
		}
		assertThat(lines).anyMatch(
				(line) -> line.startsWith("Chosen (cave.sandbox.mechanism=auto): bwrap, verified by the probe in "));
		// A root JVM's command user keeps two capabilities over root:root files only.
		assertThat(lines).contains("  - only interface: lo", "root".equals(System.getProperty("user.name"))
				? "  - capabilities: CAP_DAC_OVERRIDE and CAP_FOWNER only, over files of root:root (the command "
						+ "user's namespace maps no other owner)"
				: "  - capabilities: none");
		assertBlocked(result);
		assertThat(lines).anyMatch((line) -> line.startsWith("  abstract unix socket") && line.contains("skipped"));
		assertThat(lines.get(lines.size() - 1))
			.isEqualTo("VERIFIED: bwrap isolates commands on this host; every attempt was blocked.");
	}

	/**
	 * Each mechanism chosen on its own: the attempts are made inside it, and the facts
	 * include what it does not give.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "bwrap", "unshare", "namespaces", "seccomp" })
	void eachMechanismChosenOnItsOwnBlocksEveryAttempt(String choice) throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.mechanism=" + choice, "verify");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout()).contains("Chosen (cave.sandbox.mechanism=" + choice + "): " + choice + ", verified")
			.contains("Egress attempts from a child JVM inside " + choice + ",");
		if (choice.equals("namespaces") || choice.equals("seccomp")) {
			assertThat(result.stdout()).contains("  - not given: hidden directories:");
		}
		else {
			// These mechanisms give everything: a root JVM's commands run as the
			// command user, so that the process limit holds.
			assertThat(result.stdout().lines().filter((line) -> line.contains("not given:"))).isEmpty();
			if ("root".equals(System.getProperty("user.name"))) {
				assertThat(result.stdout())
					.contains("  - uid 65534: the command user of a root JVM, so that the process limit holds");
			}
		}
		assertBlocked(result);
	}

	/**
	 * A host where no user namespace can be created (the JVM in a nested user namespace
	 * whose limit is zero): the mechanisms with namespaces name their cause, and strict
	 * mode verifies the seccomp mechanism.
	 */
	@Test
	void withoutUserNamespacesTheSeccompMechanismIsChosenAndBlocksEveryAttempt() throws Exception {
		SampleJvm.Result result = SampleJvm.run(SampleJvm.NAMESPACE_LIMIT_ZERO, "", "verify");
		assertThat(result.exitCode()).as("%s", result).isZero();
		List<String> lines = result.stdout().lines().toList();
		for (String choice : List.of("bwrap", "unshare", "namespaces")) {
			assertThat(lines).as("%s", result).anyMatch((line) -> line.matches("  " + choice + " +unavailable"));
		}
		assertThat(lines).filteredOn((line) -> line.contains("cause: NESTING_FORBIDDEN: ")).hasSize(3);
		assertThat(lines).anyMatch((line) -> line.matches("  seccomp +available \\(.*"))
			.anyMatch((line) -> line.startsWith("Chosen (cave.sandbox.mechanism=auto): seccomp, verified"))
			.contains("  - not given: IPC namespace: System V IPC objects and POSIX message queues that the JVM's "
					+ "user can open are in reach");
		assertBlocked(result);
	}

	@Test
	void mechanismThatCannotWorkPrintsItsCauseAndExitsWith125InStrictMode() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.linux.bwrap-path=/nonexistent",
				"--cave.sandbox.mechanism=bwrap", "verify");
		assertThat(result.exitCode()).as("%s", result).isEqualTo(125);
		List<String> lines = result.stdout().lines().toList();
		assertThat(lines).contains("  bwrap      unavailable",
				"             cause: BINARY_MISSING: the sandbox wrapper binary does not exist",
				"             detail: bwrap: /nonexistent does not exist",
				"Chosen (cave.sandbox.mechanism=bwrap): none, isolation is unavailable");
		assertThat(lines).anyMatch((line) -> line.startsWith("             fix: install bubblewrap"));
		assertThat(lines.get(lines.size() - 1)).startsWith("NOT VERIFIED: cave.sandbox.mechanism=bwrap gives no "
				+ "isolation on this host (verified here on their own: unshare, namespaces, seccomp)");
		assertThat(result.stdout()).doesNotContain("Egress attempts").doesNotContain("blocked");
	}

	/**
	 * A real leak, for the check to find: in the host view without /tmp among the hidden
	 * directories, the command reaches the unix socket that verify places beside its
	 * working directory in /tmp.
	 */
	@Test
	void socketThatTheSandboxDoesNotHideGetsThroughAndExitsWith125() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.mechanism=bwrap", "--cave.sandbox.filesystem.view=host",
				"--cave.sandbox.hidden-directories=/var/tmp", "verify");
		assertThat(result.exitCode()).as("%s", result).isEqualTo(125);
		List<String> lines = result.stdout().lines().toList();
		assertThat(lines).filteredOn((line) -> line.startsWith("  unix socket /"))
			.singleElement()
			.satisfies((line) -> assertThat(line).contains(" GOT THROUGH: the listener received "
					+ "[\"cave-sandbox verify sandboxed unix.\"] (inside: sent: connected to "));
		assertThat(lines).filteredOn((line) -> line.startsWith("  TCP ") || line.startsWith("  UDP "))
			.hasSize(4)
			.allMatch((line) -> line.contains(" blocked (inside: failed: "));
		assertThat(lines.get(lines.size() - 1)).isEqualTo("NOT VERIFIED: see the attempts above.");
	}

	private static void assertBlocked(SampleJvm.Result result) {
		List<String> lines = result.stdout().lines().toList();
		for (String attempt : ATTEMPTS) {
			assertThat(lines).as("%s", result)
				.filteredOn((line) -> line.startsWith("  " + attempt))
				.singleElement()
				.satisfies((line) -> assertThat(line).contains(" blocked (inside: failed: "));
		}
		assertThat(result.stdout()).doesNotContain("GOT THROUGH")
			.doesNotContain("NOT BLOCKED")
			.doesNotContain("NOT RUN")
			.doesNotContain("CONTROL");
	}

}
