package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Red team of the hand-over's started marker ({@code CAVE-RUN}, launcher.h section
 * "Hand-over"), of the warm pool's deferred refill ({@code WarmPool.served()}) and of the
 * Landlock rules along masked paths (landlock.c, one {@code fstat(2)} per entry), on
 * every Linux mechanism, cold and warm, as this JVM: a command whose output imitates the
 * markers in whole, in part or split across writes, a cap smaller than a marker, a
 * command that closes or redirects its stdout, kills its wrappers, streams through
 * {@code start()} or a sink; executions racing for a pool of one; a command that tries
 * every path it knows to a masked secret. A test that passes is an attempt withstood; a
 * {@code @Disabled("finding: ...")} test is one that succeeded.
 */
@Tag("slow")
@EnabledOnOs(OS.LINUX)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StartedMarkerBreakInTests {

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	/**
	 * What commands write first, each a way to imitate the markers: whole, twice, in
	 * part, the ready marker alone, both markers, split across writes with a pause
	 * between them (the drain reads each part separately), nothing at all.
	 */
	private static final Map<String, String> IMITATIONS = Map.of("printf CAVE-RUN", "CAVE-RUN",
			"printf CAVE-RUNCAVE-RUN", "CAVE-RUNCAVE-RUN", "printf CAVE-R", "CAVE-R", "printf CAVE-RDY", "CAVE-RDY",
			"printf CAVE-RDYCAVE-RUNx", "CAVE-RDYCAVE-RUNx", "printf CAVE-; sleep 0.2; printf RU; sleep 0.2; printf N",
			"CAVE-RUN", "printf C; sleep 0.2; printf AVE-RDYCAVE-RUN; exit 3", "CAVE-RDYCAVE-RUN", "true", "");

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> cold = new ConcurrentHashMap<>();

	@AfterAll
	static void closeExecutors() {
		cold.values().forEach(ProcessIsolatedExecutor::close);
	}

	/**
	 * Cold and warm: a command's own output that imitates the markers is reported byte
	 * for byte, with its own exit code, never as a launch failure.
	 */
	@ForEachLinuxMechanism
	void outputImitatingTheMarkersIsTheCommandsByteForByte(MechanismChoice choice, @TempDir Path work) {
		try (ProcessIsolatedExecutor warm = WarmPoolTests.pooled(choice, work, 1, (settings) -> settings)) {
			for (ProcessIsolatedExecutor executor : List.of(cold(choice), warm)) {
				for (Map.Entry<String, String> imitation : IMITATIONS.entrySet()) {
					if (executor == warm) {
						WarmPoolTests.awaitReady(warm, 1);
					}
					ExecutionResult result = executor.execute(ExecutionRequest.of("sh", "-c", imitation.getKey()));
					assertThat(result.stdoutText()).as(imitation.getKey()).isEqualTo(imitation.getValue());
					assertThat(result.exitCode()).as(imitation.getKey() + ": " + result.stderrText())
						.isEqualTo(imitation.getKey().endsWith("exit 3") ? 3 : 0);
					if (executor == warm) {
						// (the other is cold unless cavesandbox.test.warm-size gives it
						// a pool)
						assertThat(result.warm()).as(imitation.getKey()).isTrue();
					}
				}
			}
		}
	}

	/**
	 * A cap smaller than a marker applies to the command's output only: the markers
	 * neither count against it nor show through it.
	 */
	@ForEachLinuxMechanism
	void capSmallerThanAMarkerCutsTheCommandsOutputOnly(MechanismChoice choice) {
		ExecutionResult result = cold(choice)
			.execute(ExecutionRequest.builder("sh", "-c", "printf CAVE-RUNxyz; exit 4").maxOutputBytes(3).build());
		assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(4);
		assertThat(result.stdoutText()).isEqualTo("CAV");
		assertThat(result.stdoutTruncated()).isTrue();
		ExecutionResult one = cold(choice)
			.execute(ExecutionRequest.builder("sh", "-c", "printf ab").maxOutputBytes(1).build());
		assertThat(one.stdoutText()).isEqualTo("a");
		assertThat(one.exitCode()).isZero();
	}

	/**
	 * Warm and cold, a command that floods its stdout (about 20 MB, starting with an
	 * imitation of the markers) past a cap of 1 KiB: exactly its first KiB, truncated,
	 * its exit code; the flood neither hangs the caller nor turns into a launch failure.
	 */
	@ForEachLinuxMechanism
	void floodPastTheCapKeepsTheCommandsFirstBytes(MechanismChoice choice, @TempDir Path work) {
		String flood = "printf CAVE-RDYCAVE-RUN; head -c 20000000 /dev/zero | tr '\\0' x; exit 11";
		try (ProcessIsolatedExecutor warm = WarmPoolTests.pooled(choice, work, 1, (settings) -> settings)) {
			WarmPoolTests.awaitReady(warm, 1);
			for (ProcessIsolatedExecutor executor : List.of(warm, cold(choice))) {
				ExecutionResult result = executor
					.execute(ExecutionRequest.builder("sh", "-c", flood).maxOutputBytes(1024).build());
				assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(11);
				assertThat(result.stdoutTruncated()).isTrue();
				assertThat(result.stdoutText()).hasSize(1024).startsWith("CAVE-RDYCAVE-RUNxxx");
			}
		}
	}

	/**
	 * A command that leaves a process behind holding its stdout, to write after the
	 * command ended: the result is the command's exit code (or the survivors' report),
	 * promptly, never a launch failure, and the late write is not part of it.
	 */
	@ForEachLinuxMechanism
	void writerLeftBehindNeitherHangsNorFailsTheLaunch(MechanismChoice choice) {
		long begin = System.nanoTime();
		List<ExecutionResult> results = new CopyOnWriteArrayList<>();
		Throwable thrown = catchThrowable(() -> results.add(cold(choice)
			.execute(ExecutionRequest.of("sh", "-c", "(sleep 20; printf late) & printf early; exit 4"))));
		assertThat(Duration.ofNanos(System.nanoTime() - begin)).isLessThan(Duration.ofSeconds(15));
		if (thrown != null) {
			assertThat(thrown).isInstanceOf(ProcessTreeSurvivedException.class);
		}
		else {
			assertThat(results).singleElement().satisfies((result) -> {
				assertThat(result.exitCode()).isEqualTo(4);
				assertThat(result.stdoutText()).isEqualTo("early");
			});
		}
	}

	/**
	 * A command that closes its stdout at once, points it elsewhere, or writes the
	 * markers only on stderr, still ran: its exit code is its result, stderr is kept as
	 * written.
	 */
	@ForEachLinuxMechanism
	void commandThatClosesOrRedirectsItsStdoutStillGivesItsResult(MechanismChoice choice) {
		ExecutionResult closed = cold(choice).execute(ExecutionRequest.of("sh", "-c", "exec >&-; exit 7"));
		assertThat(closed.exitCode()).as(closed.stderrText()).isEqualTo(7);
		assertThat(closed.stdout()).isEmpty();
		ExecutionResult redirected = cold(choice)
			.execute(ExecutionRequest.of("sh", "-c", "exec >/dev/null; printf CAVE-RUN; exit 6"));
		assertThat(redirected.exitCode()).as(redirected.stderrText()).isEqualTo(6);
		assertThat(redirected.stdout()).isEmpty();
		ExecutionResult onStderr = cold(choice)
			.execute(ExecutionRequest.of("sh", "-c", "printf CAVE-RDYCAVE-RUN >&2; exit 5"));
		assertThat(onStderr.exitCode()).isEqualTo(5);
		assertThat(onStderr.stderrText()).isEqualTo("CAVE-RDYCAVE-RUN");
		assertThat(onStderr.stdout()).isEmpty();
	}

	/**
	 * A command that kills every process it may (its wrappers among them where they are
	 * its uid) after it started is a result or the survivors' report, never a launch
	 * failure that would say it did not run.
	 */
	@ForEachLinuxMechanism
	void commandThatKillsItsWrappersIsNotALaunchFailure(MechanismChoice choice) {
		List<ExecutionResult> results = new CopyOnWriteArrayList<>();
		Throwable thrown = catchThrowable(() -> results.add(cold(choice)
			.execute(ExecutionRequest.of("sh", "-c", "printf before; kill -KILL $PPID; kill -KILL -1; exit 9"))));
		if (thrown != null) {
			assertThat(thrown).isNotInstanceOf(SandboxLaunchException.class);
		}
		else {
			assertThat(results).singleElement()
				.satisfies((result) -> assertThat(result.stdoutText()).startsWith("before"));
		}
	}

	/**
	 * A command that ends as a failed set-up does (125, the launcher's last line on
	 * stderr) with whatever launch token it could read under {@code /proc}: after the
	 * started marker its exit is its result, never a launch failure.
	 */
	@ForEachLinuxMechanism
	void commandThatForgesASetUpFailureGivesItsResult(MechanismChoice choice) throws IOException {
		ExecutionRequest forge = ExecutionRequest.builder("perl", "forged-setup-failure.pl")
			.inputFile("forged-setup-failure.pl", resource("forged-setup-failure.pl"))
			.build();
		List<ExecutionResult> results = new CopyOnWriteArrayList<>();
		Throwable thrown = catchThrowable(() -> results.add(cold(choice).execute(forge)));
		assertThat(thrown).as("%s", results).isNull();
		assertThat(results).singleElement().satisfies((result) -> {
			assertThat(result.exitCode()).isEqualTo(125);
			assertThat(result.stdoutText()).as("the token was read").isEmpty();
		});
	}

	/**
	 * Through a sink and through {@code start()}: the stream the caller reads is the
	 * command's, imitations of the markers included, and nothing of the markers.
	 */
	@ForEachLinuxMechanism
	void sinksAndStartedProcessesGetExactlyTheCommandsBytes(MechanismChoice choice) throws Exception {
		ByteArrayOutputStream sink = new ByteArrayOutputStream();
		ExecutionResult sunk = cold(choice)
			.execute(ExecutionRequest.builder("sh", "-c", "printf CAVE-RUN; printf CAVE-RDY; exit 2")
				.stdoutSink(sink)
				.build());
		assertThat(sunk.exitCode()).isEqualTo(2);
		assertThat(sink.toString(StandardCharsets.US_ASCII)).isEqualTo("CAVE-RUNCAVE-RDY");
		try (SandboxedProcess started = cold(choice)
			.start(ExecutionRequest.of("sh", "-c", "printf CAVE-R; sleep 0.2; printf UN; exit 8"))) {
			byte[] read = readAll(started.stdout());
			assertThat(started.waitFor(PATIENCE)).isTrue();
			assertThat(new String(read, StandardCharsets.US_ASCII)).isEqualTo("CAVE-RUN");
			assertThat(started.exitCode()).hasValue(8);
		}
		try (SandboxedProcess quiet = cold(choice).start(ExecutionRequest.of("sh", "-c", "exit 0"))) {
			// read one byte at a time: the marker check on the single-byte read
			assertThat(quiet.stdout().read()).isEqualTo(-1);
			assertThat(quiet.waitFor(PATIENCE)).isTrue();
			assertThat(quiet.exitCode()).hasValue(0);
		}
	}

	/**
	 * A consumer of {@code start()} that asks {@code available()} before it reads (a
	 * polling loop that reads only what is waiting) is told of the command's output once
	 * it waits in the pipe, as a plain process's stream tells it.
	 */
	@ForEachLinuxMechanism
	void availableOfAStartedProcessTellsOfWaitingOutput(MechanismChoice choice) throws Exception {
		try (SandboxedProcess started = cold(choice).start(ExecutionRequest.of("sh", "-c", "printf hello"))) {
			assertThat(started.waitFor(PATIENCE)).isTrue();
			InputStream stdout = started.stdout();
			assertThat(stdout.available()).as("bytes waiting: hello").isPositive();
			assertThat(new String(readAll(stdout), StandardCharsets.US_ASCII)).isEqualTo("hello");
		}
	}

	/**
	 * Two callers race for a pool of one (20 executions each, bounded): every execution
	 * starts in an empty working directory of its own (none sees what another planted),
	 * each ends with its own result, and the pool is full again afterwards (neither the
	 * deferral nor one caller's {@code served()} keeps it empty).
	 */
	@ForEachLinuxMechanism
	void racingCallersNeverShareASandboxAndThePoolRefills(MechanismChoice choice, @TempDir Path work) throws Exception {
		ExecutorService callers = Executors.newFixedThreadPool(2);
		List<String> seen = new CopyOnWriteArrayList<>();
		try (ProcessIsolatedExecutor executor = WarmPoolTests.pooled(choice, work, 1, (settings) -> settings)) {
			WarmPoolTests.awaitReady(executor, 1);
			List<Future<Integer>> rounds = new ArrayList<>();
			for (int caller = 0; caller < 2; caller++) {
				int id = caller;
				rounds.add(callers.submit(() -> {
					int warm = 0;
					for (int round = 0; round < 20; round++) {
						String mine = "c" + id + "r" + round;
						ExecutionResult result = executor.execute(ExecutionRequest.of("sh", "-c",
								"ls -A; : > planted-" + mine + "; printf " + mine + "; exit " + round));
						assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(round);
						seen.add(mine + ":" + result.stdoutText());
						assertThat(result.stdoutText()).as(mine).isEqualTo(mine);
						warm += result.warm() ? 1 : 0;
					}
					return warm;
				}));
			}
			int warm = 0;
			for (Future<Integer> round : rounds) {
				warm += round.get(4, TimeUnit.MINUTES);
			}
			assertThat(seen).hasSize(40);
			assertThat(warm).as("warm executions among 40").isPositive();
			WarmPoolTests.awaitReady(executor, 1);
		}
		finally {
			callers.shutdownNow();
		}
	}

	/**
	 * Every path to a masked secret that the attacker script knows (plain, through
	 * {@code /proc/self/root}, {@code ..}, an {@code O_PATH} descriptor reopened through
	 * {@code /proc/self/fd}, a directory descriptor of {@code /etc}, a hard or symbolic
	 * link in the working directory): nothing read, no hard link made. On
	 * {@code namespaces} and {@code seccomp} only Landlock's rules stand between.
	 */
	@ForEachLinuxMechanism
	void maskedSecretsStayUnreadableWhateverThePath(MechanismChoice choice) throws IOException {
		ExecutionResult result = cold(choice).execute(ExecutionRequest.builder("perl", "masked-path-attempts.pl")
			.inputFile("masked-path-attempts.pl", resource("masked-path-attempts.pl"))
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText()).as(result.stderrText()).endsWith("done\n");
		assertThat(result.stdoutText().lines()).as(result.stdoutText())
			.noneMatch((line) -> line.startsWith("READ") || line.startsWith("LINKED"));
	}

	/**
	 * A request that lists the directories of the masked secrets ({@code /etc},
	 * {@code /etc/ssl}) or an alias of {@code /etc} whose string names no mask
	 * ({@code /proc/self/root/etc}, {@code /proc/1/root/etc}, {@code /etc/ssl/..}): the
	 * alias is refused as a request, and whatever is listed, the secrets stay unread (on
	 * the Landlock rungs the masks are matched as strings, so an alias that got through
	 * would have a rule of its own on {@code /etc}'s inode).
	 */
	@ForEachLinuxMechanism
	void maskedSecretsStayUnreadableWithTheirDirectoriesOrAnAliasListed(MechanismChoice choice) throws IOException {
		List<Path> listed = List.of(Path.of("/etc"), Path.of("/etc/ssl"), Path.of("/proc/self/root/etc"),
				Path.of("/proc/1/root/etc"), Path.of("/etc/ssl/.."));
		List<String> outcomes = new ArrayList<>();
		for (Path path : listed) {
			ExecutionRequest attempt = ExecutionRequest.builder("perl", "masked-path-attempts.pl")
				.inputFile("masked-path-attempts.pl", resource("masked-path-attempts.pl"))
				.readablePaths(path)
				.build();
			List<ExecutionResult> results = new CopyOnWriteArrayList<>();
			Throwable thrown = catchThrowable(() -> results.add(cold(choice).execute(attempt)));
			if (thrown != null) {
				assertThat(thrown).as(path.toString()).isInstanceOf(InvalidExecutionRequestException.class);
				assertThat(path).as("a real path is shown").isNotIn(Path.of("/etc"), Path.of("/etc/ssl"));
				outcomes.add(path + ": refused");
				continue;
			}
			ExecutionResult result = results.get(0);
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.stdoutText()).as(path.toString()).endsWith("done\n");
			assertThat(result.stdoutText().lines()).as(path + ": " + result.stdoutText())
				.noneMatch((line) -> line.startsWith("READ") || line.startsWith("LINKED"));
			outcomes.add(path + ": ran, nothing read");
		}
		assertThat(outcomes).containsExactly("/etc: ran, nothing read", "/etc/ssl: ran, nothing read",
				"/proc/self/root/etc: refused", "/proc/1/root/etc: refused", "/etc/ssl/..: ran, nothing read");
	}

	private static ProcessIsolatedExecutor cold(MechanismChoice choice) {
		return cold.computeIfAbsent(choice,
				(key) -> LinuxMechanisms.isolated(key, (settings) -> settings.timeout(PATIENCE)));
	}

	private static byte[] readAll(InputStream in) throws IOException {
		try (in) {
			return in.readAllBytes();
		}
	}

	private static byte[] resource(String name) throws IOException {
		try (InputStream in = StartedMarkerBreakInTests.class.getResourceAsStream(name)) {
			assertThat(in).as(name).isNotNull();
			return in.readAllBytes();
		}
	}

}
