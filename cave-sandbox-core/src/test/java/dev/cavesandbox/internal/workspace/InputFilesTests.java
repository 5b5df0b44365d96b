package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The request's input files ({@link ExecutionRequest.Builder#inputFile}), written by the
 * executor into the private working directory, on every Linux mechanism and unisolated.
 * Run as root (as the tests run here), the command is the command user (65534) on every
 * mechanism: in a user namespace of its own with {@code CAP_DAC_OVERRIDE} over root's
 * files, or on the seccomp mechanism a uid of the host that gets the files' group.
 */
@EnabledOnOs(OS.LINUX)
class InputFilesTests {

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> isolated = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor.unisolated(SandboxSettings.builder().build());
	}

	@AfterAll
	static void closeExecutors() {
		unisolated.close();
		isolated.values().forEach(ProcessIsolatedExecutor::close);
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return isolated.computeIfAbsent(mechanism,
				(choice) -> LinuxMechanisms.isolated(choice, (settings) -> settings));
	}

	@ForEachLinuxMechanism
	void theCommandReadsAndWritesItsInputFilesInSubdirectories(MechanismChoice mechanism) throws IOException {
		assertInputFilesReadAndWritten(isolated(mechanism));
	}

	@Test
	void theCommandReadsAndWritesItsInputFilesInSubdirectoriesUnisolated() throws IOException {
		assertInputFilesReadAndWritten(unisolated);
	}

	private static void assertInputFilesReadAndWritten(ProcessIsolatedExecutor executor) throws IOException {
		String top = "top " + UUID.randomUUID() + "\n";
		byte[] binary = new byte[256];
		for (int i = 0; i < binary.length; i++) {
			binary[i] = (byte) i;
		}
		String script = "cat top.txt; od -An -tx1 -v deep/er/data.bin | tr -d ' \\n' | head -c 16; echo;"
				+ " echo appended >> top.txt && tail -n1 top.txt; echo new > deep/er/new.txt && cat deep/er/new.txt;"
				+ " id -u";
		ExecutionResult result = executor.execute(ExecutionRequest.builder("sh", "-c", script)
			.inputFile("top.txt", top.getBytes(StandardCharsets.UTF_8))
			.inputFile("deep/er/data.bin", binary)
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		List<String> lines = result.stdoutText().lines().toList();
		assertThat(lines).hasSize(5);
		assertThat(lines.get(0) + "\n").isEqualTo(top);
		assertThat(lines.get(1)).isEqualTo("0001020304050607");
		assertThat(lines.get(2)).isEqualTo("appended");
		assertThat(lines.get(3)).isEqualTo("new");
		boolean rootJvm = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue() == 0;
		if (rootJvm && executor.isolation().mechanism().equals(SeccompMechanism.NAME)) {
			SandboxSettings.CommandUserRange range = SandboxSettings.CommandUserRange.DEFAULT;
			assertThat(Long.parseLong(lines.get(4))).as("a uid of the command user range, of this execution's own")
				.isBetween(range.first(), range.last());
		}
		else if (rootJvm && executor.isolation().networkIsolated()) {
			assertThat(lines.get(4)).as("the command user of a root JVM")
				.isEqualTo(String.valueOf(SandboxSettings.Linux.DEFAULT_COMMAND_USER));
		}
	}

	@ForEachLinuxMechanism
	void aStartedProcessReadsItsInputFiles(MechanismChoice mechanism) throws Exception {
		String content = "started " + UUID.randomUUID();
		SandboxedProcess process = isolated(mechanism).start(ExecutionRequest.builder("cat", "sub/in.txt")
			.inputFile("sub/in.txt", content.getBytes(StandardCharsets.UTF_8))
			.build());
		assertThat(new String(process.stdout().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(content);
		assertThat(process.waitFor()).isZero();
	}

	/**
	 * Only the JVM's user (and on the seccomp mechanism the command user's group) may
	 * open them: the files are written owner-only, and given to the group only where the
	 * command user needs it.
	 */
	@ForEachLinuxMechanism
	void inputFilesAreNotOpenToOthers(MechanismChoice mechanism) {
		boolean grantedToTheCommandUser = ProcessIsolatedExecutor
			.commandGroup(LinuxMechanisms.verified(SandboxSettings.builder().mechanism(mechanism).build())) >= 0;
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("stat", "-c", "%a", "a/b.txt", "a")
				.inputFile("a/b.txt", new byte[] { 1 })
				.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().lines().toList())
			.containsExactlyElementsOf(grantedToTheCommandUser ? List.of("660", "770") : List.of("600", "700"));
	}

	/**
	 * Input files go into a private directory that is removed with them: the next
	 * execution in a reused directory finds none.
	 */
	@ForEachLinuxMechanism
	void inputFilesAreGoneAfterTheExecution(MechanismChoice mechanism, @TempDir Path work) throws Exception {
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.maxConcurrent(1).workDirectory(work))) {
			ExecutionResult first = executor
				.execute(ExecutionRequest.builder("pwd").inputFile("left.txt", new byte[] { 1 }).build());
			Path used = Path.of(first.stdoutText().trim());
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(used).satisfiesAnyOf((path) -> assertThat(path).doesNotExist(),
						(path) -> assertThat(path).isEmptyDirectory()));
			assertThat(executor.execute("ls", "-A").stdoutText()).isEmpty();
		}
	}

}
