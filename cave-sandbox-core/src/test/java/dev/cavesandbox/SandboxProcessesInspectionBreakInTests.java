package dev.cavesandbox;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressListener;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.internal.egress.EgressProxy;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A command that spins over /proc from its first instruction against every process its
 * sandbox starts (issue 26, point 3: {@code EgressBreakInTests}' walk of the sandbox's
 * processes failed once on bubblewrap for a JVM of nobody, under the load of a whole
 * build: it listed the descriptors of the bridge, {@code init --allow-inet --egress-port
 * 3128}, found the egress directory at descriptor 6, reached the proxy through it and
 * listed its working directory's parent). A window in which a process of the sandbox's
 * own (PID 1, the bridge and its connection processes, the mechanism's PID 1 script,
 * {@code contain}) holds such a descriptor while the command may inspect it is a finding
 * whatever its width, so the spinner ({@code proc-spinner.c}, compiled here with gcc, no
 * interpreter's start-up before its first look) reads, for every process it can see but
 * itself, the targets of its descriptors, its cwd and root, and opens its environ and
 * mem, round after round for 300 ms, and connects to the egress bridge in every round,
 * which forks a connection process each time. Thirty executions in a row per mechanism,
 * with the egress allow-list where the mechanism has a network namespace of its own for
 * the bridge, while a CPU hog of the test's own loads every core; as this (root) JVM and
 * as nobody (the mechanism's verified command line run as nobody, as
 * {@code EgressBreakInTests#aNonRootJvmsCommandFindsNoWayToTheEgressDirectoryThroughTheSandboxsProcesses}
 * does). Nothing may be read, of any process but the spinner itself.
 */
@Tag("slow")
@EnabledOnOs(OS.LINUX)
class SandboxProcessesInspectionBreakInTests {

	private static final String PROGRAM = "proc-spinner";

	private static final int EXECUTIONS = 30;

	private static final String SPIN_MILLIS = "300";

	private static Path program;

	/**
	 * The allow-list's destination; the spinner only connects to the bridge and closes.
	 */
	private LoopbackListeners.Tcp allowed;

	@BeforeAll
	static void compile(@TempDir Path directory) throws IOException, InterruptedException {
		program = CompiledPrograms.compile(PROGRAM, directory);
	}

	@BeforeEach
	void listen() throws IOException {
		this.allowed = new LoopbackListeners.Tcp(InetAddress.getByName("127.0.0.1"));
	}

	@AfterEach
	void close() throws IOException {
		this.allowed.close();
	}

	/** The mechanisms with a network namespace of their own, where the bridge runs. */
	private static boolean egress(MechanismChoice mechanism) {
		return mechanism != MechanismChoice.SECCOMP;
	}

	private static List<String> argv(MechanismChoice mechanism) {
		return egress(mechanism)
				? List.of("./" + PROGRAM, SPIN_MILLIS, String.valueOf(SandboxSettings.Egress.PROXY_PORT))
				: List.of("./" + PROGRAM, SPIN_MILLIS);
	}

	/**
	 * A root JVM (this one): its commands run as the command user.
	 */
	@ForEachLinuxMechanism
	void theCommandNeverReadsADescriptorCwdRootOrMemoryOfTheSandboxsProcesses(MechanismChoice mechanism,
			@TempDir Path work) throws Exception {
		CompiledPrograms.install(program, work);
		List<String> outputs = new ArrayList<>();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(mechanism,
				(settings) -> settings.allowPrivateDestinations(true).timeout(Duration.ofSeconds(60)));
				CpuHog hog = CpuHog.start()) {
			for (int i = 0; i < EXECUTIONS; i++) {
				ExecutionRequest.Builder request = ExecutionRequest.builder(argv(mechanism)).workingDirectory(work);
				if (egress(mechanism)) {
					request.allowedHosts("localhost:" + this.allowed.port());
				}
				ExecutionResult result = executor.execute(request.build());
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				outputs.add(result.stdoutText());
			}
		}
		assertNothingWasRead(mechanism, mechanism + ", root JVM", outputs);
	}

	/**
	 * A JVM of nobody: its commands run as nobody, like the mechanism's processes that
	 * run with the JVM's uid (the PID 1 scripts of unshare and namespaces, bubblewrap's
	 * init, the bridge).
	 */
	@ForEachLinuxMechanism
	void anUnprivilegedJvmsCommandNeverReadsADescriptorCwdRootOrMemoryOfTheSandboxsProcesses(MechanismChoice choice,
			@TempDir Path work, @TempDir Path egressParent, @TempDir Path launcherDirectory) throws Exception {
		CompiledPrograms.install(program, work);
		NobodyCommandLines.giveToNobody(work);
		Path egressDirectory = Files.createDirectory(egressParent.resolve("cave-egress-spinner"));
		NobodyCommandLines.giveToNobody(egressDirectory);
		Files.setPosixFilePermissions(egressDirectory, PosixFilePermissions.fromString("rwx--x--x"));
		List<String> outputs = new ArrayList<>();
		try (EgressProxy proxy = EgressProxy.start(egressDirectory.resolve(LauncherContract.EGRESS_SOCKET),
				new EgressPolicy(EgressAllowList.of(List.of("localhost:" + this.allowed.port())), true,
						(host) -> List.of(InetAddress.getByName("127.0.0.1"))),
				EgressListener.NONE); CpuHog hog = CpuHog.start()) {
			SandboxMechanism mechanism = NobodyCommandLines.mechanism(choice, launcherDirectory);
			if (egress(choice)) {
				mechanism = mechanism
					.withEgress(new Launcher.Egress(egressDirectory, SandboxSettings.Egress.PROXY_PORT));
			}
			List<String> command = NobodyCommandLines
				.asNobody(mechanism.commandLine(argv(choice), work.toRealPath(), egress(choice)));
			for (int i = 0; i < EXECUTIONS; i++) {
				NobodyCommandLines.Run run = NobodyCommandLines.run(command, work);
				assertThat(run.exitCode()).as(run.output()).isZero();
				outputs.add(run.output());
			}
		}
		assertNothingWasRead(choice, choice + ", nobody's JVM", outputs);
	}

	/**
	 * Every execution spun (and connected to the bridge, where there is one), and none
	 * read anything of another process.
	 */
	private static void assertNothingWasRead(MechanismChoice mechanism, String what, List<String> outputs) {
		List<String> leaks = outputs.stream().flatMap(String::lines).filter((line) -> line.startsWith("LEAK")).toList();
		List<String> spun = outputs.stream().flatMap(String::lines).filter((line) -> line.startsWith("SPUN")).toList();
		System.out.println(SandboxProcessesInspectionBreakInTests.class.getSimpleName() + " " + what + ": "
				+ spun.size() + " executions, first " + spun.stream().findFirst().orElse("none") + "; " + leaks.size()
				+ " reads " + leaks);
		assertThat(spun).as("every execution spun: %s", outputs).hasSize(outputs.size());
		if (egress(mechanism)) {
			assertThat(spun).as("connected to the bridge").noneMatch((line) -> line.endsWith(" 0 connections"));
		}
		assertThat(leaks).as("what the command read of the sandbox's processes").isEmpty();
	}

}
