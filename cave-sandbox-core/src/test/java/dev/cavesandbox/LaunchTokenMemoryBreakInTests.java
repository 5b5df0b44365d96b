package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Red-team attempts (redteam14) on the launch token (launcher.h's
 * {@code CAVE_SANDBOX_LAUNCH_TOKEN}, which marks {@code outer}'s own failure lines)
 * beyond the original environment block that
 * {@code ContainInPlaceBreakInTests#noProcessOfASandboxHoldsTheLaunchTokenInItsOriginalEnvironment}
 * reads: the memory of every process under {@code outer}. {@code outer} keeps a copy of
 * the token on its heap for its failure lines ({@code take_launch_token}); a process
 * forked from it (the seccomp mechanism's {@code contain}, run in place in outer's child,
 * and every fork of contain before its execve) inherits that heap, and
 * {@code run_contain} is meant to forget the token: "the launch token forgotten" (its
 * bytes zeroed, then freed). A zeroing right before {@code free(3)} is a dead store to
 * the compiler, which may drop it (the C standard's as-if rule; {@code explicit_bzero(3)}
 * exists for this), so the test reads the memory itself.
 * <p>
 * Read by this JVM as the host's root ({@code /proc/PID/mem} needs ptrace access, which
 * root has to every process): every writable mapping of every process under outer, while
 * the command sleeps; {@code outer} itself, which keeps the token on purpose, is the
 * control that shows the scan finds it.
 */
@EnabledOnOs(OS.LINUX)
class LaunchTokenMemoryBreakInTests {

	/**
	 * The mechanism's verified command line with a launch token in outer's environment,
	 * as the executor gives it: outer's heap holds the token (the control), no process
	 * under outer holds it anywhere in its writable memory.
	 */
	@ForEachLinuxMechanism
	void noProcessUnderOuterHoldsTheLaunchTokenInItsMemory(MechanismChoice choice, @TempDir Path work)
			throws Exception {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		String token = UUID.randomUUID().toString();
		ProcessBuilder builder = new ProcessBuilder(
				mechanism.commandLine(List.of("sh", "-c", "echo up; exec sleep 30"), work.toRealPath(), false))
			.directory(work.toFile())
			.redirectErrorStream(true);
		builder.environment().put(LauncherContract.TOKEN_VARIABLE, token);
		Process process = builder.start();
		try (InputStream output = process.getInputStream()) {
			// Read once the command runs: outer took the token before it started
			// anything.
			assertThat(new String(output.readNBytes(3), StandardCharsets.UTF_8)).isEqualTo("up\n");
			byte[] wanted = token.getBytes(StandardCharsets.US_ASCII);
			assertThat(holds(process.pid(), wanted)).as("the control: outer's memory holds the token").isTrue();
			List<String> holders = new ArrayList<>();
			List<Long> under = process.descendants().map(ProcessHandle::pid).toList();
			for (long pid : under) {
				if (holds(pid, wanted)) {
					holders.add(pid + " " + commandLine(pid));
				}
			}
			String report = choice + ": " + under.size() + " processes under outer, holding the token " + holders;
			System.out.println(LaunchTokenMemoryBreakInTests.class.getSimpleName() + " " + report);
			assertThat(under).as("processes under outer").isNotEmpty();
			assertThat(holders).as(report).isEmpty();
		}
		finally {
			process.descendants().forEach(ProcessHandle::destroyForcibly);
			process.destroyForcibly();
			process.waitFor();
		}
	}

	/**
	 * Whether a process's writable memory (each {@code rw} mapping of
	 * {@code /proc/PID/maps}: data, heap, stack, anonymous) holds the bytes. Mappings
	 * that cannot be read are skipped.
	 */
	private static boolean holds(long pid, byte[] wanted) throws IOException {
		List<String> maps;
		try {
			maps = Files.readAllLines(Path.of("/proc", Long.toString(pid), "maps"));
		}
		catch (IOException ex) {
			return false;
		}
		try (RandomAccessFile memory = new RandomAccessFile("/proc/" + pid + "/mem", "r")) {
			for (String map : maps) {
				String[] fields = map.split("\\s+");
				if (!fields[1].startsWith("rw")) {
					continue;
				}
				String[] range = fields[0].split("-");
				long start = Long.parseUnsignedLong(range[0], 16);
				long end = Long.parseUnsignedLong(range[1], 16);
				if (end - start > 64L * 1024 * 1024) {
					continue;
				}
				byte[] bytes = new byte[(int) (end - start)];
				try {
					memory.seek(start);
					memory.readFully(bytes);
				}
				catch (IOException ex) {
					continue;
				}
				if (indexOf(bytes, wanted) >= 0) {
					return true;
				}
			}
		}
		catch (IOException ex) {
			return false;
		}
		return false;
	}

	private static int indexOf(byte[] bytes, byte[] wanted) {
		search: for (int i = 0; i <= bytes.length - wanted.length; i++) {
			for (int j = 0; j < wanted.length; j++) {
				if (bytes[i + j] != wanted[j]) {
					continue search;
				}
			}
			return i;
		}
		return -1;
	}

	private static String commandLine(long pid) {
		try {
			return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
					StandardCharsets.UTF_8)
				.replace('\0', ' ')
				.trim();
		}
		catch (IOException ex) {
			return "?";
		}
	}

}
