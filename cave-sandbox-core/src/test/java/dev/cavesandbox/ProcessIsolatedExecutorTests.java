package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Real executions on this Linux host, isolated and (as the control that shows each check can
 * fail) unisolated. Network checks touch only listeners that the test opens on loopback.
 */
@EnabledOnOs(OS.LINUX)
class ProcessIsolatedExecutorTests {

	private static ProcessIsolatedExecutor isolated;

	private static ProcessIsolatedExecutor unisolated;

	private static IsolationCapability capability;

	@BeforeAll
	static void createExecutors() {
		SandboxSettings settings = SandboxSettings.builder()
			.timeout(Duration.ofSeconds(20))
			.killGracePeriod(Duration.ofMillis(300))
			.build();
		capability = new NetworkIsolationProbe(settings).probe();
		assertThat(capability.available()).as("probe verdict %s", capability).isTrue();
		isolated = ProcessIsolatedExecutor.isolated(settings, capability);
		unisolated = ProcessIsolatedExecutor.unisolated(settings);
	}

	@AfterAll
	static void closeExecutors() {
		isolated.close();
		unisolated.close();
	}

	@Test
	void privateWorkingDirectoryIsHomeAndIsRemovedAfterwards() {
		ExecutionResult result = isolated.execute("sh", "-c", "pwd; echo data > file; mkdir -p a/b; chmod 000 a; echo $HOME");
		List<String> lines = result.stdoutText().lines().toList();
		assertThat(lines.get(0)).isEqualTo(lines.get(1)).contains("cave-sandbox-");
		// Emptied for reuse, or removed.
		assertThat(Path.of(lines.get(0))).satisfiesAnyOf((path) -> assertThat(path).doesNotExist(),
				(path) -> assertThat(path).isEmptyDirectory());
	}

