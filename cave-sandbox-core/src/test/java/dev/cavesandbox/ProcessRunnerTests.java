package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Process lifetime and stream handling of the runner, on real sandboxes: JVM death, floods, stdin
 * the child does not read, stdout closed early, graceful termination.
 */
@EnabledOnOs(OS.LINUX)
class ProcessRunnerTests {

	private static final Duration GRACE = Duration.ofMillis(400);

	private static ProcessIsolatedExecutor executor;

	@BeforeAll
	static void createExecutor() {
		SandboxSettings settings = SandboxSettings.builder().killGracePeriod(GRACE).build();
		executor = ProcessIsolatedExecutor.isolated(settings, new NetworkIsolationProbe(settings).probe());
	}

	@AfterAll
	static void closeExecutor() {
		executor.close();
	}

	@ParameterizedTest
	@EnumSource(names = { "BWRAP", "UNSHARE" })
	@Timeout(120)
	void killedJvmLeavesNoSandboxBehindWhateverThreadStartedIt(MechanismChoice mechanism) throws Exception {
		String marker = "7" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000) + "0";
		Process jvm = childJvm(List.of(), SandboxHolderMain.class, marker, mechanism.name()).start();
		try (BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream()))) {
			String ready = out.readLine();
			assertThat(ready).as("child JVM output").startsWith("READY");
			int expected = Integer.parseInt(ready.substring("READY ".length()));
			// Not killed early: the short-lived thread has ended, the sandboxes still run.
			Thread.sleep(500);
			assertThat(SandboxHolderMain.running(marker)).hasSize(expected);
			jvm.destroyForcibly();
			assertThat(jvm.waitFor(10, TimeUnit.SECONDS)).isTrue();
			await().atMost(Duration.ofMillis(1500))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> SandboxHolderMain.anyNaming(marker).isEmpty());
			// The killed JVM never removed its private working directories; the next executor does.
			Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
			String prefix = "cave-sandbox-" + jvm.pid() + "-";
			assertThat(privateDirectories(tmp, prefix)).hasSize(expected);
			PrivateDirectories.removeOrphans(tmp);
			assertThat(privateDirectories(tmp, prefix)).isEmpty();
		}
		finally {
			jvm.destroyForcibly();
			SandboxHolderMain.anyNaming(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@Test
	void floodOfOneGibibytePerStreamRunsInASmallHeapAndKeepsOnlyTheCap() throws Exception {
		Process jvm = childJvm(List.of("-Xmx48m"), FloodMain.class).redirectErrorStream(true).start();
		String output = new String(jvm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(jvm.waitFor(120, TimeUnit.SECONDS)).isTrue();
		assertThat(jvm.exitValue()).as(output).isZero();
		assertThat(output).contains("exit=0 stdout=1048576 stderr=1048576 truncated=true,true");
		Matcher heap = Pattern.compile("heapBefore=(\\d+) heapPeak=(\\d+)").matcher(output);
		assertThat(heap.find()).as(output).isTrue();
		long growth = Long.parseLong(heap.group(2)) - Long.parseLong(heap.group(1));
		// Two streams of 1 MiB each, buffered with doubling arrays: a few MiB at most.
		assertThat(growth).as(output).isLessThan(16L * 1024 * 1024);
	}

	@Test
	void stdinLargerThanTheChildReadsNeitherBlocksNorFails() {
		byte[] input = new byte[16 * 1024 * 1024];
		ExecutionResult result = executor.execute(ExecutionRequest.builder("head", "-c", "3").stdin(input).build());
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdout()).hasSize(3);
		assertThat(result.timedOut()).isFalse();
	}

	@Test
	void stdinCanBeAStreamAndIsClosedAfterIt() {
		ExecutionResult result = executor.execute(ExecutionRequest.builder("wc", "-c")
			.stdin(() -> new ByteArrayInputStream(new byte[123_456]))
			.build());
		assertThat(result.stdoutText().trim()).isEqualTo("123456");
	}

	@Test
	void commandThatClosesStdoutEarlyButKeepsRunningIsWaitedFor() {
		ExecutionResult result = executor.execute("sh", "-c", "echo early; exec 1>&-; sleep 1; echo late >&2");
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdoutText()).isEqualTo("early\n");
		assertThat(result.stderrText()).isEqualTo("late\n");
	}

	@Test
	void commandWithATermHandlerIsTerminatedGracefullyOnTimeout() {
		ExecutionResult result = executor.execute(ExecutionRequest
			.builder("sh", "-c", "trap 'echo got-term; exit 3' TERM; echo started; while :; do sleep 0.1; done")
			.timeout(Duration.ofMillis(500))
			.build());
		assertThat(result.timedOut()).isTrue();
		assertThat(result.stdoutText()).isEqualTo("started\ngot-term\n");
		assertThat(result.exitCode()).isEqualTo(3);
	}

	@Test
	void commandIgnoringTermIsKilledAfterTheGracePeriodAndTheCallReturnsPromptly() {
		Duration timeout = Duration.ofMillis(300);
		ExecutionResult result = executor.execute(
				ExecutionRequest.builder("sh", "-c", "trap '' TERM; sleep 60 & wait").timeout(timeout).build());
		assertThat(result.timedOut()).isTrue();
		assertThat(result.exitCode()).isEqualTo(137);
		// Behaviour, not speed: the grace period is honoured and nothing waits for the 60 s sleep.
		assertThat(result.wallTime()).isBetween(timeout.plus(GRACE), timeout.plus(GRACE).plusSeconds(3));
	}

	private static List<Path> privateDirectories(Path directory, String prefix) throws java.io.IOException {
		try (var files = java.nio.file.Files.list(directory)) {
			return files.filter((file) -> file.getFileName().toString().startsWith(prefix)).toList();
		}
	}

	static ProcessBuilder childJvm(List<String> jvmOptions, Class<?> main, String... args) {
		List<String> command = new java.util.ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmOptions);
		command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
		command.addAll(List.of(args));
		return new ProcessBuilder(command);
	}

}
