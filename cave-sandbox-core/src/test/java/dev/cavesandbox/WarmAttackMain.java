package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;

/**
 * Run in a child JVM of another user (nobody) by {@link WarmBreakInTests} with a
 * mechanism, a work directory, a mark and a secret: the attacker A beside two warm
 * sandboxes B of one executor, as
 * {@link WarmBreakInTests#attackerBesideWarmSandboxesReachesNothingOfThem} runs it in the
 * test's JVM. Prints what it saw, one line each ({@code PROTECTED pid cmdline},
 * {@code PROBE line}, {@code B exit warm timedOut stdout}, {@code WATCH line},
 * {@code SECRET exit warm stdout}, {@code LISTING holdsMark}), then {@code END}; no
 * assertion here, the test judges.
 */
public final class WarmAttackMain {

	/** The variable that holds A's mark. */
	static final String MARK_VARIABLE = "CAVE_WARM_MARK";

	/** The variable that holds B's secret. */
	static final String SECRET_VARIABLE = "CAVE_WARM_SECRET";

	private WarmAttackMain() {
	}

	public static void main(String[] args) throws Exception {
		MechanismChoice choice = MechanismChoice.valueOf(args[0]);
		Path work = Path.of(args[1]);
		String mark = System.getenv(MARK_VARIABLE);
		String secret = System.getenv(SECRET_VARIABLE);
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(choice)
			.workDirectory(work)
			.timeout(Duration.ofSeconds(120))
			.warm(new WarmPoolSettings(2, Duration.ofSeconds(300)))
			.build();
		IsolationCapability capability = new NetworkIsolationProbe(settings).probe();
		System.out.println("VERDICT " + capability.available() + " " + capability.mechanismName());
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			run(executor, work, mark, secret);
		}
		System.out.println("END");
		System.out.flush();
		System.exit(0);
	}

	private static void run(ProcessIsolatedExecutor executor, Path work, String mark, String secret) throws Exception {
		awaitReady(executor);
		byte[] script;
		try (InputStream in = WarmAttackMain.class.getResourceAsStream("warm-attacker.pl")) {
			script = in.readAllBytes();
		}
		SandboxedProcess attacker = executor
			.start(ExecutionRequest.builder("perl", "warm-attacker.pl", mark, work.toString())
				.inputFile("warm-attacker.pl", script)
				.build());
		try {
			BufferedReader report = new BufferedReader(
					new InputStreamReader(attacker.stdout(), StandardCharsets.UTF_8));
			OutputStream commands = attacker.stdin();
			awaitReady(executor);
			Map<Long, String> protectedProcesses = protectedProcesses(work);
			protectedProcesses.forEach((pid, line) -> System.out.println("PROTECTED " + pid + " " + line));
			String targets = protectedProcesses.keySet()
				.stream()
				.filter((pid) -> pid != ProcessHandle.current().pid())
				.map(String::valueOf)
				.collect(Collectors.joining(" "));
			command(commands, report, "probe " + targets).forEach((line) -> System.out.println("PROBE " + line));
			for (int round = 0; round < 2; round++) {
				ExecutionResult result = executor.execute(inspection());
				System.out.println("B " + result.exitCode() + " " + result.warm() + " " + result.timedOut() + " "
						+ result.stdoutText().replace("\n", "|") + " " + result.stderrText().replace("\n", "|"));
			}
			awaitReady(executor);
			commands.write(("watch " + secret + " 8\n").getBytes(StandardCharsets.UTF_8));
			commands.flush();
			ExecutionResult claimed = executor.execute(secretClaim(secret));
			System.out.println("SECRET " + claimed.exitCode() + " " + claimed.warm() + " "
					+ claimed.stdoutText().replace("\n", "|"));
			until(report, "DONE").forEach((line) -> System.out.println("WATCH " + line));
			command(commands, report, "daemon").forEach((line) -> System.out.println("DAEMON " + line));
			commands.close();
			attacker.onExit().get(120, TimeUnit.SECONDS);
			ExecutionResult listing = executor.execute("/bin/sh", "-c",
					"for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done");
			System.out.println("LISTING " + listing.exitCode() + " " + listing.stdoutText().contains(mark));
			System.out.println("SURVIVORS " + ProcessHandle.allProcesses()
				.filter((process) -> process.pid() != ProcessHandle.current().pid()
						&& commandLine(process.pid()).contains(mark))
				.count());
		}
		finally {
			attacker.close();
		}
	}

	private static List<String> command(OutputStream commands, BufferedReader report, String command)
			throws IOException {
		commands.write((command + "\n").getBytes(StandardCharsets.UTF_8));
		commands.flush();
		return until(report, "DONE");
	}

	private static void awaitReady(ProcessIsolatedExecutor executor) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
		while (executor.warmPool().ready() < 2 && System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
		System.out.println("POOL " + executor.warmPool());
	}

	/**
	 * B's request after the probe: its working and shared-memory directories, whether a
	 * forged variable reached it, and its input file.
	 */
	static ExecutionRequest inspection() {
		return ExecutionRequest
			.builder("/bin/sh", "-c",
					"ls -A; echo ---; [ -z \"$CAVE_SANDBOX_SHM\" ] || ls -A \"$CAVE_SANDBOX_SHM\"; "
							+ "echo ---; env | grep -c FORGED; cat in.txt")
			.inputFile("in.txt", "mine\n".getBytes(StandardCharsets.UTF_8))
			.timeout(Duration.ofSeconds(60))
			.build();
	}

	/**
	 * B's request that holds a secret in an input file and a variable for five seconds.
	 */
	static ExecutionRequest secretClaim(String secret) {
		return ExecutionRequest
			.builder("/bin/sh", "-c", "cp secret.txt copy.txt; sleep 5; cat secret.txt; echo \"$SECRET_VARIABLE\"")
			.inputFile("secret.txt", secret.getBytes(StandardCharsets.UTF_8))
			.environment("SECRET_VARIABLE", secret)
			.build();
	}

	/** The waiting sandboxes' processes and the JVM, each with its command line. */
	static Map<Long, String> protectedProcesses(Path work) {
		Map<Long, String> processes = new HashMap<>();
		processes.put(ProcessHandle.current().pid(), commandLine(ProcessHandle.current().pid()));
		for (ProcessHandle outer : waitingSandboxes(work)) {
			Stream.concat(Stream.of(outer), outer.descendants())
				.forEach((process) -> processes.put(process.pid(), commandLine(process.pid())));
		}
		return processes;
	}

	static List<String> until(BufferedReader reader, String last) throws IOException {
		List<String> lines = new ArrayList<>();
		String line;
		while ((line = reader.readLine()) != null) {
			lines.add(line);
			if (line.equals(last)) {
				break;
			}
		}
		return lines;
	}

	static String commandLine(long pid) {
		byte[] bytes = readQuietly(Path.of("/proc", String.valueOf(pid), "cmdline"));
		for (int i = 0; i < bytes.length; i++) {
			if (bytes[i] == 0) {
				bytes[i] = ' ';
			}
		}
		return new String(bytes, StandardCharsets.UTF_8).strip();
	}

	/** The JVM's children whose command line names the work directory. */
	private static List<ProcessHandle> waitingSandboxes(Path work) {
		return ProcessHandle.current()
			.children()
			.filter((child) -> commandLine(child.pid()).contains(work.toString()))
			.toList();
	}

	private static byte[] readQuietly(Path file) {
		try {
			return Files.readAllBytes(file);
		}
		catch (IOException ex) {
			return new byte[0];
		}
	}

}
