package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

import com.sun.net.httpserver.HttpServer;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.process.ProcessRunnerTests;
import dev.cavesandbox.internal.process.StartedProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Long-running processes of {@link ProcessIsolatedExecutor#start(ExecutionRequest)}
 * ({@link StartedProcess}) on real sandboxes of every Linux mechanism, and unisolated
 * where the behaviour is the executor's rather than the sandbox's: a conversation over
 * the pipes, the end and its teardown (slot, private directory), destroy, the request's
 * timeout, close, egress, network isolation and death with the JVM. Loopback only.
 */
@EnabledOnOs(OS.LINUX)
class SandboxedProcessTests {

	private static final Duration GRACE = Duration.ofMillis(300);

	/**
	 * The settings' timeout of the shared executors: short, so that a started process
	 * without a timeout of its own visibly outlives it.
	 */
	private static final Duration SETTINGS_TIMEOUT = Duration.ofSeconds(2);

	/** A generous "it did not hang" limit, far above every timeout and grace period. */
	private static final Duration NO_HANG = Duration.ofSeconds(60);

	private static final String ECHO_LINES = "while read l; do echo \"got $l\"; done";

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> isolated = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor.unisolated(settings().build());
	}

	@AfterAll
	static void closeExecutors() {
		unisolated.close();
		isolated.values().forEach(ProcessIsolatedExecutor::close);
	}

	private static SandboxSettings.Builder settings() {
		return SandboxSettings.builder().timeout(SETTINGS_TIMEOUT).killGracePeriod(GRACE);
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return isolated.computeIfAbsent(mechanism, (choice) -> LinuxMechanisms.isolated(choice,
				(settings) -> settings.timeout(SETTINGS_TIMEOUT).killGracePeriod(GRACE)));
	}

	@ForEachLinuxMechanism
	void conversationOverStdinAndStdoutRunsLineByLine(MechanismChoice mechanism) throws Exception {
		assertConversation(isolated(mechanism), true);
	}

	@Test
	void conversationOverStdinAndStdoutRunsLineByLineUnisolated() throws Exception {
		assertConversation(unisolated, false);
	}

	private static void assertConversation(ProcessIsolatedExecutor executor, boolean networkIsolated) throws Exception {
		try (SandboxedProcess process = executor.start(ExecutionRequest.of("sh", "-c", ECHO_LINES))) {
			assertThat(process.isolation().networkIsolated()).isEqualTo(networkIsolated);
			PrintStream stdin = new PrintStream(process.stdin(), true, StandardCharsets.UTF_8);
			BufferedReader stdout = reader(process.stdout());
			for (int i = 0; i < 50; i++) {
				String line = "line " + i + " " + UUID.randomUUID();
				stdin.println(line);
				assertThat(stdout.readLine()).isEqualTo("got " + line);
				assertThat(process.isAlive()).isTrue();
			}
			assertThat(process.exitCode()).isEmpty();
			stdin.close();
			assertThat(process.waitFor(NO_HANG)).isTrue();
			assertThat(process.isAlive()).isFalse();
			assertThat(process.exitCode()).hasValue(0);
			assertThat(process.onExit()).isCompletedWithValue(process);
			assertThat(process.timedOut()).isFalse();
			assertThat(process.commandStarted()).isTrue();
			assertThat(stdout.readLine()).as("end of stdout").isNull();
		}
	}

	@ForEachLinuxMechanism
	void stderrIsReadableAndTheExitCodeIsTheCommands(MechanismChoice mechanism) throws Exception {
		String message = "complaint " + UUID.randomUUID();
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.of("sh", "-c", "echo '" + message + "' >&2; exit 7"));
		assertThat(reader(process.stderr()).readLine()).isEqualTo(message);
		assertThat(process.waitFor()).isEqualTo(7);
		assertThat(process.exitCode()).hasValue(7);
		assertThat(process.isAlive()).isFalse();
		assertThat(process.pid()).isPositive();
		assertThat(process.commandStarted()).as("its stdout never read").isTrue();
	}

	/**
	 * A command that ends as the launcher does when the set-up fails (exit 125, a last
	 * stderr line like the launcher's) was started, and says so: its caller does not take
	 * it for a sandbox that could not be set up (which
	 * {@code ProcessIsolatedExecutorTests#startedProcessWhoseWrapperIsKilledDuringSetUpEndsWithTheSetUpFailedExitCode}
	 * shows is not started).
	 */
	@ForEachLinuxMechanism
	void commandStartedTellsACommandsOwnExit125FromASetUpFailure(MechanismChoice mechanism) throws Exception {
		SandboxedProcess forger = isolated(mechanism).start(ExecutionRequest.of("sh", "-c",
				"echo 'cave-sandbox-launcher: cannot set the sandbox up' >&2; exit 125"));
		assertThat(forger.waitFor()).isEqualTo(125);
		assertThat(forger.commandStarted()).isTrue();
	}

	@Test
	void commandStartedIsKnownOnlyOnceTheProcessHasEnded() throws Exception {
		try (SandboxedProcess process = unisolated.start(ExecutionRequest.of("sleep", "60"))) {
			assertThatIllegalStateException().isThrownBy(process::commandStarted)
				.withMessageContaining("still running");
		}
	}

	/**
	 * destroy() ends a tree of two children that ignore SIGTERM, one of them started
	 * after its attempt at a session of its own ({@code setsid}) was refused, as on every
	 * mechanism ({@link NewSession}), which the command's stderr shows.
	 */
	@ForEachLinuxMechanism
	void destroyKillsTheWholeTreeIncludingChildrenThatIgnoreTerm(MechanismChoice mechanism) throws Exception {
		assertDestroyKillsTheTree(isolated(mechanism), NewSession.refused(mechanism));
	}

	@Test
	void destroyKillsTheWholeTreeIncludingChildrenThatIgnoreTermUnisolated() throws Exception {
		assertDestroyKillsTheTree(unisolated, false);
	}

	private static void assertDestroyKillsTheTree(ProcessIsolatedExecutor executor, boolean sessionRefused)
			throws Exception {
		String marker = marker();
		String script = NewSession.setsid(sessionRefused, "sh -c 'trap \"\" TERM; exec sleep " + marker + "1'")
				+ " &\nsh -c 'trap \"\" TERM; exec sleep " + marker + "2' &\n" + "echo started\n" + "wait\n";
		SandboxedProcess process = executor.start(ExecutionRequest.of("sh", "-c", script));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 2);
			if (sessionRefused) {
				assertThat(reader(process.stderr()).readLine()).contains(NewSession.REFUSED);
			}
			CompletableFuture<Void> concurrent = CompletableFuture.runAsync(process::destroy);
			process.destroy();
			// Returned only after the teardown: nothing of the tree is left.
			assertThat(process.isAlive()).isFalse();
			assertThat(ProcessRunnerTests.processesWith(marker)).isEmpty();
			assertThat(concurrent).succeedsWithin(NO_HANG);
			process.destroy();
			assertThat(process.timedOut()).isFalse();
			assertThat(process.exitCode()).isPresent();
		}
		finally {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/**
	 * A wrapper killed from outside (the OOM killer, an operator) can end before its
	 * sandbox does: the end is reported only once the sandbox's processes are gone too.
	 */
	@ForEachLinuxMechanism
	void aWrapperKilledFromOutsideEndsOnlyWithItsSandbox(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.of("sh", "-c", "sleep " + marker + " & echo started; wait"));
		try {
			assertThat(reader(process.stdout()).readLine()).isEqualTo("started");
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 1);
			assertThat(ProcessHandle.of(process.pid()).orElseThrow().destroyForcibly()).isTrue();
			assertThat(process.waitFor(NO_HANG)).isTrue();
			assertThat(ProcessRunnerTests.processesWith(marker)).isEmpty();
			assertThat(process.exitCode()).hasValue(137);
		}
		finally {
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@ForEachLinuxMechanism
	void theRequestsTimeoutTerminatesTheTree(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		SandboxedProcess process = isolated(mechanism).start(ExecutionRequest
			.builder("sh", "-c", "trap 'echo got-term; exit 3' TERM; sleep " + marker + " & echo started; wait")
			.timeout(Duration.ofSeconds(1))
			.build());
		BufferedReader stdout = reader(process.stdout());
		assertThat(stdout.readLine()).isEqualTo("started");
		assertThat(process.waitFor(NO_HANG)).isTrue();
		assertThat(process.timedOut()).isTrue();
		assertThat(ProcessRunnerTests.processesWith(marker)).isEmpty();
	}

	/**
	 * The settings' timeout does not apply to a started process: a server waiting for its
	 * input still answers well after it.
	 */
	@ForEachLinuxMechanism
	void withoutATimeoutOfItsOwnAServerOutlivesTheSettingsTimeout(MechanismChoice mechanism) throws Exception {
		try (SandboxedProcess process = isolated(mechanism).start(ExecutionRequest.of("sh", "-c", ECHO_LINES))) {
			Thread.sleep(SETTINGS_TIMEOUT.plus(GRACE).plusSeconds(1).toMillis());
			assertThat(process.isAlive()).isTrue();
			process.stdin().write("late\n".getBytes(StandardCharsets.UTF_8));
			process.stdin().flush();
			assertThat(reader(process.stdout()).readLine()).isEqualTo("got late");
			process.stdin().close();
			assertThat(process.waitFor()).isZero();
			assertThat(process.timedOut()).isFalse();
		}
	}

	/**
	 * A started process holds its slot until it has ended: another start or execution
	 * waits the queue timeout and fails; after the end, both get it.
	 */
	@ForEachLinuxMechanism
	void aStartedProcessHoldsItsSlotUntilItEnds(MechanismChoice mechanism) throws Exception {
		try (ProcessIsolatedExecutor executor = oneSlot(mechanism)) {
			SandboxedProcess process = executor.start(ExecutionRequest.of("cat"));
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> executor.start(ExecutionRequest.of("true")));
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> executor.execute(ExecutionRequest.of("true")));
			process.stdin().close();
			assertThat(process.waitFor(NO_HANG)).isTrue();
			assertThat(executor.execute("true").exitCode()).isZero();
			SandboxedProcess next = executor.start(ExecutionRequest.of("true"));
			assertThat(next.waitFor()).isZero();
		}
	}

	/**
	 * A request that start() refuses takes no slot: with one slot and a short queue
	 * timeout, the next start runs at once.
	 */
	@Test
	void refusedRequestsLeaveNoSlotTaken() throws Exception {
		try (ProcessIsolatedExecutor executor = oneSlot(MechanismChoice.BWRAP)) {
			List<Function<ExecutionRequest.Builder, ExecutionRequest.Builder>> refused = List.of(
					(builder) -> builder.stdin(new byte[1]),
					(builder) -> builder.stdoutSink(OutputStream.nullOutputStream()),
					(builder) -> builder.stderrSink(OutputStream.nullOutputStream()),
					(builder) -> builder.maxOutputBytes(10));
			for (Function<ExecutionRequest.Builder, ExecutionRequest.Builder> setting : refused) {
				ExecutionRequest request = setting.apply(ExecutionRequest.builder("true")).build();
				assertThatExceptionOfType(InvalidExecutionRequestException.class)
					.isThrownBy(() -> executor.start(request))
					.withMessageContaining("leave it unset")
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"));
			}
			assertThatExceptionOfType(CommandNotFoundException.class)
				.isThrownBy(() -> executor.start(ExecutionRequest.of("no-such-command-" + UUID.randomUUID())));
			SandboxedProcess process = executor.start(ExecutionRequest.of("true"));
			assertThat(process.waitFor()).isZero();
		}
	}

	private static ProcessIsolatedExecutor oneSlot(MechanismChoice mechanism) {
		return LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).queueTimeout(Duration.ofMillis(300)).killGracePeriod(GRACE));
	}

	@ForEachLinuxMechanism
	void closingTheExecutorKillsAStartedProcess(MechanismChoice mechanism) throws Exception {
		String marker = marker();
		ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism, (settings) -> settings);
		try {
			SandboxedProcess process = executor.start(ExecutionRequest.of("sleep", marker));
			await().atMost(NO_HANG).until(() -> ProcessRunnerTests.sleeping(marker).size() == 1);
			executor.close();
			assertThat(process.isAlive()).as("close waits for the teardown").isFalse();
			// The seccomp mechanism's subreaper has had its SIGKILL: not a speed bound.
			await().atMost(Duration.ofSeconds(10)).until(() -> ProcessRunnerTests.processesWith(marker).isEmpty());
			assertThatExceptionOfType(ExecutionCancelledException.class)
				.isThrownBy(() -> executor.start(ExecutionRequest.of("true")));
		}
		finally {
			executor.close();
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@ForEachLinuxMechanism
	void thePrivateWorkingDirectoryIsRemovedAfterTheEnd(MechanismChoice mechanism) throws Exception {
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.of("sh", "-c", "echo data > file; pwd; read l || true"));
		Path directory = Path.of(reader(process.stdout()).readLine());
		// <home>/<tag><random>: nine base-36 characters, short for a program's own
		// sockets
		assertThat(directory.getFileName().toString()).matches("[0-9a-z]{9}");
		assertThat(directory.resolve("file")).exists();
		process.stdin().close();
		assertThat(process.waitFor()).isZero();
		// Given back: emptied for reuse or removed, by the cleaner in the background.
		await().atMost(NO_HANG)
			.untilAsserted(() -> assertThat(directory).satisfiesAnyOf((path) -> assertThat(path).doesNotExist(),
					(path) -> assertThat(path).isEmptyDirectory()));
	}

	@ForEachLinuxMechanism
	void inputFilesAreThereForAStartedProcess(MechanismChoice mechanism) throws Exception {
		String content = "input " + UUID.randomUUID();
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.builder("sh", "-c", "read l; cat in/put.txt")
				.inputFile("in/put.txt", content.getBytes(StandardCharsets.UTF_8))
				.build());
		process.stdin().close();
		assertThat(new String(process.stdout().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(content);
		assertThat(process.waitFor()).isZero();
	}

	/**
	 * The output files of a started process are read once it has ended, before its
	 * directory is removed; asked for while it runs, they are not there yet.
	 */
	@ForEachLinuxMechanism
	void outputFilesOfAStartedProcessAreThereOnceItHasEnded(MechanismChoice mechanism) throws Exception {
		String line = "written " + UUID.randomUUID();
		SandboxedProcess process = isolated(mechanism)
			.start(ExecutionRequest.builder("sh", "-c", "read l; mkdir out; printf %s \"$l\" > out/line.txt")
				.outputFiles("out/*.txt")
				.outputFile("missing.txt")
				.build());
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(process::outputFiles)
			.withMessageContaining("the process is still running");
		PrintStream stdin = new PrintStream(process.stdin(), true, StandardCharsets.UTF_8);
		stdin.println(line);
		stdin.close();
		assertThat(process.waitFor()).isZero();
		OutputFiles files = process.outputFiles();
		assertThat(files.content("out/line.txt"))
			.hasValueSatisfying((content) -> assertThat(content).asString(StandardCharsets.UTF_8).isEqualTo(line));
		assertThat(files.missing()).containsExactly("missing.txt");
	}

	@Test
	void aStartedProcessWithoutOutputFilesHasNone() throws Exception {
		SandboxedProcess process = unisolated.start(ExecutionRequest.of("true"));
		assertThat(process.waitFor()).isZero();
		assertThat(process.outputFiles()).isSameAs(OutputFiles.NONE);
	}

	/**
	 * Where the executor cannot isolate, a started process runs unisolated and says so;
	 * the teardown is the same.
	 */
	@Test
	void unisolatedStartReportsNoIsolation() throws Exception {
		SandboxedProcess process = unisolated.start(ExecutionRequest.of("sh", "-c", "echo $$"));
		long shell = Long.parseLong(reader(process.stdout()).readLine().trim());
		assertThat(process.waitFor()).isZero();
		assertThat(process.isolation()).isEqualTo(Isolation.NONE);
		assertThat(shell).as("the command is the direct child").isEqualTo(process.pid());
	}

	static Stream<MechanismChoice> mechanismsWithANetworkNamespace() {
		return Stream.of(MechanismChoice.BWRAP, MechanismChoice.UNSHARE, MechanismChoice.NAMESPACES);
	}

	/**
	 * A started process with an allow-list gets the proxy's variables and reaches the
	 * allowed server (this test's, on loopback, by a name only the proxy's resolver
	 * knows); its decisions are there while it runs and after its end.
	 */
	@ParameterizedTest
	@MethodSource("mechanismsWithANetworkNamespace")
	void aStartedProcessReachesItsAllowedHostsThroughTheProxy(MechanismChoice mechanism) throws Exception {
		List<String> received = Collections.synchronizedList(new ArrayList<>());
		HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		server.createContext("/", (exchange) -> {
			received.add(exchange.getRequestURI().getPath());
			byte[] answer = "served\n".getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(200, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		});
		server.start();
		String service = "service.test:" + server.getAddress().getPort();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.allowPrivateDestinations(true))) {
			executor.resolveHostsWith((host) -> List.of(InetAddress.getByAddress(host, new byte[] { 127, 0, 0, 1 })));
			SandboxedProcess process = executor.start(ExecutionRequest
				.builder("sh", "-c",
						"echo $HTTP_PROXY; read l; curl -sS http://" + service + "/started; read l || true")
				.allowedHosts(service)
				.build());
			BufferedReader stdout = reader(process.stdout());
			assertThat(stdout.readLine()).isEqualTo("http://127.0.0.1:" + SandboxSettings.Egress.PROXY_PORT);
			assertThat(process.egressDecisions()).isEmpty();
			process.stdin().write("go\n".getBytes(StandardCharsets.UTF_8));
			process.stdin().flush();
			assertThat(stdout.readLine()).isEqualTo("served");
			assertThat(process.egressDecisions()).singleElement().satisfies((decision) -> {
				assertThat(decision.host()).isEqualTo("service.test");
				assertThat(decision.allowed()).isTrue();
			});
			process.stdin().close();
			assertThat(process.waitFor()).isZero();
			assertThat(process.egressDecisions()).hasSize(1);
			assertThat(received).containsExactly("/started");
		}
		finally {
			server.stop(0);
		}
	}

	/**
	 * A started process cannot reach the host's loopback: nothing it sends arrives before
	 * the unisolated control's message.
	 */
	@ForEachLinuxMechanism
	void aStartedProcessCannotReachTheHostsLoopback(MechanismChoice mechanism) throws Exception {
		try (LoopbackListeners.Tcp listener = new LoopbackListeners.Tcp(InetAddress.getLoopbackAddress())) {
			String send = "exec 3<>/dev/tcp/127.0.0.1/" + listener.port() + " && echo %s >&3";
			SandboxedProcess process = isolated(mechanism)
				.start(ExecutionRequest.of("bash", "-c", send.formatted("isolated")));
			assertThat(process.waitFor()).isNotZero();
			assertThat(new String(process.stderr().readAllBytes(), StandardCharsets.UTF_8)).isNotEmpty();
			SandboxedProcess control = unisolated.start(ExecutionRequest.of("bash", "-c", send.formatted("control")));
			assertThat(control.waitFor()).isZero();
			assertThat(listener.awaitAccepted("control\n")).containsExactly("control\n");
		}
	}

	/**
	 * A JVM killed with SIGKILL takes its started sandboxes with it: the parent-death
	 * signal of the spawn thread that spawned them.
	 */
	@ForEachLinuxMechanism
	@Timeout(180)
	void killedJvmTakesItsStartedProcessesWithIt(MechanismChoice mechanism, @TempDir Path workDirectory)
			throws Exception {
		String marker = marker();
		Process jvm = ProcessRunnerTests
			.childJvm(List.of(), StartedProcessHolderMain.class, marker, mechanism.name(), workDirectory.toString())
			.start();
		try (BufferedReader out = reader(jvm.getInputStream())) {
			assertThat(out.readLine()).as("child JVM output").isEqualTo("READY");
			assertThat(ProcessRunnerTests.sleeping(marker)).hasSize(2);
			jvm.destroyForcibly();
			assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
			await().atMost(Duration.ofSeconds(10)).until(() -> ProcessRunnerTests.processesWith(marker).isEmpty());
		}
		finally {
			jvm.destroyForcibly();
			ProcessRunnerTests.processesWith(marker).forEach(ProcessHandle::destroyForcibly);
		}
	}

	private static BufferedReader reader(InputStream stream) {
		return new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
	}

	/** A number that no other process's command line has: a sleep's duration. */
	private static String marker() {
		return "7" + (100000 + Math.abs(UUID.randomUUID().getLeastSignificantBits() % 800000));
	}

}
