package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Red team of the warm pool (issue 30, design "warm-sandboxes.md" section 2, build plan
 * step 8): an attacker execution A (long-running, {@code warm-attacker.pl}) beside warm
 * sandboxes B of the same executor, on every Linux mechanism, as this (root) JVM. A tries
 * to write into B's working and shared-memory directories (the home listed, every
 * directory it finds, {@code /proc/PID/cwd}), to open B's {@code /proc/PID/fd/0},
 * {@code environ}, {@code mem} and {@code cwd}, to stop and kill B's waiting processes by
 * pid and by {@code kill(-1)}, to read B's secret input file and environment while B is
 * claimed, and to leave a daemon that B would see; it forges the ready marker and a frame
 * on its own stdin and stdout. Then: argv over ARG_MAX, a waiting launcher killed around
 * its claim, and a JVM killed with sandboxes waiting. A test that passes is an attempt
 * the pool withstood; a {@code @Disabled("finding: ...")} test is one that succeeded.
 */
@Tag("slow")
@EnabledOnOs(OS.LINUX)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class WarmBreakInTests {

	private static final Duration PATIENCE = Duration.ofSeconds(120);

	private static final String SECRET = "sk-warm-secret-"
			+ HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());

	/**
	 * A beside two waiting sandboxes B: whatever A manages (its report lists every
	 * success), each B claimed afterwards runs exactly its own request in an empty
	 * working directory and an empty shared-memory directory, sees no process of A's, and
	 * A reads none of its secrets while it runs.
	 */
	@ForEachLinuxMechanism
	void attackerBesideWarmSandboxesReachesNothingOfThem(MechanismChoice choice, @TempDir Path work) throws Exception {
		String mark = "warmA" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 2, longLived(2))) {
			WarmPoolTests.awaitReady(executor, 2);
			SandboxedProcess attacker = executor
				.start(ExecutionRequest.builder("perl", "warm-attacker.pl", mark, work.toString())
					.inputFile("warm-attacker.pl", resource("warm-attacker.pl"))
					.build());
			try {
				BufferedReader report = new BufferedReader(
						new InputStreamReader(attacker.stdout(), StandardCharsets.UTF_8));
				OutputStream commands = attacker.stdin();
				// A starts after the executor spawned it, so the pool may be refilling.
				WarmPoolTests.awaitReady(executor, 2);
				Map<Long, String> protectedProcesses = WarmAttackMain.protectedProcesses(work);
				assertThat(protectedProcesses).hasSizeGreaterThan(2);
				List<String> probe = command(commands, report,
						"probe " + protectedProcesses.keySet()
							.stream()
							.filter((pid) -> pid != ProcessHandle.current().pid())
							.map(String::valueOf)
							.collect(Collectors.joining(" ")));
				String described = String.join("\n", probe);
				assertThat(reached(probe, protectedProcesses)).as(described).isEmpty();
				// What A wrote inside its own sandbox (a private /tmp) does not count:
				// only the host's.
				assertThat(plantedOnTheHost(work, mark)).as(described).isEmpty();
				assertThat(probe).as(described)
					.noneMatch((line) -> line.startsWith("CWDWRITE") || line.startsWith("FD0")
							|| line.startsWith("SIGNALLED"));
				// Each B that waited through the probe: exactly its request, nothing
				// planted.
				for (int round = 0; round < 2; round++) {
					ExecutionResult result = executor.execute(WarmAttackMain.inspection());
					assertThat(result.timedOut()).as("claimed half-dead: %s", result.stderrText()).isFalse();
					assertThat(result.exitCode()).as(result.stderrText()).isZero();
					assertThat(result.stdoutText()).isEqualTo("in.txt\n---\n---\n0\nmine\n");
					if (round == 0) {
						assertThat(result.warm()).as("a sandbox that waited through the probe").isTrue();
					}
				}
				// B claimed with a secret input file and environment while A reads all it
				// can.
				WarmPoolTests.awaitReady(executor, 2);
				commands.write(("watch " + SECRET + " 8\n").getBytes(StandardCharsets.UTF_8));
				commands.flush();
				ExecutionResult secret = executor.execute(WarmAttackMain.secretClaim(SECRET));
				assertThat(secret.exitCode()).as(secret.stderrText()).isZero();
				assertThat(secret.stdoutText()).isEqualTo(SECRET + SECRET + "\n");
				assertThat(secret.warm()).isTrue();
				List<String> watch = WarmAttackMain.until(report, "DONE");
				assertThat(watch).as(String.join("\n", watch)).noneMatch((line) -> line.startsWith("LEAK"));
				// A leaves a daemon and ends; B lists the processes it can see.
				assertThat(command(commands, report, "daemon")).contains("daemon left");
				commands.close();
				assertThat(attacker.onExit().get(PATIENCE.toSeconds(), TimeUnit.SECONDS).isAlive()).isFalse();
				ExecutionResult listing = executor.execute("/bin/sh", "-c",
						"for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done");
				assertThat(listing.exitCode()).as(listing.stderrText()).isZero();
				assertThat(listing.stdoutText()).as("B sees a process of A").doesNotContain(mark);
				assertThat(WarmPoolTests.processesNaming(Path.of(mark))).as("A's daemon outlived A").isEmpty();
			}
			finally {
				attacker.close();
				removePlanted(mark);
			}
		}
	}

	/**
	 * A execution that writes the started marker, the ready marker and a whole frame on
	 * its stdout, and a frame and the marker into its own stdin (reopened for writing
	 * through /proc), warm and cold: its result is exactly what it wrote, and the next
	 * warm sandbox runs its own request.
	 */
	@ForEachLinuxMechanism
	void forgedMarkerAndFrameOnItsOwnStreamsAreJustOutput(MechanismChoice choice, @TempDir Path work,
			@TempDir Path own) {
		String script = "printf 'CAVE-RUNCAVE-RDYCAVEWARM'; printf 'CAVEWARMxxxxxxxxCAVE-RDY' > /proc/self/fd/0 2>/dev/null; "
				+ "echo \" $?\"; head -c 24 <&0; echo";
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 1, longLived(1))) {
			WarmPoolTests.awaitReady(executor, 1);
			ExecutionResult warm = executor.execute(ExecutionRequest.builder("/bin/sh", "-c", script)
				.stdin("CAVE-RDY".getBytes(StandardCharsets.UTF_8))
				.build());
			ExecutionResult cold = executor.execute(ExecutionRequest.builder("/bin/sh", "-c", script)
				.stdin("CAVE-RDY".getBytes(StandardCharsets.UTF_8))
				.workingDirectory(own)
				.build());
			for (ExecutionResult result : List.of(warm, cold)) {
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				assertThat(result.stdoutText()).startsWith("CAVE-RUNCAVE-RDYCAVEWARM ").contains("CAVE-RDY");
			}
			assertThat(warm.warm()).isTrue();
			assertThat(cold.warm()).isFalse();
			WarmPoolTests.awaitReady(executor, 1);
			ExecutionResult next = executor.execute("/bin/sh", "-c", "echo next");
			assertThat(next.stdoutText()).isEqualTo("next\n");
			assertThat(next.warm()).isTrue();
		}
	}

	/**
	 * argv above the frame's limit is refused with the launch exception, and the sandbox
	 * it would have taken is not run (the next execution gets a fresh one).
	 */
	@Test
	void argvAboveTheFrameLimitIsRefusedAndNoSandboxRunsIt(@TempDir Path work) {
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(MechanismChoice.BWRAP, work, 1, longLived(1))) {
			WarmPoolTests.awaitReady(executor, 1);
			List<String> argv = new ArrayList<>(List.of("/bin/echo"));
			argv.addAll(Collections.nCopies(40, "a".repeat(64 * 1024)));
			Throwable refused = catchThrowable(() -> executor.execute(ExecutionRequest.builder(argv).build()));
			assertThat(refused).isInstanceOf(SandboxLaunchException.class)
				.hasMessageContaining("Argument list too long");
			WarmPoolTests.awaitReady(executor, 1);
			ExecutionResult next = executor.execute("/bin/sh", "-c", "echo next");
			assertThat(next.stdoutText()).isEqualTo("next\n");
		}
	}

	/**
	 * argv within the frame's limit but over the kernel's ARG_MAX (which counts a pointer
	 * per string: 300,000 one-byte arguments are 600 KB of strings but 2.4 MB of
	 * pointers) is claimed and fails in the sandbox's execve(2) with exit 126, where a
	 * spawn before the hand-over was refused with {@code E2BIG} before anything ran.
	 */

	@Test
	void argvOverArgMaxByCountIsRefusedBeforeTheClaim(@TempDir Path work) {
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(MechanismChoice.BWRAP, work, 1, longLived(1))) {
			WarmPoolTests.awaitReady(executor, 1);
			List<String> argv = new ArrayList<>(List.of("/bin/true"));
			argv.addAll(Collections.nCopies(1_000_000, "a"));
			AtomicReference<ExecutionResult> result = new AtomicReference<>();
			Throwable refused = catchThrowable(
					() -> result.set(executor.execute(ExecutionRequest.builder(argv).build())));
			assertThat(refused).as("refused before the claim, not run: %s", describe(result.get()))
				.isInstanceOf(SandboxLaunchException.class);
			assertThat(executor.warmPool().hits()).as("no warm sandbox was claimed").isZero();
		}
	}

	/**
	 * The wrapper ({@code outer}, the JVM's child) of a warm sandbox killed after the
	 * pool gave it to a request and before its frame was written (the claim writes a
	 * large input file first): the request must fail with the launch exception or run
	 * cold, never report a command result the command did not produce.
	 */
	@ForEachLinuxMechanism
	void waitingWrapperKilledAroundTheClaimNeverGivesAResult(MechanismChoice choice, @TempDir Path work)
			throws Exception {
		killedAroundTheClaim(choice, work, true);
	}

	/**
	 * The process that waits in the hand-over (the deepest of the sandbox) killed around
	 * the claim: outer's set-up failure (125), reported as the launch exception.
	 */
	@ForEachLinuxMechanism
	void waitingLauncherKilledAroundTheClaimFailsWithTheLaunchException(MechanismChoice choice, @TempDir Path work)
			throws Exception {
		killedAroundTheClaim(choice, work, false);
	}

	private void killedAroundTheClaim(MechanismChoice choice, Path work, boolean wrapper) throws Exception {
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 1, longLived(1))) {
			WarmPoolTests.awaitReady(executor, 1);
			List<ProcessHandle> outers = WarmPoolTests.waitingSandboxes(work);
			assertThat(outers).hasSize(1);
			await().atMost(PATIENCE).until(() -> outers.get(0).descendants().count() > 0);
			ProcessHandle victim = wrapper ? outers.get(0) : deepestNow(outers.get(0));
			List<ProcessHandle> sandbox = Stream.concat(Stream.of(outers.get(0)), outers.get(0).descendants()).toList();
			AtomicReference<Boolean> killed = new AtomicReference<>(false);
			Thread killer = new Thread(() -> {
				long deadline = System.nanoTime() + PATIENCE.toNanos();
				while (executor.warmPool().hits() == 0 && System.nanoTime() < deadline) {
					Thread.onSpinWait();
				}
				killed.set(victim.destroyForcibly());
			});
			killer.start();
			byte[] large = new byte[256 * 1024 * 1024];
			Throwable failure = catchThrowable(() -> {
				ExecutionResult result = executor.execute(ExecutionRequest.builder("/bin/sh", "-c", "echo ran")
					.inputFile("large.bin", large)
					.timeout(Duration.ofSeconds(60))
					.build());
				assertThat(result.timedOut()).as("hang").isFalse();
				assertThat(result.exitCode()).as("a result the command did not produce: %s", result.stderrText())
					.isZero();
				assertThat(result.stdoutText()).isEqualTo("ran\n");
			});
			killer.join();
			assertThat(killed.get()).as("the killer fired").isTrue();
			if (failure != null) {
				assertThat(failure).isInstanceOf(SandboxLaunchException.class);
				if (wrapper) {
					assertThat(failure).hasMessageContaining("before the command started");
				}
			}
			// Nothing of the killed sandbox is left running.
			await().atMost(PATIENCE).until(() -> sandbox.stream().noneMatch(WarmPoolTests::running));
			ExecutionResult after = executor.execute("/bin/sh", "-c", "echo after");
			assertThat(after.stdoutText()).isEqualTo("after\n");
		}
		// The close's SIGKILLs may still be on their way.
		await().atMost(PATIENCE).until(() -> WarmPoolTests.processesNaming(work).isEmpty());
	}

	/**
	 * Under load (a busy thread per core), two callers claim sandboxes that age out every
	 * 300 ms while a third thread SIGKILLs the launcher waiting in the hand-over of
	 * whatever sandbox waits (its deepest process, while it is blocked in read(2) of fd
	 * 0: the launcher before its frame, warm or cold): every request either runs exactly
	 * once with its own output, or fails with the launch exception; none hangs, none
	 * reports a result its command did not produce.
	 */
	@ForEachLinuxMechanism
	void claimsRacingAgeAndKilledLaunchersUnderLoadRunOnceOrFailCleanly(MechanismChoice choice, @TempDir Path work)
			throws Exception {
		List<String> wrong = Collections.synchronizedList(new ArrayList<>());
		List<String> outcomes = Collections.synchronizedList(new ArrayList<>());
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 2,
				(settings) -> settings.warm(new WarmPoolSettings(2, Duration.ofMillis(300))));
				CpuHog hog = CpuHog.start()) {
			java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
			Thread killer = new Thread(() -> {
				while (running.get()) {
					for (ProcessHandle outer : WarmPoolTests.waitingSandboxes(work)) {
						ProcessHandle deepest = deepestNow(outer);
						if (deepest != outer && waitingInTheHandover(deepest)) {
							deepest.destroyForcibly();
						}
					}
					try {
						Thread.sleep(ThreadLocalRandom.current().nextInt(1, 40));
					}
					catch (InterruptedException ex) {
						return;
					}
				}
			});
			killer.start();
			List<Thread> callers = new ArrayList<>();
			for (int caller = 0; caller < 2; caller++) {
				int id = caller;
				Thread thread = new Thread(() -> {
					for (int round = 0; round < 12; round++) {
						String token = "run-" + id + "-" + round;
						try {
							ExecutionResult result = executor.execute(ExecutionRequest.builder("/bin/sh", "-c", "cat")
								.stdin(token.getBytes(StandardCharsets.UTF_8))
								.timeout(Duration.ofSeconds(60))
								.build());
							outcomes.add(result.exitCode() + (result.warm() ? " warm" : " cold"));
							if (result.timedOut() || result.exitCode() != 0 || !result.stdoutText().equals(token)) {
								wrong.add(token + ": exit " + result.exitCode() + ", timed out " + result.timedOut()
										+ ", warm " + result.warm() + ", stdout '" + result.stdoutText() + "', stderr '"
										+ result.stderrText() + "'");
							}
						}
						catch (SandboxLaunchException ex) {
							outcomes.add("launch exception");
						}
						catch (RuntimeException ex) {
							wrong.add(token + ": " + ex);
						}
					}
				});
				callers.add(thread);
				thread.start();
			}
			for (Thread thread : callers) {
				thread.join();
			}
			running.set(false);
			killer.join();
			outcomes.add(executor.warmPool().toString());
		}
		assertThat(wrong).as(String.join("\n", outcomes)).isEmpty();
		// The close's SIGKILLs may still be on their way.
		await().atMost(PATIENCE).until(() -> WarmPoolTests.processesNaming(work).isEmpty());
	}

	/**
	 * What a warm sandbox spawned is the command line of a cold launch of the same
	 * executor (the one whose shape the probe verified), but for the paths and the uid of
	 * each execution: same wrappers, same options.
	 */
	@ForEachLinuxMechanism
	void warmSandboxSpawnsTheColdCommandLine(MechanismChoice choice, @TempDir Path work) throws Exception {
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 1, longLived(1))) {
			WarmPoolTests.awaitReady(executor, 1);
			List<ProcessHandle> waiting = WarmPoolTests.waitingSandboxes(work);
			assertThat(waiting).hasSize(1);
			List<String> warm = treeCommandLines(waiting.get(0), work);
			SandboxedProcess cold = executor.start(ExecutionRequest.of("sleep", "60"));
			try {
				await().atMost(PATIENCE)
					.until(() -> WarmPoolTests.waitingSandboxes(work)
						.stream()
						.anyMatch((outer) -> outer.descendants()
							.anyMatch((process) -> WarmAttackMain.commandLine(process.pid()).startsWith("sleep"))));
				ProcessHandle coldOuter = WarmPoolTests.waitingSandboxes(work)
					.stream()
					.filter((outer) -> outer.descendants()
						.anyMatch((process) -> WarmAttackMain.commandLine(process.pid()).startsWith("sleep")))
					.findFirst()
					.orElseThrow();
				// The verified command line: what outer runs; the rest follows from it.
				assertThat(treeCommandLines(coldOuter, work).get(0)).isEqualTo(warm.get(0));
			}
			finally {
				cold.close();
			}
		}
	}

	/**
	 * The command lines of outer and its descendants, normalised: paths and uids of one
	 * execution.
	 */
	private static List<String> treeCommandLines(ProcessHandle outer, Path work) {
		return Stream.concat(Stream.of(outer), outer.descendants())
			.map((process) -> WarmAttackMain.commandLine(process.pid())
				.replaceAll(java.util.regex.Pattern.quote(work.toString()) + "/[^ :=,]*", "<dir>")
				.replaceAll("\\b6[0-9]{4}\\b", "<uid>"))
			.toList();
	}

	private static ProcessHandle deepestNow(ProcessHandle outer) {
		ProcessHandle deepest = outer;
		while (true) {
			Optional<ProcessHandle> child = deepest.children().reduce((first, second) -> second);
			if (child.isEmpty()) {
				return deepest;
			}
			deepest = child.get();
		}
	}

	/**
	 * A JVM killed (SIGKILL) with two sandboxes waiting leaves no process of them.
	 */
	@ForEachLinuxMechanism
	void killedJvmLeavesNoWaitingSandbox(MechanismChoice choice, @TempDir Path work) throws Exception {
		Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), WarmPoolHolderMain.class.getName(), choice.name(),
				work.toString())
			.redirectErrorStream(true)
			.start();
		List<ProcessHandle> seen;
		try {
			BufferedReader output = new BufferedReader(
					new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8));
			List<String> lines = WarmAttackMain.until(output, "READY");
			assertThat(lines).as(String.join("\n", lines)).contains("READY");
			seen = WarmPoolTests.processesNaming(work)
				.stream()
				.flatMap((process) -> Stream.concat(Stream.of(process), process.descendants()))
				.distinct()
				.toList();
			assertThat(seen).hasSizeGreaterThanOrEqualTo(4);
		}
		finally {
			jvm.destroyForcibly();
			assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
		}
		await().atMost(PATIENCE).until(() -> seen.stream().noneMatch(ProcessHandle::isAlive));
		// The close's SIGKILLs may still be on their way.
		await().atMost(PATIENCE).until(() -> WarmPoolTests.processesNaming(work).isEmpty());
	}

	/**
	 * The same attacker and warm sandboxes in a JVM of nobody ({@link WarmAttackMain}):
	 * on the mechanisms without a user of their own per execution, A and B run as the
	 * JVM's uid, and only the launcher's non-dumpable state, Landlock's scopes and the
	 * namespaces keep them apart.
	 */
	@ForEachLinuxMechanism
	void nonRootJvmsAttackerBesideWarmSandboxesReachesNothingOfThem(MechanismChoice choice, @TempDir Path directory)
			throws Exception {
		Files.setPosixFilePermissions(directory, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
		String classPath = ContainerJvm.readableClassPath(Files.createDirectory(directory.resolve("classpath")));
		Path work = Files.createDirectory(directory.resolve("work"));
		NobodyCommandLines.giveToNobody(work);
		String mark = "warmA" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
		ProcessBuilder builder = new ProcessBuilder(
				NobodyCommandLines.asNobody(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
						"-cp", classPath, WarmAttackMain.class.getName(), choice.name(), work.toString())));
		builder.directory(work.toFile()).redirectErrorStream(true);
		// Not on the JVM's command line, which every command of these mechanisms reads.
		builder.environment().put(WarmAttackMain.MARK_VARIABLE, mark);
		builder.environment().put(WarmAttackMain.SECRET_VARIABLE, SECRET);
		Process jvm = builder.start();
		CompletableFuture.delayedExecutor(5, TimeUnit.MINUTES).execute(jvm::destroyForcibly);
		List<String> lines;
		try {
			jvm.getOutputStream().close();
			lines = WarmAttackMain
				.until(new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8)), "END");
		}
		finally {
			jvm.destroyForcibly();
			jvm.waitFor(60, TimeUnit.SECONDS);
			removePlanted(mark);
		}
		String described = String.join("\n", lines);
		assertThat(lines).as(described).contains("END").anyMatch((line) -> line.startsWith("VERDICT true"));
		Map<Long, String> protectedProcesses = new java.util.HashMap<>();
		List<String> probe = new ArrayList<>();
		for (String line : lines) {
			if (line.startsWith("PROTECTED ")) {
				String[] fields = line.split(" ", 3);
				protectedProcesses.put(Long.parseLong(fields[1]), (fields.length > 2) ? fields[2] : "");
			}
			else if (line.startsWith("PROBE ")) {
				probe.add(line.substring("PROBE ".length()));
			}
		}
		assertThat(protectedProcesses).as(described).hasSizeGreaterThan(2);
		assertThat(reached(probe, protectedProcesses)).as(described).isEmpty();
		assertThat(plantedOnTheHost(work, mark)).as(described).isEmpty();
		assertThat(probe).as(described)
			.noneMatch((line) -> line.startsWith("CWDWRITE") || line.startsWith("FD0") || line.startsWith("SIGNALLED"));
		assertThat(lines).as(described)
			.contains("B 0 true false in.txt|---|---|0|mine| ", "SECRET 0 true " + SECRET + SECRET + "|",
					"LISTING 0 false", "SURVIVORS 0")
			.noneMatch((line) -> line.startsWith("WATCH LEAK"));
		assertThat(lines).as(described)
			.filteredOn((line) -> line.startsWith("B "))
			.hasSize(2)
			.allMatch((line) -> line.matches("B 0 (true|false) false in\\.txt\\|---\\|---\\|0\\|mine\\| "));
	}

	/**
	 * Files and directories named for A's mark on the host, outside A's own working
	 * directory.
	 */
	private static List<Path> plantedOnTheHost(Path work, String mark) throws IOException {
		List<Path> planted = new ArrayList<>();
		for (Path root : List.of(work, Path.of("/tmp"), Path.of("/dev/shm"), Path.of("/var/tmp"))) {
			try (Stream<Path> files = Files.find(root, root.equals(work) ? 6 : 1,
					(path, attributes) -> path.getFileName().toString().contains(mark))) {
				files.filter((path) -> !Files.exists(path.resolveSibling("warm-attacker.pl"))).forEach(planted::add);
			}
			catch (UncheckedIOException ex) {
				// a directory that vanished meanwhile
			}
		}
		return planted;
	}

	private static String describe(ExecutionResult result) {
		return (result == null) ? "none"
				: "exit " + result.exitCode() + ", warm " + result.warm() + ", stderr " + result.stderrText();
	}

	/** Sandboxes that wait through a whole attack (five minutes) before they age out. */
	private static UnaryOperator<SandboxSettings.Builder> longLived(int size) {
		return (settings) -> settings.warm(new WarmPoolSettings(size, Duration.ofMinutes(5)));
	}

	/**
	 * Whether the process is blocked in read(2) of its fd 0 (system call 0 on x86-64,
	 * first argument 0): a launcher waiting for its frame.
	 */
	private static boolean waitingInTheHandover(ProcessHandle process) {
		String call = new String(WarmPoolTests.read(Path.of("/proc", String.valueOf(process.pid()), "syscall")),
				StandardCharsets.US_ASCII);
		return call.startsWith("0 0x0 ") && WarmAttackMain.commandLine(process.pid()).contains("--handover");
	}

	/**
	 * Lines of A's report that reached a protected process (same pid, same command line).
	 */
	static List<String> reached(List<String> report, Map<Long, String> protectedProcesses) {
		List<String> reached = new ArrayList<>();
		for (String line : report) {
			String[] fields = line.split(" ", 3);
			if (fields.length < 3 || !fields[1].matches("[0-9]+")) {
				continue;
			}
			String known = protectedProcesses.get(Long.parseLong(fields[1]));
			if (known != null && (known.equals(fields[2]) || fields[0].equals("SIGNALLED"))) {
				reached.add(line);
			}
		}
		return reached;
	}

	private static List<String> command(OutputStream commands, BufferedReader report, String command)
			throws IOException {
		commands.write((command + "\n").getBytes(StandardCharsets.UTF_8));
		commands.flush();
		return WarmAttackMain.until(report, "DONE");
	}

	private static byte[] resource(String name) throws IOException {
		try (InputStream in = WarmBreakInTests.class.getResourceAsStream(name)) {
			assertThat(in).as(name).isNotNull();
			return in.readAllBytes();
		}
	}

	private static void removePlanted(String mark) throws IOException {
		for (String directory : List.of("/tmp", "/dev/shm", "/var/tmp")) {
			try (Stream<Path> entries = Files.list(Path.of(directory))) {
				for (Path entry : entries.filter((path) -> path.getFileName().toString().contains(mark)).toList()) {
					if (Files.isDirectory(entry)) {
						Files.deleteIfExists(entry);
					}
					else {
						Files.deleteIfExists(entry);
					}
				}
			}
		}
	}

}
