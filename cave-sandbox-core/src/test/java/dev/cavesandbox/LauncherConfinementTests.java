package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * What the native launcher confines inside the sandbox, attempted for real by an ordinary
 * program (Python, {@code confinement-attempts.py}), not by the launcher's own
 * {@code --check}: the sockets of other address families, io_uring, ptrace and
 * {@code process_vm_readv} of PID 1, of the command's parent and of its own child, the
 * memory of PID 1, keyrings, bpf, perf events, userfaultfd, new user namespaces and
 * set-user-ID or set-group-ID modes. Each attempt has a control: the same script outside
 * the sandbox, where every attempt succeeds (as root) or fails differently; outside, the
 * script touches no other process than a child it forks, and never connects a socket.
 * <p>
 * Then the keyrings: the key of a session keyring that the JVM's user holds is neither
 * readable inside nor can a key be planted there.
 */
@EnabledOnOs(OS.LINUX)
class LauncherConfinementTests {

	private static final String SCRIPT = "confinement-attempts.py";

	private static final String PYTHON = "/usr/bin/python3";

	/** What every attempt gives inside the sandbox without a private loopback. */
	private static final Map<String, String> REFUSED = refused();

	private static final Map<MechanismChoice, ProcessIsolatedExecutor> executors = new ConcurrentHashMap<>();

	private static ProcessIsolatedExecutor unisolated;

	private static Map<String, String> refused() {
		Map<String, String> refused = new LinkedHashMap<>();
		refused.put("socket(AF_VSOCK)", "EAFNOSUPPORT");
		refused.put("socket(AF_NETLINK)", "EAFNOSUPPORT");
		refused.put("socket(AF_PACKET)", "EAFNOSUPPORT");
		refused.put("socket(AF_INET)", "EAFNOSUPPORT");
		refused.put("io_uring_setup", "ENOSYS");
		refused.put("ptrace(child)", "EPERM");
		refused.put("ptrace(1)", "EPERM");
		refused.put("ptrace(parent)", "EPERM");
		refused.put("process_vm_readv(child)", "EPERM");
		refused.put("process_vm_readv(1)", "EPERM");
		// PID 1 (bwrap: the launcher, not dumpable; unshare: the set-up shell in the
		// outer user namespace) is out of reach, the command's own child is not.
		refused.put("open(/proc/1/mem)", "EACCES");
		refused.put("open(/proc/child/mem)", "OK");
		refused.put("keyctl", "EPERM");
		refused.put("add_key", "EPERM");
		refused.put("bpf", "EPERM");
		refused.put("perf_event_open", "EPERM");
		refused.put("userfaultfd", "EPERM");
		refused.put("unshare -U", "EPERM");
		refused.put("chmod(u+s)", "EPERM");
		refused.put("mode(u+s)", "0o755");
		refused.put("chmod(g+s)", "EPERM");
		refused.put("mode(g+s)", "0o755");
		refused.put("open(O_CREAT, 04755)", "EPERM");
		refused.put("created", "absent");
		return Map.copyOf(refused);
	}

	@BeforeAll
	static void createUnisolatedExecutor() {
		unisolated = ProcessIsolatedExecutor
			.unisolated(settings(MechanismChoice.NONE).mode(SandboxMode.FALLBACK).build());
	}

	@AfterAll
	static void closeExecutors() {
		executors.values().forEach(ProcessIsolatedExecutor::close);
		unisolated.close();
	}

	private static SandboxSettings.Builder settings(MechanismChoice mechanism) {
		return SandboxSettings.builder()
			.mechanism(mechanism)
			.timeout(Duration.ofSeconds(60))
			.killGracePeriod(Duration.ofMillis(300));
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.computeIfAbsent(mechanism, (key) -> LinuxMechanisms.isolated(key,
				(settings) -> settings.timeout(Duration.ofSeconds(60)).killGracePeriod(Duration.ofMillis(300))));
	}

