package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.HandoverFrame;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hand-over ({@code --handover}, launcher.h section "Hand-over") through each
 * verified command line: the launcher writes its ready marker after the whole set-up and
 * its started marker after the frame, then the command's argv and environment arrive
 * exactly as framed, nothing of the wrappers' environment with them, and its stdin
 * follows the frame byte for byte; a frame that is wrong in any part is a set-up failure
 * (125, the launch token on stderr, no started marker) and the command never ran; a
 * command that execve(2) does not find is the command's 127, after the started marker.
 */
@EnabledOnOs(OS.LINUX)
class HandoverTests {

	private static final String RAN = "ran";

	private static final byte[] MARKERS = (LauncherContract.HANDOVER_READY + LauncherContract.HANDOVER_STARTED)
		.getBytes(StandardCharsets.US_ASCII);

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> executors = new ConcurrentHashMap<>();

	@AfterAll
	static void closeExecutors() {
		executors.values().forEach(ProcessIsolatedExecutor::close);
	}

	@ForEachLinuxMechanism
	void argvArrivesExactly(MechanismChoice choice, @TempDir Path directory) throws Exception {
		List<String> argv = List.of("/usr/bin/printf", "<%s>", "a b", "", "x\ty", "\u00fc", "--", "$HOME");
		Run run = handOver(choice, directory, HandoverFrame.encode(argv, Map.of("PATH", "/usr/bin:/bin")));
		assertThat(run.exitCode()).as(run.stderr()).isZero();
		assertThat(run.stdout()).isEqualTo("CAVE-RDYCAVE-RUN<a b><><x\ty><\u00fc><--><$HOME>");
	}

	/**
	 * The command's environment is the frame's, in its order, and nothing else: not the
	 * wrappers' (their token, a variable of their own) nor what outer sets for the
	 * launcher inside.
	 */
	@ForEachLinuxMechanism
	void environmentArrivesExactlyWithoutTheWrappers(MechanismChoice choice, @TempDir Path directory) throws Exception {
		Map<String, String> environment = new LinkedHashMap<>();
		environment.put("PATH", "/nowhere:/usr/bin:/bin");
		environment.put("LD_LIBRARY_PATH", "/nowhere");
		environment.put("EMPTY", "");
		environment.put("SPACES", " a = b ");
		Run run = handOver(choice, directory, HandoverFrame.encode(List.of("/usr/bin/env"), environment));
		assertThat(run.exitCode()).as(run.stderr()).isZero();
		assertThat(run.stdout()).isEqualTo(
				"CAVE-RDYCAVE-RUNPATH=/nowhere:/usr/bin:/bin\nLD_LIBRARY_PATH=/nowhere\nEMPTY=\nSPACES= a = b \n");
	}

