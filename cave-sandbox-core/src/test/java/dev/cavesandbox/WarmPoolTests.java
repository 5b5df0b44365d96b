package dev.cavesandbox;

import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The pool of warm sandboxes ({@code cave.sandbox.warm.size}) with real sandboxes: a
 * request of the pool's shape runs in a sandbox set up before it came
 * ({@link ExecutionResult#warm()}), each sandbox serves one execution, a request of
 * another shape and any request while the pool is empty take the cold path, and a sandbox
 * that aged, died or whose view changed is discarded, never claimed. No timing is
 * asserted: states are awaited with a bound.
 */
@EnabledOnOs(OS.LINUX)
class WarmPoolTests {

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	@ForEachLinuxMechanism
	void requestOfThePoolsShapeRunsWarmWithItsStdinInputFilesAndEnvironment(MechanismChoice choice,
			@TempDir Path work) {
		try (ProcessIsolatedExecutor executor = pooled(choice, work, 1, (settings) -> settings)) {
			for (int round = 0; round < 2; round++) {
				awaitReady(executor, 1);
				ExecutionResult result = executor
					.execute(ExecutionRequest.builder("/bin/sh", "-c", "cat; cat in.txt; echo \"$GREETING\"")
						.stdin("from stdin\n".getBytes(StandardCharsets.UTF_8))
						.inputFile("in.txt", "from a file\n".getBytes(StandardCharsets.UTF_8))
						.environment("GREETING", "hello")
						.build());
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				assertThat(result.stdoutText()).isEqualTo("from stdin\nfrom a file\nhello\n");
				assertThat(result.warm()).isTrue();
			}
			assertThat(executor.warmPool().hits()).isEqualTo(2);
			assertThat(executor.warmPool().missCount()).isZero();
		}
	}

	/**
	 * One execution per sandbox: the second execution's working directory does not hold
	 * what the first left in its own (an inode number may come back once the first
	 * directory is deleted, so it proves nothing); on the seccomp mechanism of a root
	 * JVM, two command users.
	 */
	@ForEachLinuxMechanism
	void eachWarmSandboxServesOneExecution(MechanismChoice choice, @TempDir Path work) {
		try (ProcessIsolatedExecutor executor = pooled(choice, work, 1, (settings) -> settings)) {
			awaitReady(executor, 1);
			ExecutionResult first = executor.execute("/bin/sh", "-c", "echo left > left.txt && ls && id -u");
			awaitReady(executor, 1);
			ExecutionResult second = executor.execute("/bin/sh", "-c", "ls; echo end; id -u");
			assertThat(first.warm()).isTrue();
			assertThat(second.warm()).isTrue();
			List<String> one = first.stdoutText().lines().toList();
			List<String> two = second.stdoutText().lines().toList();
			assertThat(one).as(first.stderrText()).first().isEqualTo("left.txt");
			assertThat(two).as("the second working directory is empty: %s", second.stderrText())
				.first()
				.isEqualTo("end");
			if (choice == MechanismChoice.SECCOMP && "root".equals(System.getProperty("user.name"))) {
				assertThat(one.get(1)).as("the command user").isNotEqualTo(two.get(1));
			}
		}
	}

	/**
	 * The replacement of a sandbox taken waits for its execution's end at most a short
	 * delay: while a command still waits for its stdin, the pool is full again, and the
	 * command then ends as it would have.
	 */
	@Test
	void aLongExecutionDoesNotKeepItsReplacementWaiting(@TempDir Path work) throws Exception {
		try (ProcessIsolatedExecutor executor = pooled(MechanismChoice.BWRAP, work, 1, (settings) -> settings);
				PipedOutputStream feed = new PipedOutputStream()) {
			awaitReady(executor, 1);
			PipedInputStream stdin = new PipedInputStream(feed);
			CompletableFuture<ExecutionResult> running = CompletableFuture.supplyAsync(() -> executor.execute(
					ExecutionRequest.builder("/bin/sh", "-c", "read line; echo \"$line\"").stdin(() -> stdin).build()));
			await().atMost(PATIENCE).until(() -> executor.warmPool().hits() == 1);
			awaitReady(executor, 1);
			assertThat(running).as("the command still waits for its stdin").isNotDone();
			feed.write("fed\n".getBytes(StandardCharsets.UTF_8));
			feed.close();
			ExecutionResult result = running.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			assertThat(result.warm()).isTrue();
			assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("fed\n");
		}
	}

	/**
	 * A command of a mechanism without a mount namespace opens the home of the private
	 * directories ({@code chmod 755 ..}) while a second warm sandbox waits, prepared
	 * before that: its claim checks the home again, as every cold execution does, and
	 * makes it owner-only (seen in a run of the break-in suites with a pool: the next
	 * warm execution left it open).
	 */
	@ForEachLinuxMechanism
	void aHomeOpenedSinceASandboxWasPreparedIsOwnerOnlyAgainAtItsClaim(MechanismChoice choice, @TempDir Path work)
			throws IOException {
		try (ProcessIsolatedExecutor executor = pooled(choice, work, 2, (settings) -> settings.commandUser(0))) {
			awaitReady(executor, 2);
			Path home = work.resolve("cave-sandbox-0");
			String kept = modeOf(home);
			assertThat(kept).as("owner-only, searchable for the command users on seccomp").startsWith("rwx---");
			ExecutionResult opening = executor.execute("sh", "-c", "chmod 755 .. 2>/dev/null; true");
			ExecutionResult next = executor.execute("sh", "-c", "echo next");
			assertThat(opening.warm()).isTrue();
			assertThat(next.warm()).as("prepared before the chmod").isTrue();
			assertThat(next.stdoutText()).as(next.stderrText()).isEqualTo("next\n");
			assertThat(modeOf(home)).isEqualTo(kept);
		}
	}

	private static String modeOf(Path file) throws IOException {
		return PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS));
	}

	@Test
	void requestOfAnotherShapeTakesTheColdPathWithItsReason(@TempDir Path work, @TempDir Path listed) {
		try (ProcessIsolatedExecutor executor = pooled(MechanismChoice.BWRAP, work, 1, (settings) -> settings)) {
			awaitReady(executor, 1);
			List<ExecutionRequest> others = List.of(ExecutionRequest.builder("true").workingDirectory(listed).build(),
					ExecutionRequest.builder("true").readablePaths(listed).build(),
					ExecutionRequest.builder("true").allowedHosts("example.com").build(),
					ExecutionRequest.builder("true").loopback(true).build(),
					ExecutionRequest.builder("true").limits(ResourceLimits.builder().openFiles(64).build()).build());
			for (ExecutionRequest request : others) {
				ExecutionResult result = executor.execute(request);
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				assertThat(result.warm()).isFalse();
			}
			WarmPoolState state = executor.warmPool();
			assertThat(state.misses()).containsEntry(WarmPoolState.Miss.WORKING_DIRECTORY, 1L)
				.containsEntry(WarmPoolState.Miss.LISTED_PATHS, 1L)
				.containsEntry(WarmPoolState.Miss.EGRESS, 1L)
				.containsEntry(WarmPoolState.Miss.LOOPBACK, 1L)
				.containsEntry(WarmPoolState.Miss.LIMITS, 1L);
			assertThat(state.hits()).isZero();
			assertThat(state.ready()).as("the warm sandbox still waits").isEqualTo(1);
		}
	}

	@Test
	void sandboxOlderThanTheMaxAgeIsDiscardedAndReplaced(@TempDir Path work) {
		try (ProcessIsolatedExecutor executor = pooled(MechanismChoice.SECCOMP, work, 1,
				(settings) -> settings.warm(new WarmPoolSettings(1, Duration.ofSeconds(1))))) {
			await().atMost(PATIENCE).until(() -> executor.warmPool().discards().get(WarmPoolState.Discard.AGE) > 0);
			awaitReady(executor, 1);
			ExecutionResult result = executor.execute("true");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
		}
	}

	/**
	 * A waiting sandbox killed from outside (SIGKILL to its {@code outer}) is found dead
	 * at the claim and discarded; the execution takes the cold path and succeeds.
	 */
	@ForEachLinuxMechanism
	void sandboxKilledWhileWaitingIsDiscardedAndTheExecutionRunsCold(MechanismChoice choice, @TempDir Path work) {
		try (ProcessIsolatedExecutor executor = pooled(choice, work, 1, (settings) -> settings)) {
			awaitReady(executor, 1);
			List<ProcessHandle> waiting = waitingSandboxes(work);
			assertThat(waiting).hasSize(1);
			waiting.get(0).destroyForcibly();
			await().atMost(PATIENCE).until(() -> !waiting.get(0).isAlive());
			ExecutionResult result = executor.execute("/bin/sh", "-c", "echo ran");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo("ran\n");
			assertThat(result.warm()).isFalse();
			assertThat(executor.warmPool().discards()).containsEntry(WarmPoolState.Discard.DIED, 1L);
		}
	}

	/**
	 * A listed file renamed over while a sandbox waits (as {@code passwd} renames over
	 * {@code /etc/shadow}): the sandbox, whose view holds the old file, is discarded, and
	 * the execution sees the new one.
	 */
	@Test
	void sandboxWhoseViewChangedIsDiscardedAndTheExecutionRunsColdWithTheNewView(@TempDir Path work,
			@TempDir Path listed) throws IOException {
		Path file = Files.writeString(listed.resolve("listed.txt"), "old\n");
		try (ProcessIsolatedExecutor executor = pooled(MechanismChoice.BWRAP, work, 1,
				(settings) -> settings.readablePaths(List.of(file)))) {
			awaitReady(executor, 1);
			Path replacement = Files.writeString(listed.resolve("listed.txt.new"), "new\n");
			Files.move(replacement, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			ExecutionResult result = executor.execute("cat", file.toString());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			// Cold, or a sandbox the pool prepared after the rename while the stale one
			// was
			// being discarded (the claim wakes the preparer): either sees the new file.
			assertThat(result.stdoutText()).isEqualTo("new\n");
			assertThat(executor.warmPool().discards()).containsEntry(WarmPoolState.Discard.VIEW_CHANGED, 1L);
		}
	}

	/** The executor's close leaves no process of a waiting sandbox. */
	@ForEachLinuxMechanism
	void closeLeavesNoProcessOfAWaitingSandbox(MechanismChoice choice, @TempDir Path work) {
		Set<ProcessHandle> seen;
		ProcessIsolatedExecutor executor = pooled(choice, work, 2, (settings) -> settings);
		try {
			awaitReady(executor, 2);
			seen = waitingSandboxes(work).stream()
				.flatMap((outer) -> Stream.concat(Stream.of(outer), outer.descendants()))
				.collect(Collectors.toSet());
			assertThat(seen).hasSizeGreaterThanOrEqualTo(4);
		}
		finally {
			executor.close();
		}
		List<ProcessHandle> alive = seen.stream().filter(WarmPoolTests::running).toList();
		assertThat(alive).as(describe(alive)).isEmpty();
		List<ProcessHandle> left = processesNaming(work);
		assertThat(left).as(describe(left)).isEmpty();
		assertThat(executor.warmPool().discards()).containsEntry(WarmPoolState.Discard.CLOSED, 2L);
	}

	/**
	 * An executor left unclosed and no longer reachable gets its waiting sandboxes
	 * discarded (a {@link java.lang.ref.Cleaner}): they would otherwise hold their
	 * processes and command users until the JVM ends.
	 */
	@ForEachLinuxMechanism
	void anUnreachableUnclosedExecutorsWaitingSandboxesAreDiscarded(MechanismChoice choice, @TempDir Path work) {
		int waiting = leaveUnclosedWithWaitingSandboxes(choice, work);
		assertThat(waiting).isEqualTo(2);
		await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> {
			System.gc();
			return processesNaming(work).isEmpty();
		});
	}

	/** The number of waiting sandboxes of the executor, which is left unclosed. */
	private static int leaveUnclosedWithWaitingSandboxes(MechanismChoice choice, Path work) {
		ProcessIsolatedExecutor executor = pooled(choice, work, 2, (settings) -> settings);
		awaitReady(executor, 2);
		return waitingSandboxes(work).size();
	}

	/**
	 * Preparations that fail (here: no sandbox can report ready within a probe timeout of
	 * one millisecond) suspend the pool after three in a row, with the reason in its
	 * state; executions carry on cold.
	 */
	@Test
	void threeFailedPreparationsSuspendThePoolAndExecutionsRunCold(@TempDir Path work) {
		try (ProcessIsolatedExecutor executor = pooled(MechanismChoice.SECCOMP, work, 1,
				(settings) -> settings.probeTimeout(Duration.ofMillis(1)))) {
			await().atMost(PATIENCE).until(() -> executor.warmPool().suspended() != null);
			WarmPoolState state = executor.warmPool();
			assertThat(state.suspended()).contains("3 preparations in a row failed");
			assertThat(state.discards().get(WarmPoolState.Discard.NOT_READY)).isGreaterThanOrEqualTo(3);
			ExecutionResult result = executor.execute("/bin/sh", "-c", "echo cold");
			assertThat(result.stdoutText()).isEqualTo("cold\n");
			assertThat(result.warm()).isFalse();
			assertThat(executor.warmPool().misses().get(WarmPoolState.Miss.EMPTY)).isGreaterThanOrEqualTo(1);
		}
	}

	/**
	 * An executor of the mechanism with a pool of the given size in its own work
	 * directory; the probe verifies the settings without the pool (and with the
	 * customizer's probe timeout left at its default).
	 */
	static ProcessIsolatedExecutor pooled(MechanismChoice choice, Path work, int size,
			UnaryOperator<SandboxSettings.Builder> customizer) {
		SandboxSettings settings = customizer
			.apply(SandboxSettings.builder()
				.mechanism(choice)
				.timeout(PATIENCE)
				.workDirectory(work)
				.warm(new WarmPoolSettings(size, Duration.ofSeconds(60))))
			.build();
		SandboxSettings probed = SandboxSettings.builder()
			.mechanism(choice)
			.timeout(PATIENCE)
			.workDirectory(work)
			.readablePaths(settings.filesystem().readablePaths())
			.build();
		return ProcessIsolatedExecutor.isolated(settings, LinuxMechanisms.verified(probed));
	}

	static void awaitReady(ProcessIsolatedExecutor executor, int ready) {
		await().atMost(PATIENCE).until(() -> executor.warmPool().ready() == ready);
	}

	/**
	 * The JVM's children that are the {@code outer} of a sandbox in the work directory.
	 */
	static List<ProcessHandle> waitingSandboxes(Path work) {
		long jvm = ProcessHandle.current().pid();
		return processesNaming(work).stream()
			.filter((process) -> process.parent().map(ProcessHandle::pid).orElse(0L) == jvm)
			.toList();
	}

	/** Every running process whose command line names the work directory, from /proc. */
	static List<ProcessHandle> processesNaming(Path work) {
		byte[] name = work.toString().getBytes(StandardCharsets.UTF_8);
		try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
			return entries.filter((entry) -> entry.getFileName().toString().matches("[0-9]+"))
				.filter((entry) -> contains(read(entry.resolve("cmdline")), name))
				.map((entry) -> ProcessHandle.of(Long.parseLong(entry.getFileName().toString())))
				.flatMap(Optional::stream)
				.filter(WarmPoolTests::running)
				.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Whether the process exists and is not a zombie that its new parent has not reaped.
	 */
	static boolean running(ProcessHandle process) {
		String stat = new String(read(Path.of("/proc", String.valueOf(process.pid()), "stat")), StandardCharsets.UTF_8);
		int end = stat.lastIndexOf(')');
		return end > 0 && stat.length() > end + 2 && stat.charAt(end + 2) != 'Z' && stat.charAt(end + 2) != 'X';
	}

	private static String describe(Collection<ProcessHandle> processes) {
		return processes.stream()
			.map((process) -> new String(read(Path.of("/proc", String.valueOf(process.pid()), "stat")),
					StandardCharsets.UTF_8))
			.collect(Collectors.joining("\n"));
	}

	static byte[] read(Path file) {
		try {
			return Files.readAllBytes(file);
		}
		catch (IOException ex) {
			return new byte[0];
		}
	}

	private static boolean contains(byte[] haystack, byte[] needle) {
		for (int i = 0; i + needle.length <= haystack.length; i++) {
			if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
				return true;
			}
		}
		return false;
	}

}