	@Test
	void emptiedPrivateDirectoryIsReusedOnlyEmptyAndOwnerOnly(@TempDir Path directory) throws IOException {
		SandboxSettings settings = SandboxSettings.builder().maxConcurrent(1).workDirectory(directory).build();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			ExecutionResult first = executor.execute("sh", "-c", "pwd; echo secret > left.txt; mkdir sub; chmod 777 .");
			Path used = Path.of(first.stdoutText().trim());
			ExecutionResult second = executor.execute("sh", "-c", "pwd; ls -A; stat -c %a .");
			assertThat(second.stdoutText()).isEqualTo(used + "\n700\n");
		}
		try (var left = Files.list(directory)) {
			assertThat(left).as("closing the executor removes the kept directories").isEmpty();
		}
	}

	@Test
	void unisolatedPrivateDirectoriesAreNeverReused() {
		String first = unisolated.execute("pwd").stdoutText();
		String second = unisolated.execute("pwd").stdoutText();
		assertThat(first).isNotEqualTo(second);
		assertThat(Path.of(first.trim())).doesNotExist();
	}

	@Test
	void namedWorkingDirectoryIsUsedAndKept(@TempDir Path directory) {
		isolated.execute(ExecutionRequest.builder("sh", "-c", "echo kept > out.txt").workingDirectory(directory).build());
		assertThat(directory.resolve("out.txt")).hasContent("kept");
	}

	@Test
	void outputBeyondTheCapIsDiscardedAndReported() {
		ExecutionResult result = isolated
			.execute(ExecutionRequest.builder("head", "-c", "5000000", "/dev/zero").maxOutputBytes(1000).build());
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdout()).hasSize(1000);
		assertThat(result.stdoutTruncated()).isTrue();
		assertThat(result.stderrTruncated()).isFalse();
	}

	@Test
	void outputCanBeStreamedToASink() {
		ByteArrayOutputStream sink = new ByteArrayOutputStream();
		ExecutionResult result = isolated
			.execute(ExecutionRequest.builder("echo", "streamed").stdoutSink(sink).build());
		assertThat(sink.toString(StandardCharsets.UTF_8)).isEqualTo("streamed\n");
		assertThat(result.stdout()).isEmpty();
	}

	@Test
	void timeoutKillsTheWholeTreeIncludingSetsidAndTermIgnoringChildren() {
		String marker = "30" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		String script = "trap '' TERM; setsid sleep " + marker + " & sh -c 'trap \"\" TERM; sleep " + marker
				+ "' & sleep " + marker;
		ExecutionResult result = isolated
			.execute(ExecutionRequest.builder("sh", "-c", script).timeout(Duration.ofMillis(500)).build());
		assertThat(result.timedOut()).isTrue();
		assertThat(result.succeeded()).isFalse();
		assertThat(result.wallTime()).isLessThan(Duration.ofSeconds(10));
		await().atMost(Duration.ofSeconds(5)).until(() -> processesWith(marker).isEmpty());
	}

	@Test
	void normalExitLeavesNoBackgroundProcess() {
		String marker = "31" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		ExecutionResult result = isolated.execute("sh", "-c", "setsid sleep " + marker + " & echo started");
		assertThat(result.stdoutText()).isEqualTo("started\n");
		await().atMost(Duration.ofSeconds(5)).until(() -> processesWith(marker).isEmpty());
	}

	@Test
	void cancellingAnAsynchronousExecutionKillsTheTree() {
		String marker = "32" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		CompletableFuture<ExecutionResult> future = isolated.executeAsync(ExecutionRequest.of("sleep", marker));
		await().atMost(Duration.ofSeconds(5)).until(() -> !processesWith(marker).isEmpty());
		assertThat(future.cancel(true)).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> processesWith(marker).isEmpty());
	}

	@Test
	void interruptingTheCallerKillsTheTree() throws InterruptedException {
		String marker = "33" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		AtomicReference<Throwable> thrown = new AtomicReference<>();
		Thread caller = new Thread(() -> {
			try {
				isolated.execute("sleep", marker);
			}
			catch (Throwable ex) {
				thrown.set(ex);
			}
		});
		caller.start();
		await().atMost(Duration.ofSeconds(5)).until(() -> !processesWith(marker).isEmpty());
		caller.interrupt();
		caller.join(10_000);
		assertThat(thrown.get()).isInstanceOf(ExecutionCancelledException.class);
		assertThat(((CaveSandboxException) thrown.get()).code()).isEqualTo("cave_sandbox_execution_cancelled");
		await().atMost(Duration.ofSeconds(5)).until(() -> processesWith(marker).isEmpty());
	}

	@Test
	void missingCommandIsReportedWithItsCode() {
		assertThatExceptionOfType(CommandNotFoundException.class)
			.isThrownBy(() -> isolated.execute("no-such-command-cave-sandbox"))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_command_not_found"));
		assertThatExceptionOfType(CommandNotFoundException.class)
			.isThrownBy(() -> isolated.execute("/no/such/command"));
	}

	@Test
	void nonExecutableFileIsReportedWithItsCode(@TempDir Path directory) throws IOException {
		Path script = Files.writeString(directory.resolve("script.sh"), "#!/bin/sh\necho hi\n");
		assertThatExceptionOfType(CommandNotExecutableException.class)
			.isThrownBy(() -> isolated.execute(script.toString()))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_command_not_executable"));
		assertThatExceptionOfType(CommandNotExecutableException.class)
			.isThrownBy(() -> isolated.execute(directory.toString()));
	}

	@Test
	void commandInAHiddenDirectoryIsNotFoundUnlessItIsInTheWorkingDirectory(@TempDir Path directory)
			throws IOException {
		assumeThat(directory.toRealPath().startsWith(Path.of("/tmp"))).as("@TempDir lies in the hidden /tmp").isTrue();
		Path script = Files.writeString(directory.resolve("tool.sh"), "#!/bin/sh\necho ran\n");
		script.toFile().setExecutable(true);
		assertThatExceptionOfType(CommandNotFoundException.class).isThrownBy(() -> isolated.execute(script.toString()))
			.withMessageContaining("lies in a directory that the sandbox hides");
		ExecutionResult inWorkingDirectory = isolated
			.execute(ExecutionRequest.builder("./tool.sh").workingDirectory(directory).build());
		assertThat(inWorkingDirectory.stdoutText()).isEqualTo("ran\n");
		assertThat(unisolated.execute(script.toString()).stdoutText()).isEqualTo("ran\n");
	}

	/**
	 * Found by a break-in attempt: with the caller's PATH, the unshare mechanism's setup ran a
	 * {@code mount} that an earlier execution had planted in a persistent working directory, as
	 * root of the outer namespace, before the hidden directories were mounted.
	 */
	@Test
	void variablesThatSteerTheWrappersReachOnlyTheCommand(@TempDir Path directory) throws IOException {
		Path workspace = VisibleDirectories.create("planted-");
		Path bin = Files.createDirectories(workspace.resolve("bin"));
		Path planted = Files.writeString(bin.resolve("mount"),
				"#!/bin/sh\ntouch " + workspace.resolve("PWNED") + "\nexec /usr/bin/mount \"$@\"\n");
		planted.toFile().setExecutable(true);
		Files.copy(planted, bin.resolve("setpriv"));
		bin.resolve("setpriv").toFile().setExecutable(true);
		SandboxSettings settings = SandboxSettings.builder().mechanism(MechanismChoice.UNSHARE).build();
		IsolationCapability unshare = new NetworkIsolationProbe(settings).probe();
		assertThat(unshare.available()).as("%s", unshare).isTrue();
		String path = bin + ":" + SandboxSettings.BASELINE_PATH;
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, unshare)) {
			ExecutionResult result = executor.execute(ExecutionRequest.builder("sh", "-c", "echo $PATH; echo $LD_LIBRARY_PATH")
				.workingDirectory(workspace)
				.environment("PATH", path)
				.environment("LD_LIBRARY_PATH", workspace.resolve("lib").toString())
				.build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo(path + "\n" + workspace.resolve("lib") + "\n");
		}
		assertThat(workspace.resolve("PWNED")).doesNotExist();
	}

	@Test
	void workingDirectoryThroughASymbolicLinkIsRefused(@TempDir Path directory) throws IOException {
		Path link = Files.createSymbolicLink(directory.resolve("project"), Path.of("/"));
		assertThatExceptionOfType(InvalidExecutionRequestException.class)
			.isThrownBy(() -> isolated.execute(ExecutionRequest.builder("true").workingDirectory(link).build()))
			.withMessageContaining("goes through a symbolic link");
		Path real = Files.createDirectory(directory.resolve("real"));
		Path linkToDirectory = Files.createSymbolicLink(directory.resolve("alias"), real);
		assertThatExceptionOfType(InvalidExecutionRequestException.class).isThrownBy(
				() -> isolated.execute(ExecutionRequest.builder("true").workingDirectory(linkToDirectory).build()));
		assertThat(isolated.execute(ExecutionRequest.builder("true").workingDirectory(real).build()).exitCode()).isZero();
	}

	@Test
	void workingDirectoryThatWouldUncoverHiddenDirectoriesIsRefused() {
		for (String directory : List.of("/", "/var")) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> isolated.execute(ExecutionRequest.builder("true").workingDirectory(Path.of(directory)).build()))
				.withMessageContaining("contains a hidden directory");
		}
	}

	@Test
	void privateDirectoryIsRemovedWhateverTheChildLeftInIt() {
		// An unreadable directory with a name that is not UTF-8, and a tree deeper than PATH_MAX.
		String script = "mkdir \"$(printf 'x\\377')\"; touch \"$(printf 'x\\377')/f\"; chmod 000 \"$(printf 'x\\377')\"; "
				+ "pwd; perl -e 'for (1..30) { mkdir \"d\" x 200 or die; chdir \"d\" x 200 or die } open F, \">deep\" or die'";
		ExecutionResult result = isolated.execute("sh", "-c", script);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(Path.of(result.stdoutText().trim())).satisfiesAnyOf((path) -> assertThat(path).doesNotExist(),
				(path) -> assertThat(path).isEmptyDirectory());
	}

	@Test
	void stdinSupplierThatFailsStillClosesTheChildsStdin() {
		ExecutionResult result = isolated.execute(ExecutionRequest.builder("cat").stdin(() -> {
			throw new IllegalStateException("no input today");
		}).timeout(Duration.ofSeconds(20)).build());
		assertThat(result.timedOut()).isFalse();
		assertThat(result.exitCode()).isZero();
	}

	@Test
	void missingWorkingDirectoryIsReportedWithItsCode(@TempDir Path directory) {
		Path missing = directory.resolve("missing");
		assertThatExceptionOfType(InvalidExecutionRequestException.class)
			.isThrownBy(() -> isolated.execute(ExecutionRequest.builder("true").workingDirectory(missing).build()))
			.withMessageContaining("does not exist")
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
	}

	@Test
	void unisolatedResultsSayTheyWereNotIsolated() {
		ExecutionResult result = unisolated.execute("true");
		assertThat(result.isolation()).isEqualTo(Isolation.NONE);
		assertThat(result.isolation().networkIsolated()).isFalse();
	}

	@Test
	void excessExecutionsFailWithACodeAfterTheQueueTimeout(@TempDir Path directory) {
		SandboxSettings settings = SandboxSettings.builder()
			.maxConcurrent(1)
			.queueTimeout(Duration.ofMillis(200))
			.workDirectory(directory)
			.build();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			String marker = "34" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
			CompletableFuture<ExecutionResult> running = executor.executeAsync(ExecutionRequest.of("sleep", marker));
			await().atMost(Duration.ofSeconds(5)).until(() -> !processesWith(marker).isEmpty());
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class).isThrownBy(() -> executor.execute("true"))
				.withMessageContaining("(maxConcurrent)")
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_concurrency_limit_exceeded"));
			running.cancel(true);
			await().atMost(Duration.ofSeconds(5)).until(() -> processesWith(marker).isEmpty());
		}
	}

	@Test
	void excessExecutionsWaitForAFreeSlot(@TempDir Path directory) {
		SandboxSettings settings = SandboxSettings.builder()
			.maxConcurrent(1)
			.queueTimeout(Duration.ofSeconds(20))
			.workDirectory(directory)
			.build();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			List<CompletableFuture<ExecutionResult>> futures = java.util.stream.IntStream.range(0, 3)
				.mapToObj((i) -> executor.executeAsync(ExecutionRequest.of("sh", "-c", "sleep 0.2; echo " + i)))
				.toList();
			assertThat(futures).allSatisfy((future) -> assertThat(future.join().succeeded()).isTrue());
		}
	}

	/**
	 * Thousands of executions from many threads, with bad requests mixed in, leave the JVM as they
	 * found it: descriptors, threads, working directories and processes.
	 */
	@Test
	void thousandsOfExecutionsFromManyThreadsLeakNothing(@TempDir Path directory) throws Exception {
		SandboxSettings settings = SandboxSettings.builder().maxConcurrent(16).workDirectory(directory).build();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			executor.execute("true");
			await().atMost(Duration.ofSeconds(10)).until(() -> ioThreads() == 0);
			long descriptorsBefore = openDescriptors();
			long threadsBefore = threadsOtherThanReapers();
			int executions = 2000;
			java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newFixedThreadPool(32);
			java.util.concurrent.atomic.AtomicInteger succeeded = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger rejected = new java.util.concurrent.atomic.AtomicInteger();
			List<java.util.concurrent.Future<?>> calls = new java.util.ArrayList<>();
			for (int i = 0; i < executions; i++) {
				int n = i;
				calls.add(callers.submit(() -> {
					try {
						ExecutionResult result = switch (n % 10) {
							case 7 -> executor.execute("no-such-command-" + n);
							case 8 -> executor.execute(ExecutionRequest.builder("true")
								.workingDirectory(directory.resolve("missing-" + n))
								.build());
							case 9 -> executor.execute(ExecutionRequest.builder("sh", "-c", "sleep 5")
								.timeout(Duration.ofMillis(20))
								.build());
							default -> executor.execute("sh", "-c", "echo " + n + "; echo err >&2");
						};
						if (n % 10 == 9 ? result.timedOut() : result.stdoutText().equals(n + "\n")) {
							succeeded.incrementAndGet();
						}
					}
					catch (CommandNotFoundException | InvalidExecutionRequestException ex) {
						rejected.incrementAndGet();
					}
				}));
			}
			for (java.util.concurrent.Future<?> call : calls) {
				call.get(5, java.util.concurrent.TimeUnit.MINUTES);
			}
			callers.shutdown();
			assertThat(succeeded.get()).isEqualTo(executions * 8 / 10);
			assertThat(rejected.get()).isEqualTo(executions * 2 / 10);
			assertThat(ProcessHandle.current().descendants()).isEmpty();
			try (var left = Files.list(directory)) {
				assertThat(left).as("at most one emptied directory per slot is kept")
					.hasSizeLessThanOrEqualTo(16)
					.allSatisfy((kept) -> assertThat(kept).isEmptyDirectory());
			}
			await().atMost(Duration.ofSeconds(10)).pollInSameThread().untilAsserted(() -> {
				assertThat(openDescriptors()).isEqualTo(descriptorsBefore);
				assertThat(threadsOtherThanReapers()).as("threads now: %s", Thread.getAllStackTraces().keySet())
					.isLessThanOrEqualTo(threadsBefore);
			});
		}
		try (var left = Files.list(directory)) {
			assertThat(left).as("closing the executor removes the kept directories").isEmpty();
		}
	}

	private static long openDescriptors() throws IOException {
		try (var descriptors = Files.list(Path.of("/proc/self/fd"))) {
			return descriptors.count();
		}
	}

	/**
	 * The JDK waits for each child on a "process reaper" thread of its own cached pool, which keeps
	 * idle threads for 60 s; they are the JDK's, not ours, and are left out of the count.
	 */
	private static long threadsOtherThanReapers() {
		return Thread.getAllStackTraces().keySet().stream().filter((t) -> !t.getName().equals("process reaper")).count();
	}

	private static long ioThreads() {
		return Thread.getAllStackTraces().keySet().stream().filter((t) -> t.getName().startsWith("cave-sandbox-io-")
				|| t.getName().startsWith("cave-sandbox-async-")).count();
	}

	static List<ProcessHandle> processesWith(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info().commandLine().orElse("").contains(marker))
			.toList();
	}

}
