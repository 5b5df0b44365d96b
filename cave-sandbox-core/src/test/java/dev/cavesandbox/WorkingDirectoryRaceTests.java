package dev.cavesandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The working-directory race of issue 10: a sandboxed command that can write to a
 * persistent working-directory tree swaps a component of another execution's working
 * directory for a symbolic link ({@code renameat2(RENAME_EXCHANGE)} in a tight loop)
 * while that execution starts. The JVM checks the path, the launcher opens it again
 * without following symbolic links and the wrapper binds that descriptor: each execution
 * either runs in the real directory or is refused with a coded exception, and nothing is
 * ever written where the symbolic link points.
 */
@EnabledOnOs(OS.LINUX)
class WorkingDirectoryRaceTests {

	/**
	 * How long the executions race the exchange loop: long enough that many of them start
	 * while the path is swapped (the race is shown to have been run, below).
	 */
	private static final Duration RACE = Duration.ofSeconds(15);

	private static final int THREADS = 4;

	/**
	 * The attacker: exchanges {@code a} and {@code link} in rounds of 2000, 5 ms apart,
	 * until {@code stop} exists.
	 */
	private static final String EXCHANGE = """
			import ctypes, os, sys, time
			libc = ctypes.CDLL(None, use_errno=True)
			libc.syscall.restype = ctypes.c_long
			exchanges = 0
			open("started", "w").close()
			while not os.path.exists("stop"):
			    # An even number per round: the tree is left as it was found.
			    for _ in range(2000):
			        if libc.syscall(316, -100, b"a", -100, b"link", 2) != 0:
			            print("renameat2 failed: errno %d" % ctypes.get_errno())
			            sys.exit(1)
			        exchanges += 1
			    # A breath with the tree as it was found, so that some executions start in
			    # the real directory even where the loop outpaces a slow wrapper's set-up
			    # (seen: bwrap ran 0 times in the real directory on an idle host).
			    time.sleep(0.005)
			print("exchanges=%d" % exchanges)
			""";

	@ForEachLinuxMechanism
	@Tag("slow")
	void swappedWorkingDirectoryNeverWinsAgainstTheLauncher(MechanismChoice mechanism, @TempDir Path temporary)
			throws Exception {
		race(mechanism, temporary);
	}