	@ForEachLinuxMechanism
	void stdinAfterTheFrameArrivesByteForByte(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] input = new byte[300 * 1024];
		new Random(30).nextBytes(input);
		// What follows the frame may look like another frame: it is the command's.
		System.arraycopy(LauncherContract.HANDOVER_MAGIC.getBytes(StandardCharsets.US_ASCII), 0, input, 0, 8);
		byte[] frame = HandoverFrame.encode(List.of("/bin/cat"), Map.of("PATH", "/usr/bin:/bin"));
		Run run = handOver(choice, directory, concat(frame, input));
		assertThat(run.exitCode()).as(run.stderr()).isZero();
		assertThat(Arrays.copyOfRange(run.bytes(), 0, MARKERS.length)).isEqualTo(MARKERS);
		assertThat(Arrays.copyOfRange(run.bytes(), MARKERS.length, run.bytes().length)).isEqualTo(input);
	}

	/**
	 * Through the executor: the command sees its own environment, the shared-memory
	 * library as {@code LD_PRELOAD} where the mechanism needs it (after the request's own
	 * {@code LD_PRELOAD}, as before the hand-over), and none of the launcher's variables.
	 */
	@ForEachLinuxMechanism
	void executorHandsOverTheEnvironmentAndThePreload(MechanismChoice choice) {
		ProcessIsolatedExecutor executor = executor(choice);
		ExecutionResult plain = executor.execute(ExecutionRequest.of("/usr/bin/env"));
		ExecutionResult preloaded = executor
			.execute(ExecutionRequest.builder("/usr/bin/env").environment("LD_PRELOAD", "/nonexistent.so").build());
		assertThat(plain.exitCode()).as(plain.stderrText()).isZero();
		assertThat(preloaded.exitCode()).as(preloaded.stderrText()).isZero();
		assertThat(plain.stdoutText()).startsWith("PATH=" + SandboxSettings.BASELINE_PATH + "\n")
			.doesNotContain("CAVE_SANDBOX_LAUNCH_TOKEN", "CAVE_SANDBOX_WORKDIR", SharedMemoryPreload.LAUNCHER_VARIABLE);
		boolean shared = SharedMemoryPreload.neededBy(mechanism(choice));
		if (shared) {
			assertThat(plain.stdoutText()).containsPattern("(?m)^LD_PRELOAD=/\\S+/libcave-shm\\.so$")
				.containsPattern("(?m)^" + SharedMemoryPreload.DIRECTORY_VARIABLE + "=/");
			assertThat(preloaded.stdoutText())
				.containsPattern("(?m)^LD_PRELOAD=/nonexistent\\.so:/\\S+/libcave-shm\\.so$");
		}
		else {
			assertThat(plain.stdoutText()).doesNotContain("LD_PRELOAD", SharedMemoryPreload.DIRECTORY_VARIABLE);
			assertThat(preloaded.stdoutText()).containsPattern("(?m)^LD_PRELOAD=/nonexistent\\.so$");
		}
	}

	@ForEachLinuxMechanism
	void wrongMagicIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] frame = writesMarker();
		frame[0] = 'X';
		assertRefused(choice, directory, frame);
	}

	@ForEachLinuxMechanism
	void otherVersionIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] frame = writesMarker();
		System.arraycopy(integer(LauncherContract.HANDOVER_VERSION + 1), 0, frame, 8, 4);
		assertRefused(choice, directory, frame);
	}

	@ForEachLinuxMechanism
	void oversizeLengthIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] frame = writesMarker();
		System.arraycopy(integer(LauncherContract.HANDOVER_MAX + 1), 0, frame, 12, 4);
		assertRefused(choice, directory, frame);
	}

	@ForEachLinuxMechanism
	void truncatedFrameIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] frame = writesMarker();
		assertRefused(choice, directory, Arrays.copyOf(frame, frame.length - 3));
	}

	@ForEachLinuxMechanism
	void stringWithoutItsNulIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] frame = writesMarker();
		// The last string's NUL becomes a byte of the string: the length still holds.
		frame[frame.length - 1] = 'x';
		assertRefused(choice, directory, frame);
	}

	@ForEachLinuxMechanism
	void noArgumentIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		byte[] body = concat(integer(0), integer(1), "A=1\0".getBytes(StandardCharsets.US_ASCII));
		byte[] frame = concat(LauncherContract.HANDOVER_MAGIC.getBytes(StandardCharsets.US_ASCII),
				integer(LauncherContract.HANDOVER_VERSION), integer(body.length), body);
		assertRefused(choice, directory, frame);
	}

	@ForEachLinuxMechanism
	void missingCommandExits127AfterTheStartedMarker(MechanismChoice choice, @TempDir Path directory) throws Exception {
		Run run = handOver(choice, directory,
				HandoverFrame.encode(List.of("/nonexistent/command"), Map.of("PATH", "/usr/bin:/bin")));
		assertThat(run.exitCode()).as(run.stderr()).isEqualTo(127);
		assertThat(run.bytes()).isEqualTo(MARKERS);
		assertThat(run.stderr()).contains("cannot execute /nonexistent/command");
	}

	@ForEachLinuxMechanism
	void endOfFileBeforeAnyFrameIsRefused(MechanismChoice choice, @TempDir Path directory) throws Exception {
		assertRefused(choice, directory, new byte[0]);
	}

	/** A frame whose command, run, would leave {@value #RAN} in its working directory. */
	private static byte[] writesMarker() throws IOException {
		return HandoverFrame.encode(List.of("/bin/sh", "-c", "echo yes > " + RAN), Map.of("PATH", "/usr/bin:/bin"));
	}

	private static void assertRefused(MechanismChoice choice, Path directory, byte[] input) throws Exception {
		Run run = handOver(choice, directory, input);
		assertThat(run.exitCode()).as(run.stderr()).isEqualTo(LauncherContract.SETUP_FAILED);
		assertThat(run.stderr()).contains(LauncherContract.NOT_SET_UP).endsWith("[launch " + run.token() + "]\n");
		assertThat(run.stdout()).isEqualTo(LauncherContract.HANDOVER_READY);
		assertThat(directory.resolve(RAN)).as("the command never ran").doesNotExist();
	}

	/**
	 * Spawn the verified command line of {@code --handover} in the directory, as the
	 * executor does (a baseline {@code PATH}, the launch token and a variable that must
	 * not reach the command), write the input on its stdin and close it.
	 */
	private static Run handOver(MechanismChoice choice, Path directory, byte[] input) throws Exception {
		SandboxMechanism mechanism = mechanism(choice);
		String token = UUID.randomUUID().toString();
		try (Closeable grant = LinuxMechanisms.forCommandUser(mechanism, directory)) {
			ProcessBuilder builder = new ProcessBuilder(
					mechanism.commandLine(Launcher.HANDOVER, directory.toRealPath(), false))
				.directory(directory.toFile());
			builder.environment().clear();
			builder.environment()
				.putAll(Map.of("PATH", SandboxSettings.BASELINE_PATH, LauncherContract.TOKEN_VARIABLE, token,
						"WRAPPER_ONLY", "leaked"));
			Process process = builder.start();
			CompletableFuture<byte[]> stdout = CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()));
			CompletableFuture<byte[]> stderr = CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
			try (OutputStream stdin = process.getOutputStream()) {
				stdin.write(input);
			}
			catch (IOException ex) {
				// the launcher refused the frame before it read the rest
			}
			assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the sandbox ended").isTrue();
			return new Run(process.exitValue(), stdout.get(60, TimeUnit.SECONDS), stderr.get(60, TimeUnit.SECONDS),
					token);
		}
	}

	private static SandboxMechanism mechanism(MechanismChoice choice) {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		assertThat(mechanism).isNotNull();
		return mechanism;
	}

	private static ProcessIsolatedExecutor executor(MechanismChoice choice) {
		return executors.computeIfAbsent(choice,
				(key) -> LinuxMechanisms.isolated(key, (settings) -> settings.timeout(Duration.ofSeconds(60))));
	}

	private static byte[] readAll(InputStream in) {
		try (in) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static byte[] integer(int value) {
		return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array();
	}

	private static byte[] concat(byte[]... parts) {
		ByteArrayOutputStream all = new ByteArrayOutputStream();
		for (byte[] part : parts) {
			all.writeBytes(part);
		}
		return all.toByteArray();
	}

	private record Run(int exitCode, byte[] bytes, byte[] errors, String token) {

		String stdout() {
			return new String(this.bytes, StandardCharsets.UTF_8);
		}

		String stderr() {
			return new String(this.errors, StandardCharsets.UTF_8);
		}

	}

}