	/**
	 * What every attempt gives inside a mechanism without a private loopback: on a
	 * mechanism without a mount namespace, Landlock refuses writes outside the working
	 * directory, and {@code /proc/PID/mem} opened for writing is outside it even for the
	 * command's own child.
	 */
	private static Map<String, String> refused(MechanismChoice mechanism) {
		Map<String, String> refused = new LinkedHashMap<>(REFUSED);
		if (!LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.MOUNT)) {
			refused.put("open(/proc/child/mem)", "EACCES");
		}
		return refused;
	}

	@ForEachLinuxMechanism
	void everyAttemptIsRefusedInsideAndSucceedsOutside(MechanismChoice mechanism, @TempDir Path directory)
			throws IOException {
		Map<String, String> inside = attempts(isolated(mechanism), directory, "isolated", false);
		assertThat(inside).containsExactlyInAnyOrderEntriesOf(refused(mechanism));
		assumeThat(System.getProperty("user.name")).as("the control expects root").isEqualTo("root");
		Map<String, String> outside = attempts(unisolated, directory, "control", false);
		Map<String, String> succeeded = new LinkedHashMap<>();
		REFUSED.keySet()
			.stream()
			.filter((name) -> !name.contains("(1)") && !name.contains("(parent)") && !name.contains("/proc/1/"))
			.forEach((name) -> succeeded.put(name, "OK"));
		succeeded.put("mode(u+s)", "0o4755");
		succeeded.put("mode(g+s)", "0o2755");
		succeeded.put("created", "0o4755");
		assertThat(outside).containsExactlyInAnyOrderEntriesOf(succeeded);
	}

	/**
	 * A private loopback opens inet sockets and nothing else; a mechanism without a
	 * network namespace refuses the request with a code instead of running it on the
	 * host's network stack.
	 */
	@ForEachLinuxMechanism
	void privateLoopbackAllowsInetSocketsAndNothingElse(MechanismChoice mechanism, @TempDir Path directory)
			throws IOException {
		if (!LinuxMechanisms.namespaces(mechanism).contains(LinuxNamespace.NETWORK)) {
			assertThatExceptionOfType(InvalidExecutionRequestException.class)
				.isThrownBy(() -> attempts(isolated(mechanism), directory, "isolated", true))
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_invalid_request"))
				.withMessageContaining("no network namespace");
			return;
		}
		Map<String, String> inside = attempts(isolated(mechanism), directory, "isolated", true);
		Map<String, String> expected = refused(mechanism);
		expected.put("socket(AF_INET)", "OK");
		assertThat(inside).containsExactlyInAnyOrderEntriesOf(expected);
	}

	/**
	 * The same attempts by an unprivileged user (nobody) through the verified command
	 * line. Outside, nobody may already not open packet sockets or use bpf (EPERM,
	 * {@code kernel.unprivileged_bpf_disabled}): the packet socket fails differently
	 * there, bpf the same way (the root control above shows the filter's refusal).
	 */
	@ForEachLinuxMechanism
	void everyAttemptIsRefusedForAnUnprivilegedUser(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory);
		copyScript(directory);
		NobodyCommandLines.giveToNobody(directory);
		Path real = directory.toRealPath();
		NobodyCommandLines.Run inside = NobodyCommandLines.run(
				NobodyCommandLines.asNobody(mechanism.commandLine(List.of(PYTHON, SCRIPT, "isolated"), real, false)),
				directory);
		assertThat(inside.exitCode()).as(inside.output()).isZero();
		assertThat(parse(inside.output())).containsExactlyInAnyOrderEntriesOf(refused(choice));
		NobodyCommandLines.Run outside = NobodyCommandLines
			.run(NobodyCommandLines.asNobody(List.of(PYTHON, SCRIPT, "control")), directory);
		assertThat(outside.exitCode()).as(outside.output()).isZero();
		assertThat(parse(outside.output())).containsEntry("socket(AF_VSOCK)", "OK")
			.containsEntry("socket(AF_PACKET)", "EPERM")
			.containsEntry("io_uring_setup", "OK")
			.containsEntry("ptrace(child)", "OK")
			.containsEntry("keyctl", "OK")
			.containsEntry("userfaultfd", "OK")
			.containsEntry("unshare -U", "OK")
			.containsEntry("mode(u+s)", "0o4755")
			.containsEntry("created", "0o4755");
	}

	/**
	 * A session keyring that holds a key, as a systemd service with
	 * {@code KeyringMode=private} or a PAM login has: the verified command line runs in
	 * it ({@code keyctl session}), after a control that reads the key there. Inside,
	 * {@code keyctl} is refused (the key can be neither read nor searched for, and the
	 * session keyring is a new one), and afterwards the session keyring still holds
	 * exactly its one key.
	 */
	@ForEachLinuxMechanism
	void sessionKeyIsUnreadableAndNothingIsPlanted(MechanismChoice choice, @TempDir Path directory) throws Exception {
		SandboxMechanism mechanism = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		assertKeyringConfined(inSessionKeyring(mechanism, directory, false));
	}

	@ForEachLinuxMechanism
	void sessionKeyIsUnreadableAndNothingIsPlantedForAnUnprivilegedUser(MechanismChoice choice, @TempDir Path directory,
			@TempDir Path launcherDirectory) throws Exception {
		assumeThat(System.getProperty("user.name")).as("switching to nobody needs root").isEqualTo("root");
		SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory);
		NobodyCommandLines.giveToNobody(directory);
		assertKeyringConfined(inSessionKeyring(mechanism, directory, true));
	}

	/**
	 * {@code /proc/keys} lists every key the command's uid may view, whatever keyring
	 * holds it (keyrings(7)): the same uid inside as outside sees the description of the
	 * JVM's session key (not its payload). Fails today: nothing hides {@code /proc/keys}
	 * in the sandbox. A mechanism without a mount namespace has no {@code /proc} of its
	 * own, as its verdict says: the key's description is listed there, and what stays is
	 * that its payload cannot be read.
	 */
	@ForEachLinuxMechanism
	void sessionKeyIsNotListedInProcKeys(MechanismChoice choice, @TempDir Path directory) throws Exception {
		IsolationCapability capability = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build());
		KeyringRun run = inSessionKeyring(capability.mechanism(), directory, false);
		assertThat(run.output()).as("the control lists the key").contains("control-listed=1");
		if (capability.mechanism().namespaces().contains(LinuxNamespace.MOUNT)) {
			assertThat(run.inside()).contains("listed=0");
		}
		else {
			assertThat(capability.verified()).anyMatch((fact) -> fact.startsWith("not given: a /proc of its own")
					|| fact.startsWith("not given: PID namespace: the command sees the JVM's processes"));
			assertThat(run.inside()).contains("print=1").doesNotContain("s3cr3t");
		}
	}

	private static void assertKeyringConfined(KeyringRun run) {
		assertThat(run.output()).as("the control reads the key").contains("control=s3cr3t");
		assertThat(run.inside()).doesNotContain("s3cr3t")
			.contains("Operation not permitted", "print=1")
			.doesNotContain("show=0")
			.doesNotContain("add=0");
		assertThat(run.output()).contains("--- exit=0");
		List<String> keys = run.output().substring(run.output().indexOf("--- exit=")).lines().skip(1).toList();
		assertThat(keys).as(run.output()).singleElement().asString().startsWith("user;").endsWith(";" + run.key());
	}

	/**
	 * Run the command line in a new session keyring that holds one key with a name of its
	 * own (keys of earlier runs linger in {@code /proc/keys} until the kernel's garbage
	 * collector frees them).
	 */
	private static KeyringRun inSessionKeyring(SandboxMechanism mechanism, Path directory, boolean nobody)
			throws Exception {
		String key = "cave-secret-" + UUID.randomUUID();
		String inside = "keyctl print %user:" + key + "; echo \"print=$?\"; keyctl show @s; echo \"show=$?\"; "
				+ "keyctl add user cave-planted x @s; echo \"add=$?\"; echo \"listed=$(grep -c " + key
				+ " /proc/keys)\"";
		String outer = "keyctl add user " + key + " s3cr3t @s >/dev/null || exit 99\n"
				+ "echo \"control=$(keyctl print %user:" + key + ")\"\necho \"control-listed=$(grep -c " + key
				+ " /proc/keys)\"\n" + "echo '--- inside'\n\"$@\"\necho \"--- exit=$?\"\n"
				+ "for key in $(keyctl rlist @s); do keyctl rdescribe \"$key\"; done\n";
		List<String> command = new ArrayList<>(
				List.of("/usr/bin/keyctl", "session", "cave-test", "/bin/sh", "-c", outer, "sh"));
		command.addAll(mechanism.commandLine(List.of("/bin/sh", "-c", inside), directory.toRealPath(), false));
		NobodyCommandLines.Run run;
		try (java.io.Closeable grant = LinuxMechanisms.forCommandUser(mechanism, directory)) {
			run = NobodyCommandLines.run(nobody ? NobodyCommandLines.asNobody(command) : command, directory);
		}
		assertThat(run.exitCode()).as(run.output()).isZero();
		String output = run.output();
		assertThat(output).contains("--- inside", "--- exit=");
		return new KeyringRun(key, output, output.substring(output.indexOf("--- inside"), output.indexOf("--- exit=")));
	}

	private record KeyringRun(String key, String output, String inside) {
	}

	private static Map<String, String> attempts(ProcessIsolatedExecutor executor, Path directory, String mode,
			boolean loopback) throws IOException {
		copyScript(directory);
		ExecutionResult result = executor.execute(
				ExecutionRequest.builder(PYTHON, SCRIPT, mode).workingDirectory(directory).loopback(loopback).build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		return parse(result.stdoutText());
	}

	private static void copyScript(Path directory) throws IOException {
		copyScript(SCRIPT, directory);
	}

	/** Copy a script of the test resources into a command's working directory. */
	static void copyScript(String name, Path directory) throws IOException {
		try (InputStream script = LauncherConfinementTests.class.getResourceAsStream(name)) {
			assertThat(script).as(name).isNotNull();
			Files.write(directory.resolve(name), script.readAllBytes());
		}
	}

	/** The {@code NAME=RESULT} lines of an attempts script, by name. */
	static Map<String, String> parse(String output) {
		Map<String, String> results = new LinkedHashMap<>();
		output.lines()
			.filter((line) -> line.contains("="))
			.forEach((line) -> results.put(line.substring(0, line.lastIndexOf('=')),
					line.substring(line.lastIndexOf('=') + 1)));
		return results;
	}

}