	/**
	 * The same outside the hidden directories (the build's own {@code target}): there the
	 * sandbox does not recreate the path's parents on a tmpfs, so {@code --chdir} and
	 * {@code cd} resolve host directories that the attacker can swap after the bind, and
	 * the launcher's check of the working directory's device and inode is what catches
	 * it.
	 */
	@ForEachLinuxMechanism
	@Tag("slow")
	void swappedWorkingDirectoryOutsideHiddenDirectoriesNeverWins(MechanismChoice mechanism) throws Exception {
		Path root = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "race-");
		try {
			race(mechanism, root.toRealPath());
		}
		finally {
			DirectoryTrees.delete(root);
		}
	}

	private static void race(MechanismChoice mechanism, Path root) throws Exception {
		// Passable by a root JVM's command user on the seccomp mechanism, a uid of the
		// host.
		Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
		Path jobs = Files.createDirectory(root.resolve("jobs"));
		Path work = Files.createDirectories(jobs.resolve("a").resolve("work"));
		// Where the symbolic link points: a directory outside the tree, with a "work" of
		// its own so that the swapped path resolves.
		Path outside = Files.createDirectories(root.resolve("outside").resolve("work"));
		Files.writeString(outside.resolve("host-file"), "host\n");
		Files.createSymbolicLink(jobs.resolve("link"), outside.getParent());
		Files.writeString(jobs.resolve("exchange.py"), EXCHANGE);
		String realInode = inode(work);
		String ownership = ownership(work);
		String outsideInode = inode(outside);
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.timeout(Duration.ofSeconds(120)).maxConcurrent(THREADS + 1))) {
			CompletableFuture<ExecutionResult> attacker = CompletableFuture.supplyAsync(() -> executor
				.execute(ExecutionRequest.builder("/usr/bin/python3", "exchange.py").workingDirectory(jobs).build()));
			await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(jobs.resolve("started")));
			AtomicInteger ranInTheRealDirectory = new AtomicInteger();
			AtomicInteger ranWhereTheLinkPoints = new AtomicInteger();
			AtomicInteger refusedByTheLauncher = new AtomicInteger();
			AtomicInteger changedDuringSetUp = new AtomicInteger();
			AtomicInteger notSetUp = new AtomicInteger();
			AtomicInteger refusedByTheExecutor = new AtomicInteger();
			Queue<String> unexpected = new ConcurrentLinkedQueue<>();
			long end = System.nanoTime() + RACE.toNanos();
			ExecutorService threads = Executors.newFixedThreadPool(THREADS);
			try {
				List<CompletableFuture<Void>> victims = new ArrayList<>();
				for (int i = 0; i < THREADS; i++) {
					victims.add(CompletableFuture.runAsync(() -> {
						while (System.nanoTime() < end) {
							try {
								ExecutionResult result = executor.execute(
										ExecutionRequest.builder("sh", "-c", "stat -c %i . && echo victim > marker")
											.workingDirectory(work)
											.build());
								// The directory it ran in, whether or not it could write
								// there.
								if (result.stdoutText().trim().equals(outsideInode)) {
									ranWhereTheLinkPoints.incrementAndGet();
								}
								else if (result.exitCode() == 0 && result.stdoutText().trim().equals(realInode)) {
									ranInTheRealDirectory.incrementAndGet();
								}
								else {
									unexpected.add("exit " + result.exitCode() + ": " + result.stdoutText()
											+ result.stderrText());
								}
							}
							catch (SandboxLaunchException ex) {
								if (ex.getMessage().contains("without following symbolic links")) {
									refusedByTheLauncher.incrementAndGet();
								}
								else if (ex.getMessage().contains("changed during set-up")) {
									changedDuringSetUp.incrementAndGet();
								}
								else if (ex.getMessage().contains(LauncherContract.NOT_SET_UP)) {
									// The wrapper or the mount found the path swapped,
									// or the launcher found itself outside the wrapper's
									// bind: the command did not run.
									notSetUp.incrementAndGet();
								}
								else {
									unexpected.add(ex.toString());
								}
							}
							catch (InvalidExecutionRequestException ex) {
								refusedByTheExecutor.incrementAndGet();
							}
							catch (RuntimeException ex) {
								unexpected.add(ex.toString());
							}
						}
					}, threads));
				}
				CompletableFuture.allOf(victims.toArray(CompletableFuture[]::new))
					.get(RACE.plusMinutes(2).toSeconds(), TimeUnit.SECONDS);
			}
			finally {
				Files.writeString(jobs.resolve("stop"), "");
				threads.shutdownNow();
			}
			ExecutionResult attack = attacker.get(120, TimeUnit.SECONDS);
			assertThat(attack.exitCode()).as(attack.stderrText()).isZero();
			assertThat(attack.stdoutText()).startsWith("exchanges=");
			String counts = "ran in the real directory " + ranInTheRealDirectory + ", where the link points "
					+ ranWhereTheLinkPoints + ", refused by the launcher " + refusedByTheLauncher
					+ " (changed during set-up " + changedDuringSetUp + "), not set up " + notSetUp
					+ ", by the executor " + refusedByTheExecutor + ", " + attack.stdoutText().trim();
			// First: nothing got out.
			assertThat(outside).as(counts).isDirectoryNotContaining("glob:**/marker");
			assertThat(ranWhereTheLinkPoints.get()).as(counts).isZero();
			// Then: every failure is a coded refusal, never a result with the wrapper's
			// own exit code and message in place of the command's.
			assertThat(unexpected).as(counts).isEmpty();
			assertThat(ranInTheRealDirectory.get()).as(counts).isPositive();
			assertThat(work.resolve("marker")).hasContent("victim");
			// The race was run: some executions found the path swapped.
			assertThat(
					refusedByTheLauncher.get() + changedDuringSetUp.get() + notSetUp.get() + refusedByTheExecutor.get())
				.as(counts)
				.isPositive();
			// The seccomp mechanism's command user had the directory's group only
			// while it ran.
			assertThat(ownership(work)).as(counts).isEqualTo(ownership);
			System.out.println(mechanism + ": " + counts);
		}
	}

	private static String inode(Path path) throws IOException {
		return String.valueOf(Files.getAttribute(path, "unix:ino"));
	}

	/** Group and mode, as the executor gives and takes back for a command user. */
	private static String ownership(Path directory) throws IOException {
		return Files.getAttribute(directory, "unix:gid") + " "
				+ PosixFilePermissions.toString(Files.getPosixFilePermissions(directory));
	}

}
