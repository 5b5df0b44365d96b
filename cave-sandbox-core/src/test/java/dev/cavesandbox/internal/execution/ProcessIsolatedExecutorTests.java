package dev.cavesandbox.internal.execution;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

import dev.cavesandbox.CaveSandboxException;
import dev.cavesandbox.CommandNotExecutableException;
import dev.cavesandbox.CommandNotFoundException;
import dev.cavesandbox.ConcurrencyLimitExceededException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.NetworkIsolationProbe;
import dev.cavesandbox.NewSession;
import dev.cavesandbox.ResourceLimit;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.SmallTmpfs;
import dev.cavesandbox.VisibleDirectories;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.WorkDirectoryUnusableException;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Real executions on this Linux host, isolated and (as the control that shows each check
 * can fail) unisolated. Network checks touch only listeners that the test opens on
 * loopback.
 */
@EnabledOnOs(OS.LINUX)
public class ProcessIsolatedExecutorTests {

	private static ProcessIsolatedExecutor isolated;

	private static ProcessIsolatedExecutor unisolated;

	private static IsolationCapability capability;

	private static final java.util.Map<MechanismChoice, ProcessIsolatedExecutor> byMechanism = new java.util.concurrent.ConcurrentHashMap<>();

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
		byMechanism.values().forEach(ProcessIsolatedExecutor::close);
	}

	/** An isolated executor of the mechanism, with the settings of {@link #isolated}. */
	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return byMechanism.computeIfAbsent(mechanism, (choice) -> LinuxMechanisms.isolated(choice,
				(settings) -> settings.timeout(Duration.ofSeconds(20)).killGracePeriod(Duration.ofMillis(300))));
	}

	/**
	 * Found by the i10 break-in attempt: a command that writes the launcher's kind of
	 * line on stderr and exits 125 is not taken for a sandbox that was never set up
	 * (which would drop its output and invite a retry of a command that did run): the
	 * launcher's own failure lines end with a token of the execution that the command
	 * never sees.
	 */
	@ForEachLinuxMechanism
	void commandCannotPassItselfOffAsAFailedSetUp(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute("sh", "-c",
				"echo side effect done; echo 'cave-sandbox-launcher: cannot load the seccomp filter' >&2; exit 125");
		assertThat(result.exitCode()).isEqualTo(125);
		assertThat(result.stdoutText()).isEqualTo("side effect done\n");
	}

	/**
	 * Found by the i10 break-in attempt (before the fix): the executor checked the
	 * working directory's real path, then resolved it a second time and handed that
	 * second answer to the launcher, so a command exchanging the directory with a
	 * symbolic link ({@code renameat2(RENAME_EXCHANGE)}) in a loop made concurrent
	 * executions run in the link's target (by hand: the host's {@code /} bound writable,
	 * and a unix socket under {@code /run} reached). Here the link points at a hidden
	 * directory under {@code /tmp} that holds a marker file: no execution may see it. A
	 * mechanism without a mount namespace hides nothing (the marker is readable there by
	 * design): its executions must still run in the directory they asked for, and none
	 * may write into the link's target, which Landlock refuses outside the working
	 * directory.
	 */
	@ForEachLinuxMechanism
	void symbolicLinkExchangedIntoAConcurrentExecutionsWorkingDirectoryNeverUncoversTheHost(MechanismChoice mechanism,
			@TempDir Path directory, @TempDir Path hidden) throws Exception {
		assumeThat(Files.isExecutable(Path.of("/usr/bin/python3"))).as("python3 makes the exchange").isTrue();
		Path base = directory.toRealPath();
		Path shared = Files.createDirectory(base.resolve("a"));
		Path marker = Files.writeString(hidden.resolve("host-marker"), "host");
		boolean hides = LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT);
		Path written = hidden.resolve("written");
		String look = hides ? "if [ -e " + marker + " ]; then echo uncovered; fi"
				: "touch " + written + " && echo uncovered";
		String target = hidden.toRealPath().toString();
		String exchange = """
				ln -s "$1" s && exec python3 -c '
				import ctypes, time
				libc = ctypes.CDLL(None, use_errno=True)
				end = time.time() + 15
				while time.time() < end:
				    libc.renameat2(-100, b"a", -100, b"s", 2)
				'
				""";
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.timeout(Duration.ofSeconds(60)).maxConcurrent(4))) {
			CompletableFuture<ExecutionResult> attacker = CompletableFuture.supplyAsync(
					() -> executor.execute(ExecutionRequest.builder("/bin/sh", "-c", exchange, "attacker", target)
						.workingDirectory(base)
						.build()));
			List<String> uncovered = new ArrayList<>();
			int ran = 0;
			while (!attacker.isDone()) {
				// Sporadic executions, as a service starts them: a hot loop shortens the
				// window between the two resolutions (by hand the race won with pauses).
				Thread.sleep(30);
				try {
					ExecutionResult victim = executor
						.execute(ExecutionRequest.builder("/bin/sh", "-c", "pwd -P; " + look)
							.workingDirectory(shared)
							.build());
					ran++;
					// The directory itself, under its name or under the exchanged one.
					String where = victim.stdoutText().lines().findFirst().orElse("");
					// An empty answer: the wrapper refused (bwrap "Race condition binding
					// dirfd", mount(8) under unshare), the command did not run.
					if (!where.isEmpty() && !where.equals(shared.toString())
							&& !where.equals(base.resolve("s").toString())
							|| victim.stdoutText().contains("uncovered")) {
						uncovered.add(victim.stdoutText().strip().replace('\n', ' '));
					}
				}
				catch (CaveSandboxException ex) {
					// refused: the check or the launcher saw the symbolic link
				}
			}
			assertThat(attacker.get().exitCode()).as(attacker.get().stderrText()).isZero();
			assertThat(uncovered)
				.as("of %d executions in %s, these ran elsewhere or %s %s", ran, shared,
						hides ? "saw the hidden" : "wrote", hides ? marker : written)
				.isEmpty();
			assertThat(written).doesNotExist();
			if (!hides) {
				// The control: the same write, unisolated, lands.
				assertThat(unisolated.execute("touch", written.toString()).exitCode()).isZero();
				assertThat(written).exists();
			}
		}
	}

	@ForEachLinuxMechanism
	void privateWorkingDirectoryIsHomeAndIsRemovedAfterwards(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute("sh", "-c",
				"pwd; echo data > file; mkdir -p a/b; chmod 000 a; echo $HOME");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		List<String> lines = result.stdoutText().lines().toList();
		assertThat(lines).hasSize(2);
		assertThat(lines.get(0)).isEqualTo(lines.get(1)).contains("cave-sandbox-");
		// Emptied for reuse, or removed, by the cleaner in the background.
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(Path.of(lines.get(0))).satisfiesAnyOf(
					(path) -> assertThat(path).doesNotExist(), (path) -> assertThat(path).isEmptyDirectory()));
	}

	@ForEachLinuxMechanism
	void emptiedPrivateDirectoryIsReusedOnlyEmptyAndOwnerOnly(MechanismChoice mechanism, @TempDir Path directory)
			throws IOException {
		// A root JVM's command user on the seccomp mechanism gets the directory's group
		// for the execution (0770) and cannot change its mode: root stays the owner.
		boolean grantedToTheCommandUser = ProcessIsolatedExecutor
			.commandGroup(LinuxMechanisms.verified(SandboxSettings.builder().mechanism(mechanism).build())) >= 0;
		String mode = grantedToTheCommandUser ? "770" : "700";
		// On namespaces, without a read-only root, a root JVM's command user keeps no
		// CAP_FOWNER either: it cannot change the mode of root's directory.
		boolean chmodRefused = grantedToTheCommandUser
				|| LinuxMechanisms.verified(SandboxSettings.builder().mechanism(mechanism).build())
					.verified()
					.stream()
					.anyMatch((fact) -> fact.startsWith("capabilities: CAP_DAC_OVERRIDE only"));
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(directory))) {
			ExecutionResult first = executor.execute("sh", "-c", "pwd; echo secret > left.txt; mkdir sub; chmod 777 .");
			assertThat(first.exitCode()).as(first.stderrText()).isEqualTo(chmodRefused ? 1 : 0);
			Path used = Path.of(first.stdoutText().trim());
			// The cleaner renews it in the background: until then a new one is used,
			// and every one is empty and owner-only.
			await().atMost(Duration.ofSeconds(60)).until(() -> {
				ExecutionResult next = executor.execute("sh", "-c", "ls -A; stat -c %a .; pwd");
				List<String> lines = next.stdoutText().lines().toList();
				assertThat(lines).as(next.stderrText()).hasSize(2).first().isEqualTo(mode);
				return lines.get(1).equals(used.toString());
			});
		}
		try (var left = Files.list(PrivateHome.of(directory)).filter(ProcessIsolatedExecutorTests::notLauncher)) {
			assertThat(left).as("closing the executor removes the kept directories").isEmpty();
		}
	}

	@Test
	void unisolatedPrivateDirectoriesAreNeverReused() throws IOException {
		Path home = PrivateHome.of(Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath());
		List<Path> used = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			ExecutionResult result = unisolated.execute("pwd");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			Path directory = Path.of(result.stdoutText().trim());
			assertThat(directory.getParent()).isEqualTo(home);
			// this JVM's tag of three characters and six random ones
			assertThat(directory.getFileName().toString()).matches("[0-9a-z]{9}");
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(directory).doesNotExist());
			used.add(directory);
		}
		assertThat(used.get(0)).isNotEqualTo(used.get(1));
		assertThat(used.get(0).getFileName().toString())
			.startsWith(used.get(1).getFileName().toString().substring(0, 3));
	}

	@ForEachLinuxMechanism
	void namedWorkingDirectoryIsUsedAndKept(MechanismChoice mechanism, @TempDir Path directory) {
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("sh", "-c", "echo kept > out.txt").workingDirectory(directory).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(directory.resolve("out.txt")).hasContent("kept");
	}

	@ForEachLinuxMechanism
	void outputBeyondTheCapIsDiscardedAndReported(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("head", "-c", "5000000", "/dev/zero").maxOutputBytes(1000).build());
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdout()).hasSize(1000);
		assertThat(result.stdoutTruncated()).isTrue();
		assertThat(result.stderrTruncated()).isFalse();
	}

	@ForEachLinuxMechanism
	void outputCanBeStreamedToASink(MechanismChoice mechanism) {
		ByteArrayOutputStream sink = new ByteArrayOutputStream();
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("echo", "streamed").stdoutSink(sink).build());
		assertThat(sink.toString(StandardCharsets.UTF_8)).isEqualTo("streamed\n");
		assertThat(result.stdout()).isEmpty();
	}

	/**
	 * A daemon that the command leaves behind, double forked so that it is orphaned,
	 * after an attempt at a session of its own (refused on every mechanism, which the
	 * command's stderr shows: {@link NewSession}), does not outlive the command.
	 */
	@ForEachLinuxMechanism
	void normalExitLeavesNoBackgroundProcess(MechanismChoice mechanism, @TempDir Path directory) {
		String marker = "31" + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000);
		boolean refused = NewSession.refused(mechanism);
		// The command ends only once its daemon has written that it runs.
		String script = "( "
				+ NewSession.setsid(refused, "sh -c 'echo running > background; exec sleep " + marker + "'")
				+ " & ); while [ ! -s background ]; do sleep 0.05; done; echo started";
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings)) {
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder("sh", "-c", script).workingDirectory(directory).build());
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).isEqualTo("started\n");
			assertThat(directory.resolve("background")).hasContent("running");
			NewSession.assertAttempted(refused, result.stderrText());
			// The PID namespace ends with the command; without one, contain kills the
			// command's process group. Not a speed bound: a survivor would stay.
			await().atMost(Duration.ofSeconds(30)).until(() -> processesWith(marker).isEmpty());
		}
		finally {
			processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@Test
	void missingCommandIsReportedWithItsCode() {
		assertThatExceptionOfType(CommandNotFoundException.class)
			.isThrownBy(() -> isolated.execute("no-such-command-cave-sandbox"))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_command_not_found"));
		assertThatExceptionOfType(CommandNotFoundException.class)
			.isThrownBy(() -> isolated.execute("/no/such/command"));
	}

	/**
	 * An argument longer than the kernel takes (MAX_ARG_STRLEN, 128 KiB: execve(2) fails
	 * with E2BIG) fails the spawn itself: a coded exception that carries the JDK's own
	 * message, and no directory or process is left.
	 */
	@ForEachLinuxMechanism
	void spawnTheKernelRefusesIsReportedWithItsCodeAndLeavesNothing(MechanismChoice mechanism, @TempDir Path work) {
		String tooLong = "x".repeat(256 * 1024);
		for (ProcessIsolatedExecutor executor : List.of(
				LinuxMechanisms.isolated(mechanism, (settings) -> settings.workDirectory(work)),
				ProcessIsolatedExecutor.unisolated(SandboxSettings.builder().workDirectory(work).build()))) {
			try (executor) {
				assertThatExceptionOfType(SandboxLaunchException.class)
					.isThrownBy(() -> executor.execute("true", tooLong))
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_launch_failed"))
					.withMessageStartingWith("cave_sandbox_launch_failed: could not start true: Cannot run program");
			}
			assertThat(privateDirectoriesIn(work)).isEmpty();
		}
	}

	/**
	 * A cold sandbox whose wrapper ({@code outer}, the JVM's child) is SIGKILLed during
	 * its set-up, before the launcher wrote its started marker (the mechanism's wrapper
	 * binary is a script that waits on a file before it runs the real one, and dies with
	 * {@code outer}): the execution fails with the launch exception naming the signal,
	 * not with exit 137 as the command's result; nothing of it is left running, its
	 * private directory is gone, and the next execution runs. The seccomp mechanism has
	 * no wrapper binary to hold.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES" })
	void coldSandboxWhoseWrapperIsKilledDuringSetUpFailsWithTheLaunchException(MechanismChoice mechanism,
			@TempDir Path work, @TempDir Path bin) throws Exception {
		Path hold = bin.resolve("hold");
		Path home = PrivateHome.of(work);
		try (ProcessIsolatedExecutor executor = heldExecutor(mechanism, work, heldWrapper(mechanism, bin, hold))) {
			Files.createFile(hold);
			CompletableFuture<ExecutionResult> execution = executor.executeAsync(
					ExecutionRequest.builder("/bin/sh", "-c", "echo ran").timeout(Duration.ofSeconds(60)).build());
			assertThat(heldOuter(hold).destroyForcibly()).isTrue();
			assertThatExceptionOfType(java.util.concurrent.ExecutionException.class)
				.isThrownBy(() -> execution.get(60, java.util.concurrent.TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOf(SandboxLaunchException.class)
				.withMessageContaining("the command /bin/sh did not run")
				.withMessageContaining("was killed by signal 9 before the command started")
				.satisfies((ex) -> assertThat(((SandboxLaunchException) ex).code())
					.isEqualTo(SandboxLaunchException.CODE));
			await().atMost(Duration.ofSeconds(30)).until(() -> processesWith(hold.toString()).isEmpty());
			// Its directory is emptied for the next execution (reuse) or deleted.
			await().atMost(Duration.ofSeconds(30)).until(() -> allEmpty(privateDirectoriesOf(home)));
			Files.delete(hold);
			ExecutionResult next = executor.execute("/bin/sh", "-c", "echo next");
			assertThat(next.exitCode()).as(next.stderrText()).isZero();
			assertThat(next.stdoutText()).isEqualTo("next\n");
		}
		assertThat(privateDirectoriesOf(home)).isEmpty();
	}

	/**
	 * The same kill during a cold set-up, for a process of {@code start()}: it ends with
	 * the set-up failure's exit code {@value LauncherContract#SETUP_FAILED}, not 137 as
	 * if the command had been killed, and its command was not started, though its caller
	 * never read its stdout (the markers are read at the end); nothing of it is left
	 * running and its private directory is gone.
	 */
	@ParameterizedTest
	@EnumSource(value = MechanismChoice.class, names = { "BWRAP", "UNSHARE", "NAMESPACES" })
	void startedProcessWhoseWrapperIsKilledDuringSetUpEndsWithTheSetUpFailedExitCode(MechanismChoice mechanism,
			@TempDir Path work, @TempDir Path bin) throws Exception {
		Path hold = bin.resolve("hold");
		Path home = PrivateHome.of(work);
		try (ProcessIsolatedExecutor executor = heldExecutor(mechanism, work, heldWrapper(mechanism, bin, hold))) {
			Files.createFile(hold);
			SandboxedProcess process = executor.start(ExecutionRequest.of("/bin/sh", "-c", "echo ran"));
			assertThat(heldOuter(hold).destroyForcibly()).isTrue();
			assertThat(process.waitFor(Duration.ofSeconds(60))).isTrue();
			assertThat(process.exitCode()).hasValue(LauncherContract.SETUP_FAILED);
			assertThat(process.commandStarted()).isFalse();
			assertThat(process.stdout().readAllBytes()).isEmpty();
			await().atMost(Duration.ofSeconds(30)).until(() -> processesWith(hold.toString()).isEmpty());
			await().atMost(Duration.ofSeconds(30)).until(() -> allEmpty(privateDirectoriesOf(home)));
		}
	}

	/**
	 * A wrapper for the mechanism's binary that waits while {@code hold} exists, then
	 * runs the real one; it dies with {@code outer}.
	 */
	private static Path heldWrapper(MechanismChoice mechanism, Path bin, Path hold) throws IOException {
		String real = (mechanism == MechanismChoice.BWRAP) ? "/usr/bin/bwrap" : "/usr/bin/unshare";
		Path held = Files.writeString(bin.resolve("held-wrapper"),
				"#!/bin/sh\nexec /usr/bin/setpriv --pdeathsig KILL -- /bin/sh -c 'while [ -e " + hold
						+ " ]; do sleep 0.05; done; exec " + real + " \"$@\"' held \"$@\"\n");
		Files.setPosixFilePermissions(held, PosixFilePermissions.fromString("rwxr-xr-x"));
		return held;
	}

	/**
	 * A cold executor whose mechanism's binary is {@code held}: a warm sandbox's
	 * preparation would be held (and killed) instead.
	 */
	private static ProcessIsolatedExecutor heldExecutor(MechanismChoice mechanism, Path work, Path held) {
		return LinuxMechanisms.isolated(mechanism, (
				settings) -> settings.workDirectory(work).bwrapPath(held).unsharePath(held).warm(WarmPoolSettings.OFF));
	}

	/** This JVM's child {@code outer} whose held wrapper waits on {@code hold}. */
	private static ProcessHandle heldOuter(Path hold) {
		return await().atMost(Duration.ofSeconds(60))
			.until(() -> processesWith("while [ -e " + hold).stream()
				.map((waiting) -> waiting.parent().orElse(null))
				.filter((parent) -> parent != null
						&& parent.parent().map((jvm) -> jvm.pid() == ProcessHandle.current().pid()).orElse(false))
				.findFirst()
				.orElse(null), (found) -> found != null);
	}

	private static boolean allEmpty(List<Path> directories) throws IOException {
		for (Path directory : directories) {
			try (java.util.stream.Stream<Path> entries = Files.list(directory)) {
				if (entries.findAny().isPresent()) {
					return false;
				}
			}
		}
		return true;
	}

	/**
	 * The private directories in a home: a tag of three characters and six random ones.
	 */
	private static List<Path> privateDirectoriesOf(Path home) throws IOException {
		if (!Files.isDirectory(home)) {
			return List.of();
		}
		try (java.util.stream.Stream<Path> files = Files.list(home)) {
			return files.filter((file) -> file.getFileName().toString().matches("[0-9a-z]{9}")).toList();
		}
	}

	/**
	 * A work directory that fills up, or runs out of inodes, after startup: the execution
	 * fails with its own code, naming the directory and the cause, and leaves no
	 * directory, no descriptor and no process; once the space is freed the next execution
	 * runs. (A read-only remount cannot be shown here: the kernel refuses it while the
	 * executor holds its lock file open for writing, EBUSY.)
	 */
	@ForEachLinuxMechanism
	void workDirectoryThatBecomesUnusableFailsCodedLeavesNothingAndRecovers(MechanismChoice mechanism,
			@TempDir Path parent) throws Exception {
		for (String problem : List.of("has no space left", "has no inodes left")) {
			try (SmallTmpfs tmpfs = SmallTmpfs.mount(parent, "size=1m,nr_inodes=64");
					// Without a pool: its waiting sandboxes' directories would be entries
					// of the work directory, made beside the snapshot below.
					ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
							(settings) -> settings.workDirectory(tmpfs.path()).warm(WarmPoolSettings.OFF))) {
				List<String> entries = tmpfs.entries();
				List<String> descriptors = descriptorsIn(tmpfs.path());
				List<ProcessHandle> processes = ProcessHandle.current().descendants().toList();
				if (problem.contains("space")) {
					tmpfs.fill();
				}
				else {
					tmpfs.exhaustInodes();
				}
				assertThatExceptionOfType(WorkDirectoryUnusableException.class).as(problem)
					.isThrownBy(() -> executor.execute("true"))
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_work_directory_unusable"))
					.withMessageContaining("the work directory " + tmpfs.path() + " (workDirectory) " + problem);
				assertThat(tmpfs.entries()).as(problem).isEqualTo(entries);
				assertThat(privateDirectoriesIn(tmpfs.path())).as(problem).isEmpty();
				assertThat(descriptorsIn(tmpfs.path())).as(problem).isEqualTo(descriptors);
				assertThat(ProcessHandle.current().descendants()).as(problem).isSubsetOf(processes);
				tmpfs.free();
				ExecutionResult result = executor.execute("sh", "-c", "echo written > file && cat file");
				assertThat(result.exitCode()).as(problem).isZero();
				assertThat(result.stdoutText()).as(problem).isEqualTo("written\n");
			}
		}
	}

	/** What this JVM's open descriptors point at under a directory. */
	private static List<String> descriptorsIn(Path directory) throws IOException {
		List<String> targets = new ArrayList<>();
		try (java.util.stream.Stream<Path> descriptors = Files.list(Path.of("/proc/self/fd"))) {
			for (Path descriptor : descriptors.toList()) {
				try {
					Path target = Files.readSymbolicLink(descriptor);
					if (target.startsWith(directory)) {
						targets.add(target.toString());
					}
				}
				catch (IOException ex) {
					// closed meanwhile
				}
			}
		}
		return targets.stream().sorted().toList();
	}

	/**
	 * Whether an entry of the home is not the launcher's directory, which the probe
	 * extracts there and which stays, by design, for the next JVM; nor the shared-memory
	 * library's ({@code preload-}, the mechanisms without a mount namespace), which stays
	 * the same way.
	 */
	private static boolean notLauncher(Path entry) {
		String name = entry.getFileName().toString();
		return !name.startsWith("launcher-") && !name.startsWith("preload-");
	}

	private static List<Path> privateDirectoriesIn(Path work) {
		try (java.util.stream.Stream<Path> entries = Files.walk(work)) {
			return entries.filter((entry) -> entry.getFileName().toString().matches("cave-sandbox-[0-9]+-.*"))
				.filter(Files::isDirectory)
				.toList();
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
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

	@ForEachLinuxMechanism
	void commandInAHiddenDirectoryIsNotFoundUnlessItIsInTheWorkingDirectory(MechanismChoice mechanism,
			@TempDir Path directory) throws IOException {
		ProcessIsolatedExecutor executor = isolated(mechanism);
		assumeThat(directory.toRealPath().startsWith(Path.of("/tmp"))).as("@TempDir lies in the hidden /tmp").isTrue();
		Path script = Files.writeString(directory.resolve("tool.sh"), "#!/bin/sh\necho ran\n");
		// Reachable and executable by every uid, so that only hiding can stop it (a root
		// JVM's command user on the seccomp mechanism is another uid of the host).
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		// The system view (the default) shows nothing of /tmp on any mechanism.
		assertThatExceptionOfType(CommandNotFoundException.class).isThrownBy(() -> executor.execute(script.toString()))
			.withMessageContaining("lies outside what the sandbox shows the command");
		if (!LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT)) {
			// In the host view, without a mount namespace nothing is hidden, as the
			// probe's facts say: the executor must not refuse the command as if it were.
			UnaryOperator<SandboxSettings.Builder> host = (settings) -> settings
				.filesystemView(SandboxSettings.Filesystem.View.HOST);
			assertThat(LinuxMechanisms.verified(host.apply(SandboxSettings.builder().mechanism(mechanism)).build())
				.verified()).anyMatch((fact) -> fact.startsWith("not given: hidden directories"));
			try (ProcessIsolatedExecutor hostView = LinuxMechanisms.isolated(mechanism, host)) {
				ExecutionResult hidden = hostView.execute(script.toString());
				assertThat(hidden.stdoutText()).as("exit %d: %s", hidden.exitCode(), hidden.stderrText())
					.isEqualTo("ran\n");
			}
		}
		ExecutionResult inWorkingDirectory = executor
			.execute(ExecutionRequest.builder("./tool.sh").workingDirectory(directory).build());
		assertThat(inWorkingDirectory.stdoutText()).isEqualTo("ran\n");
		assertThat(unisolated.execute(script.toString()).stdoutText()).isEqualTo("ran\n");
	}

	/**
	 * Found by a break-in attempt: with the caller's PATH, the unshare mechanism's setup
	 * ran a {@code mount} that an earlier execution had planted in a persistent working
	 * directory, as root of the outer namespace, before the hidden directories were
	 * mounted.
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
			ExecutionResult result = executor
				.execute(ExecutionRequest.builder("sh", "-c", "echo $PATH; echo $LD_LIBRARY_PATH")
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
		assertThat(isolated.execute(ExecutionRequest.builder("true").workingDirectory(real).build()).exitCode())
			.isZero();
	}

	@Test
	void workingDirectoryThatWouldUncoverHiddenDirectoriesIsRefused() {
		for (String directory : List.of("/", "/var")) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> isolated
					.execute(ExecutionRequest.builder("true").workingDirectory(Path.of(directory)).build()))
				.withMessageContaining("contains a hidden directory");
		}
	}

	/**
	 * A working directory is bound over the view: one that is, holds or lies in a secret
	 * the system view masks ({@code /etc} holds {@code /etc/shadow}) is refused rather
	 * than uncover it, or give a root JVM's command a writable {@code /etc}.
	 */
	@Test
	void workingDirectoryThatWouldUncoverAMaskedSecretIsRefused() {
		for (String directory : List.of("/etc", "/etc/ssh", "/etc/ssl/private")) {
			assumeThat(Path.of(directory)).isDirectory();
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> isolated
					.execute(ExecutionRequest.builder("true").workingDirectory(Path.of(directory)).build()))
				.withMessageContaining("a secret that the system view masks");
		}
	}

	@ForEachLinuxMechanism
	void privateDirectoryIsRemovedWhateverTheChildLeftInIt(MechanismChoice mechanism) {
		// An unreadable directory with a name that is not UTF-8, and a tree deeper than
		// PATH_MAX.
		String script = "mkdir \"$(printf 'x\\377')\"; touch \"$(printf 'x\\377')/f\"; chmod 000 \"$(printf 'x\\377')\"; "
				+ "pwd; perl -e 'for (1..30) { mkdir \"d\" x 200 or die; chdir \"d\" x 200 or die } open F, \">deep\" or die'";
		ExecutionResult result = isolated(mechanism).execute("sh", "-c", script);
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		await().atMost(Duration.ofSeconds(60))
			.untilAsserted(() -> assertThat(Path.of(result.stdoutText().trim())).satisfiesAnyOf(
					(path) -> assertThat(path).doesNotExist(), (path) -> assertThat(path).isEmptyDirectory()));
	}

	@ForEachLinuxMechanism
	void stdinSupplierThatFailsStillClosesTheChildsStdin(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest.builder("cat").stdin(() -> {
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

	/**
	 * A command that dies of SIGXCPU (exit code 152) under a CPU time limit is reported
	 * as ended by that limit; one that dies of SIGXFSZ (153) under a file size limit as
	 * ended by that one. The command sends the signal itself here: the kernel's signal is
	 * the same one (the launcher's rlimits have tests of their own).
	 */
	@ForEachLinuxMechanism
	void commandThatDiesOfTheSignalOfALimitInEffectReportsIt(MechanismChoice mechanism) {
		ResourceLimits both = ResourceLimits.builder().cpuTime(Duration.ofSeconds(60)).fileSize(1024 * 1024).build();
		ExecutionResult cpu = isolated(mechanism).execute(killsItself("XCPU", both));
		assertThat(cpu.exitCode()).as(cpu.stderrText()).isEqualTo(152);
		assertThat(cpu.timedOut()).isFalse();
		assertThat(cpu.limitExceeded()).isEqualTo(ResourceLimit.CPU_TIME);
		ExecutionResult file = isolated(mechanism).execute(killsItself("XFSZ", both));
		assertThat(file.exitCode()).as(file.stderrText()).isEqualTo(153);
		assertThat(file.limitExceeded()).isEqualTo(ResourceLimit.FILE_SIZE);
		assertThat(isolated(mechanism).execute("true").limitExceeded()).isNull();
	}

	/**
	 * The same signals without their limit (the defaults set neither) are no limit: the
	 * exit code alone says the command died of the signal.
	 */
	@ForEachLinuxMechanism
	void signalOfALimitThatIsNotInEffectIsNotReported(MechanismChoice mechanism) {
		ExecutionResult cpu = isolated(mechanism)
			.execute(killsItself("XCPU", ResourceLimits.builder().fileSize(1024 * 1024).build()));
		assertThat(cpu.exitCode()).as(cpu.stderrText()).isEqualTo(152);
		assertThat(cpu.limitExceeded()).isNull();
		ExecutionResult file = isolated(mechanism)
			.execute(killsItself("XFSZ", ResourceLimits.builder().cpuTime(Duration.ofSeconds(60)).build()));
		assertThat(file.exitCode()).as(file.stderrText()).isEqualTo(153);
		assertThat(file.limitExceeded()).isNull();
		ExecutionResult defaults = isolated(mechanism).execute(killsItself("XCPU", ResourceLimits.NONE));
		assertThat(defaults.exitCode()).isEqualTo(152);
		assertThat(defaults.limitExceeded()).isNull();
	}

	/**
	 * The settings' limits stay in effect for the values a request does not set.
	 */
	@ForEachLinuxMechanism
	void limitOfTheSettingsIsInEffectUnlessTheRequestOverridesIt(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.timeout(Duration.ofSeconds(20))
					.limits(ResourceLimits.defaults().toBuilder().cpuTime(Duration.ofSeconds(60)).build()))) {
			ExecutionResult result = executor
				.execute(killsItself("XCPU", ResourceLimits.builder().fileSize(1024 * 1024).build()));
			assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(152);
			assertThat(result.limitExceeded()).isEqualTo(ResourceLimit.CPU_TIME);
		}
	}

	/**
	 * When the timeout ended the execution, the signal the command died of is not a
	 * limit: on the timeout's SIGTERM the command kills itself with SIGXCPU, long before
	 * the grace period would end in SIGKILL.
	 */
	@ForEachLinuxMechanism
	void timedOutExecutionReportsNoLimit(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.timeout(Duration.ofSeconds(1)).killGracePeriod(Duration.ofSeconds(30)))) {
			ExecutionRequest request = ExecutionRequest
				.builder("sh", "-c", "trap 'trap - XCPU; kill -XCPU $$' TERM; while :; do sleep 1; done")
				.limits(ResourceLimits.builder().cpuTime(Duration.ofSeconds(60)).build())
				.build();
			ExecutionResult result = executor.execute(request);
			assertThat(result.timedOut()).isTrue();
			assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(152);
			assertThat(result.limitExceeded()).isNull();
		}
	}

	/**
	 * Unisolated (fallback mode) no limit is applied, so none is reported, though the
	 * exit code is the same.
	 */
	@Test
	void unisolatedExecutionReportsNoLimit() {
		ResourceLimits both = ResourceLimits.builder().cpuTime(Duration.ofSeconds(60)).fileSize(1024 * 1024).build();
		ExecutionResult cpu = unisolated.execute(killsItself("XCPU", both));
		assertThat(cpu.exitCode()).isEqualTo(152);
		assertThat(cpu.limitExceeded()).isNull();
		ExecutionResult file = unisolated.execute(killsItself("XFSZ", both));
		assertThat(file.exitCode()).isEqualTo(153);
		assertThat(file.limitExceeded()).isNull();
	}

	private static ExecutionRequest killsItself(String signal, ResourceLimits limits) {
		return ExecutionRequest.builder("sh", "-c", "kill -" + signal + " $$; echo survived").limits(limits).build();
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
			await().atMost(Duration.ofSeconds(60)).until(() -> !processesWith(marker).isEmpty());
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> executor.execute("true"))
				.withMessageContaining("(maxConcurrent)")
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_concurrency_limit_exceeded"));
			running.cancel(true);
			await().atMost(Duration.ofSeconds(30)).until(() -> processesWith(marker).isEmpty());
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
			for (int i = 0; i < futures.size(); i++) {
				assertThat(futures.get(i).join().stdoutText()).isEqualTo(i + "\n");
			}
		}
	}

	@ForEachLinuxMechanism
	void variablesOfTheSettingsAndTheRequestReachTheChild(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, Environments::named)) {
			Environments.assertReachTheChild(executor);
		}
	}

	@Test
	void variablesOfTheSettingsAndTheRequestReachTheChildUnisolated() {
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor
			.unisolated(Environments.named(SandboxSettings.builder()).build())) {
			Environments.assertReachTheChild(executor);
		}
	}

	@ForEachLinuxMechanism
	void parentVariableThatIsNotNamedStaysOut(MechanismChoice mechanism) {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings)) {
			Environments.assertStaysOut(executor);
		}
	}

	@Test
	void parentVariableThatIsNotNamedStaysOutUnisolated() {
		Environments.assertStaysOut(unisolated);
	}

	/**
	 * Thousands of executions (500 on unshare) from many threads, with bad requests mixed
	 * in, leave the JVM as they found it: descriptors, threads, working directories and
	 * processes.
	 */
	@Tag("slow")
	@ForEachLinuxMechanism
	void thousandsOfExecutionsFromManyThreadsLeakNothing(MechanismChoice mechanism, @TempDir Path directory)
			throws Exception {
		// Without a pool: its waiting sandboxes are processes, descriptors and
		// directories of the open executor (WarmPoolTests counts those).
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(16).workDirectory(directory).warm(WarmPoolSettings.OFF))) {
			executor.execute("true");
			await().atMost(Duration.ofSeconds(60)).until(() -> ioThreads() == 0);
			long descriptorsBefore = openDescriptors();
			long threadsBefore = threadsOtherThanReapers();
			// unshare builds the system view from some forty mount(8), mkdir(1) and
			// ln(1) processes per execution: 500 of them exercise the same paths (bad
			// requests, timeouts) within the build's time, where 2000 took 9 of the
			// test's 10 minutes on a loaded 2-core machine.
			int executions = (mechanism == MechanismChoice.UNSHARE) ? 500 : 2000;
			java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newFixedThreadPool(32);
			java.util.concurrent.atomic.AtomicInteger succeeded = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger rejected = new java.util.concurrent.atomic.AtomicInteger();
			List<java.util.concurrent.Future<?>> calls = new ArrayList<>();
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
			// The other executors of this class keep warm sandboxes waiting: what this
			// one left would name its work directory.
			assertThat(processesWith(directory.toString())).isEmpty();
			// Directories only: the JVM's lock file stays while the executor is open.
			// Once the cleaner is through what was released.
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
				try (var left = Files.list(PrivateHome.of(directory))
					.filter(Files::isDirectory)
					.filter(ProcessIsolatedExecutorTests::notLauncher)) {
					assertThat(left).as("at most one emptied directory per slot is kept")
						.hasSizeLessThanOrEqualTo(16)
						.allSatisfy((kept) -> assertThat(kept).isEmptyDirectory());
				}
			});
			// The JDK opens descriptors of its own for a while (the process reaper, pipes
			// being closed): the count must settle back to at most the baseline, not
			// match it at one instant.
			await().atMost(Duration.ofSeconds(60)).pollInSameThread().untilAsserted(() -> {
				assertThat(openDescriptors()).isLessThanOrEqualTo(descriptorsBefore);
				assertThat(threadsOtherThanReapers()).as("threads now: %s", Thread.getAllStackTraces().keySet())
					.isLessThanOrEqualTo(threadsBefore);
			});
		}
		try (var left = Files.list(PrivateHome.of(directory)).filter(ProcessIsolatedExecutorTests::notLauncher)) {
			assertThat(left).as("closing the executor removes the kept directories").isEmpty();
		}
	}

	/**
	 * The environment a child gets from {@code cave.sandbox.env} and from its request,
	 * read from the child's own {@code env}. Surefire gives this JVM
	 * {@code CAVE_SANDBOX_TEST_PASSED} and {@code CAVE_SANDBOX_TEST_SECRET}.
	 */
	private static final class Environments {

		static SandboxSettings.Builder named(SandboxSettings.Builder settings) {
			return settings.passEnvironment(List.of("CAVE_SANDBOX_TEST_PASSED", "CAVE_SANDBOX_TEST_NOT_SET_IN_THE_JVM"))
				.environment(java.util.Map.of("CAVE_SANDBOX_FROM_SETTINGS", "settings value", "CAVE_SANDBOX_OVERRIDDEN",
						"settings value"));
		}

		static void assertReachTheChild(ProcessIsolatedExecutor executor) {
			assertThat(System.getenv("CAVE_SANDBOX_TEST_PASSED")).as("set by surefire").isEqualTo("from-the-jvm");
			assertThat(System.getenv("CAVE_SANDBOX_TEST_NOT_SET_IN_THE_JVM")).isNull();
			java.util.Map<String, String> fromSettings = environmentOf(executor,
					ExecutionRequest.builder("env").build());
			assertThat(fromSettings).containsEntry("CAVE_SANDBOX_TEST_PASSED", "from-the-jvm")
				.containsEntry("CAVE_SANDBOX_FROM_SETTINGS", "settings value")
				.containsEntry("CAVE_SANDBOX_OVERRIDDEN", "settings value")
				.containsEntry("LANG", "C.UTF-8")
				.containsEntry("PATH", SandboxSettings.BASELINE_PATH)
				.containsOnlyKeys("CAVE_SANDBOX_TEST_PASSED", "CAVE_SANDBOX_FROM_SETTINGS", "CAVE_SANDBOX_OVERRIDDEN",
						"HOME", "TMPDIR", "LANG", "PATH");
			java.util.Map<String, String> withRequest = environmentOf(executor,
					ExecutionRequest.builder("env")
						.passEnvironment("CAVE_SANDBOX_TEST_SECRET")
						.environment("CAVE_SANDBOX_OVERRIDDEN", "request value")
						.environment("CAVE_SANDBOX_FROM_REQUEST", "request value")
						.build());
			assertThat(withRequest).containsEntry("CAVE_SANDBOX_TEST_PASSED", "from-the-jvm")
				.containsEntry("CAVE_SANDBOX_TEST_SECRET", System.getenv("CAVE_SANDBOX_TEST_SECRET"))
				.containsEntry("CAVE_SANDBOX_FROM_SETTINGS", "settings value")
				.containsEntry("CAVE_SANDBOX_OVERRIDDEN", "request value")
				.containsEntry("CAVE_SANDBOX_FROM_REQUEST", "request value")
				.containsOnlyKeys("CAVE_SANDBOX_TEST_PASSED", "CAVE_SANDBOX_TEST_SECRET", "CAVE_SANDBOX_FROM_SETTINGS",
						"CAVE_SANDBOX_OVERRIDDEN", "CAVE_SANDBOX_FROM_REQUEST", "HOME", "TMPDIR", "LANG", "PATH");
		}

		static void assertStaysOut(ProcessIsolatedExecutor executor) {
			assertThat(System.getenv("CAVE_SANDBOX_TEST_PASSED")).as("set by surefire").isEqualTo("from-the-jvm");
			assertThat(environmentOf(executor, ExecutionRequest.builder("env").build())).containsOnlyKeys("HOME",
					"TMPDIR", "LANG", "PATH");
		}

		private static java.util.Map<String, String> environmentOf(ProcessIsolatedExecutor executor,
				ExecutionRequest request) {
			ExecutionResult result = executor.execute(request);
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			java.util.Map<String, String> environment = new java.util.LinkedHashMap<>();
			result.stdoutText().lines().forEach((line) -> {
				int equals = line.indexOf('=');
				assertThat(equals).as("env line %s", line).isPositive();
				environment.put(line.substring(0, equals), line.substring(equals + 1));
			});
			// bwrap and the unshare mechanism's setup shell change directory: they set
			// PWD (and OLDPWD) to the working directory, which is also HOME.
			for (String directory : List.of("PWD", "OLDPWD")) {
				String value = environment.remove(directory);
				assertThat(value).as(directory).isIn(null, environment.get("HOME"));
			}
			// The mechanisms without a mount namespace add the shared-memory library and
			// its directory (SharedMemoryDirectory), together.
			String preload = environment.remove("LD_PRELOAD");
			String objects = environment.remove(SharedMemoryPreload.DIRECTORY_VARIABLE);
			assertThat(preload == null).as("LD_PRELOAD %s with %s", preload, objects).isEqualTo(objects == null);
			if (preload != null) {
				assertThat(preload).endsWith("/" + SharedMemoryPreload.LIBRARY);
			}
			return environment;
		}

	}

	private static long openDescriptors() throws IOException {
		try (var descriptors = Files.list(Path.of("/proc/self/fd"))) {
			return descriptors.count();
		}
	}

	/**
	 * The JDK waits for each child on a "process reaper" thread of its own cached pool,
	 * which keeps idle threads for 60 s; they are the JDK's, not ours, and are left out
	 * of the count.
	 */
	private static long threadsOtherThanReapers() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((t) -> !t.getName().equals("process reaper"))
			.count();
	}

	private static long ioThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((t) -> t.getName().startsWith("cave-sandbox-io-") || t.getName().startsWith("cave-sandbox-async-")
					|| t.getName().equals(PrivateDirectories.CLEANER_THREAD))
			.count();
	}

	public static List<ProcessHandle> processesWith(String marker) {
		return ProcessHandle.allProcesses()
			.filter((process) -> process.info().commandLine().orElse("").contains(marker))
			.toList();
	}

	/**
	 * A request whose writable path is, or holds, a directory the sandbox's own programs
	 * come from ({@code /usr/bin}, where the wrapper and {@code sh} lie) is refused with
	 * the invalid-request code, naming it, and its command never runs; the same request
	 * without that path runs.
	 */
	@Test
	void writablePathOverTheSandboxsOwnProgramsIsRefusedBeforeAnythingRuns(@TempDir Path directory) {
		try (ProcessIsolatedExecutor executor = hostView()) {
			for (String programs : List.of("/usr/bin", "/usr")) {
				assertThatExceptionOfType(InvalidExecutionRequestException.class)
					.isThrownBy(() -> executor.execute(ExecutionRequest.builder("sh", "-c", "touch spawned")
						.workingDirectory(directory)
						.writablePaths(Path.of(programs))
						.build()))
					.withMessageContaining("writable path " + programs + " ")
					.withMessageContaining("/usr/bin, where the sandbox's own programs come from")
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
			}
			assertThat(directory.resolve("spawned")).doesNotExist();
			ExecutionResult control = executor
				.execute(ExecutionRequest.builder("sh", "-c", "touch spawned").workingDirectory(directory).build());
			assertThat(control.exitCode()).as(control.stderrText()).isZero();
			assertThat(directory.resolve("spawned")).exists();
		}
	}

	/**
	 * A request's readable path that does not exist is refused with the invalid-request
	 * code, naming it and the reason, before its command runs.
	 */
	@Test
	void missingReadablePathOfARequestIsRefusedWithItsCode(@TempDir Path directory) {
		Path missing = directory.resolve("missing");
		try (ProcessIsolatedExecutor executor = hostView()) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> executor.execute(ExecutionRequest.builder("sh", "-c", "touch spawned")
					.workingDirectory(directory)
					.readablePaths(missing)
					.build()))
				.withMessageContaining("readable path " + missing
						+ " cannot be shown to the command: it does not exist or cannot be resolved")
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
			assertThat(directory.resolve("spawned")).doesNotExist();
		}
	}

	/**
	 * A bubblewrap executor in the host view (the system view is not built by the
	 * mechanisms yet on this branch).
	 */
	private static ProcessIsolatedExecutor hostView() {
		return LinuxMechanisms.isolated(MechanismChoice.BWRAP,
				(settings) -> settings.filesystemView(SandboxSettings.Filesystem.View.HOST));
	}

}
