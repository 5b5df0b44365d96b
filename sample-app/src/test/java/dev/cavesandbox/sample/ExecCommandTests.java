package dev.cavesandbox.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.CompiledPrograms;
import dev.cavesandbox.MarkedProcesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The command-line contract of {@code java -jar sample-app.jar exec -- CMD [ARG...]}, run
 * in a real child JVM.
 */
@EnabledOnOs(OS.LINUX)
class ExecCommandTests {

	private static final Duration TREE_TIMEOUT = Duration.ofSeconds(3);

	/** The kill grace period's default. */
	private static final Duration GRACE = Duration.ofSeconds(1);

	/** What issue 26 allows beyond the timeout and the grace period. */
	private static final Duration SLACK = Duration.ofSeconds(1);

	@Test
	void exitCodeOfTheCommandPassesThrough() throws Exception {
		assertThat(SampleJvm.run("exec", "--", "sh", "-c", "exit 42").exitCode()).isEqualTo(42);
		assertThat(SampleJvm.run("exec", "--", "true").exitCode()).isZero();
	}

	@Test
	void stdinStdoutAndStderrPassThroughAndNothingElseIsPrinted() throws Exception {
		SampleJvm.Result result = SampleJvm.run(List.of(), "hello sandbox", "exec", "--", "sh", "-c",
				"tr a-z A-Z; echo oops >&2");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout()).isEqualTo("HELLO SANDBOX");
		assertThat(withoutProcessLimitWarning(result.stderr())).isEqualTo("oops\n");
	}

	/**
	 * A JVM running as root whose commands stay root ({@code command-user=0}) gets no
	 * process limit (the kernel exempts uid 0): the startup warning says so on stderr,
	 * once, with the fix; by default (the command user) and for any other user's JVM
	 * there is none.
	 */
	@Test
	void processLimitThatDoesNotHoldIsWarnedOnStderrOnce() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.linux.command-user=0", "exec", "--", "true");
		assertThat(result.exitCode()).as("%s", result).isZero();
		int warnings = result.stderr().split("not given: the process limit", -1).length - 1;
		assertThat(warnings).as("%s", result).isEqualTo(ROOT ? 1 : 0);
		if (ROOT) {
			assertThat(result.stderr()).contains("WARN")
				.contains("cave.sandbox.limits.processes does not hold")
				.contains("fix: run the JVM as a non-root user");
		}
		SampleJvm.Result byDefault = SampleJvm.run("exec", "--", "id", "-u");
		assertThat(byDefault.exitCode()).as("%s", byDefault).isZero();
		assertThat(byDefault.stderr()).doesNotContain("not given: the process limit");
		assertThat(byDefault.stdout()).isEqualTo(ROOT ? "65534\n" : byDefault.stdout());
	}

	/**
	 * A root JVM without {@code CAP_SETUID} and {@code CAP_SETGID} (a container that
	 * drops capabilities but keeps uid 0; here its bounding set, through setpriv) cannot
	 * map a command user: its commands stay root on bwrap, and the startup warning says
	 * why.
	 */
	@Test
	void aRootJvmThatCannotMapACommandUserKeepsItsCommandsRootAndSaysWhy() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(ROOT, "the JVM runs as root");
		SampleJvm.Result result = SampleJvm.run(List.of("/usr/bin/setpriv", "--bounding-set", "-setuid,-setgid", "--"),
				"", "exec", "--", "id", "-u");
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(result.stdout()).isEqualTo("0\n");
		assertThat(result.stderr()).contains("not given: the process limit")
			.contains("the JVM lacks CAP_SETUID and CAP_SETGID to switch to one");
	}

	private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

	private static String withoutProcessLimitWarning(String stderr) {
		return stderr.lines()
			.filter((line) -> !line.contains("not given: the process limit"))
			.map((line) -> line + "\n")
			.collect(java.util.stream.Collectors.joining());
	}

	@Test
	void optionsOfTheCommandAfterTheSeparatorAreNotTakenAsProperties() throws Exception {
		SampleJvm.Result result = SampleJvm.run("exec", "--", "echo", "--cave.sandbox.timeout=1ms", "-n", "x");
		assertThat(result.stdout()).isEqualTo("--cave.sandbox.timeout=1ms -n x\n");
	}

	@Test
	void timeoutExitsWith124() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.timeout=500ms", "exec", "--", "sleep", "30");
		assertThat(result.exitCode()).as("%s", result).isEqualTo(124);
		assertThat(result.stderr()).contains("timed out");
	}

	/**
	 * Issue 26: the core's hostile tree (32 lanes forking their successors below a
	 * subreaper that ignores SIGCHLD, continuing each other, the command staying) under a
	 * 3 s timeout, on every mechanism. The CLI says the timeout ended it and exits 124
	 * within the timeout plus the kill grace period (1 s) plus one second from the tree's
	 * first line on stdout (the CLI held on to pipes of a tree that lived on for a minute
	 * once), and no process of the tree is left once it has exited.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "bwrap", "unshare", "namespaces", "seccomp" })
	void aHostileTreeIsGoneAndTheCliHasExitedWithinTheGracePeriodOfItsTimeout(String mechanism, @TempDir Path directory)
			throws Exception {
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path program = CompiledPrograms.compile("hostile-tree", Files.createDirectory(directory.resolve("program")));
		String marker = "hostile-tree-" + UUID.randomUUID();
		Path stderr = directory.resolve("stderr");
		Process cli = SampleJvm.start(stderr, "--cave.sandbox.mechanism=" + mechanism, "--cave.sandbox.timeout=3s",
				"--cave.sandbox.filesystem.readable-paths=" + program.getParent(), "exec", "--", program.toString(),
				marker, "32", "1", "0");
		try {
			BufferedReader stdout = new BufferedReader(
					new InputStreamReader(cli.getInputStream(), StandardCharsets.UTF_8));
			String first = stdout.readLine();
			long started = System.nanoTime();
			assertThat(first).as("%s", Files.readString(stderr)).startsWith("hostile tree: 32 lanes");
			boolean exited = cli.waitFor(TREE_TIMEOUT.plus(GRACE).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
			long took = (System.nanoTime() - started) / 1_000_000;
			List<String> left = MarkedProcesses.leftovers(marker);
			System.out.println(getClass().getSimpleName() + " " + mechanism + ": the CLI "
					+ (exited ? "exited " + took + " ms" : "still ran " + took + " ms")
					+ " after the tree's first line");
			assertThat(exited).as("the CLI exited within the bound (%d ms)", took).isTrue();
			assertThat(cli.exitValue()).as("%s", Files.readString(stderr)).isEqualTo(124);
			assertThat(Files.readString(stderr)).contains("timed out");
			assertThat(left).as("processes of the tree [pid state ppid uid]").isEmpty();
		}
		finally {
			cli.destroyForcibly();
			MarkedProcesses.stopAndKill(marker);
		}
	}

	/**
	 * The command dies of SIGXFSZ under a file size limit (it sends the signal itself:
	 * the kernel's is the same one): the line names the limit, the exit code stays the
	 * command's.
	 */
	@Test
	void limitThatEndedTheCommandIsPrintedAndTheExitCodeIsKept() throws Exception {
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.limits.file-size=1MB", "exec", "--", "sh", "-c",
				"echo before; kill -XFSZ $$; echo after");
		assertThat(result.exitCode()).as("%s", result).isEqualTo(128 + 25);
		assertThat(result.stdout()).isEqualTo("before\n");
		assertThat(withoutProcessLimitWarning(result.stderr())).isEqualTo("cave-sandbox: limit exceeded: file-size\n");
	}

	@Test
	void signalOfALimitThatIsNotSetPrintsNothing() throws Exception {
		SampleJvm.Result result = SampleJvm.run("exec", "--", "sh", "-c", "kill -XFSZ $$");
		assertThat(result.exitCode()).as("%s", result).isEqualTo(128 + 25);
		assertThat(withoutProcessLimitWarning(result.stderr())).isEmpty();
	}

	/** An invalid property fails the start with Boot's binding report: exit 1. */
	@ParameterizedTest
	@ValueSource(strings = { "--cave.sandbox.limits.processes=0", "--cave.sandbox.timeout=0s" })
	void invalidPropertyExitsWith1WithBootsBindingReportAndRunsNothing(String property, @TempDir Path directory)
			throws Exception {
		Path marker = directory.resolve("marker");
		SampleJvm.Result result = SampleJvm.run(property, "exec", "--", "touch", marker.toString());
		assertThat(result.exitCode()).as("%s", result).isEqualTo(1);
		assertThat(result.stderr()).contains("APPLICATION FAILED TO START")
			.contains("Property: " + property.substring(2, property.indexOf('=')))
			.contains("must be positive");
		assertThat(marker).doesNotExist();
	}

	@Test
	void missingCommandExitsWith127() throws Exception {
		SampleJvm.Result result = SampleJvm.run("exec", "--", "no-such-command-cave-sandbox");
		assertThat(result.exitCode()).isEqualTo(127);
		assertThat(result.stderr()).contains("cave_sandbox_command_not_found");
	}

	@Test
	void nonExecutableCommandExitsWith126(@TempDir Path directory) throws Exception {
		Path script = Files.writeString(directory.resolve("script.sh"), "#!/bin/sh\necho hi\n");
		SampleJvm.Result result = SampleJvm.run("exec", "--", script.toString());
		assertThat(result.exitCode()).isEqualTo(126);
		assertThat(result.stderr()).contains("cave_sandbox_command_not_executable");
	}

	@Test
	void missingUnshareExitsWith125AndRunsNothing(@TempDir Path directory) throws Exception {
		Path marker = directory.resolve("marker");
		SampleJvm.Result result = SampleJvm.run("--cave.sandbox.mechanism=unshare",
				"--cave.sandbox.linux.unshare-path=" + directory.resolve("missing"), "exec", "--", "touch",
				marker.toString());
		assertThat(result.exitCode()).as("%s", result).isEqualTo(125);
		assertThat(result.stderr()).contains("cave_sandbox_os_network_isolation_unavailable");
		assertThat(marker).doesNotExist();
	}

	/**
	 * With the namespace limit at zero only the seccomp mechanism is left; unshare,
	 * chosen on its own, is unavailable.
	 */
	@Test
	void namespaceLimitZeroWithUnshareChosenExitsWith125InStrictModeAndRunsNothing(@TempDir Path directory)
			throws Exception {
		Path marker = directory.resolve("marker");
		SampleJvm.Result result = SampleJvm.run(SampleJvm.NAMESPACE_LIMIT_ZERO, "", "--cave.sandbox.mechanism=unshare",
				"exec", "--", "touch", marker.toString());
		assertThat(result.exitCode()).as("%s", result).isEqualTo(125);
		assertThat(result.stderr()).contains("cave_sandbox_os_network_isolation_unavailable")
			.contains("No space left on device");
		assertThat(marker).doesNotExist();
	}

	@Test
	void namespaceLimitZeroWithUnshareChosenRunsUnisolatedInFallbackModeAndSaysSo(@TempDir Path directory)
			throws Exception {
		Path marker = directory.resolve("marker");
		SampleJvm.Result result = SampleJvm.run(SampleJvm.NAMESPACE_LIMIT_ZERO, "", "--cave.sandbox.mechanism=unshare",
				"--cave.sandbox.mode=fallback", "exec", "--", "touch", marker.toString());
		assertThat(result.exitCode()).as("%s", result).isZero();
		assertThat(marker).exists();
		assertThat(result.stderr()).contains("fallback mode WITHOUT network isolation")
			.contains("no resource limit is applied")
			.contains("ran WITHOUT network isolation");
	}

	@Test
	void commandCannotReachAListenerOnTheHostsLoopback() throws Exception {
		try (ServerSocket listener = new ServerSocket()) {
			listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			SampleJvm.Result result = SampleJvm.run("exec", "--", "bash", "-c",
					"echo secret > /dev/tcp/127.0.0.1/" + listener.getLocalPort());
			assertThat(result.exitCode()).isNotZero();
			// The launcher's seccomp filter refuses the socket (no private loopback).
			assertThat(result.stderr()).contains("Address family not supported by protocol");
			listener.setSoTimeout(300);
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(listener::accept);
		}
	}

	@Test
	void unknownSampleCommandIsAUsageError() throws Exception {
		SampleJvm.Result result = SampleJvm.run("frobnicate");
		assertThat(result.exitCode()).isEqualTo(2);
		assertThat(result.stderr()).contains("unknown command 'frobnicate'");
		assertThat(result.stdout()).doesNotContain("cave-sandbox demo");
	}

	@Test
	void missingCommandAfterExecIsAUsageError() throws IOException, InterruptedException {
		SampleJvm.Result result = SampleJvm.run("exec", "--");
		assertThat(result.exitCode()).isEqualTo(125);
		assertThat(result.stderr()).contains("usage: exec -- CMD [ARG...]");
	}

}
