package dev.cavesandbox.internal.probe;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

@EnabledOnOs(OS.LINUX)
class LinuxProbeTests {

	/**
	 * What a command of the range's first uid does while it runs: it notes its uid, then
	 * watches {@code /proc} for the probe's child ({@code /bin/sh -c SCRIPT
	 * cave-sandbox-probe ...}) and tries to reach each one it sees, as a command of the
	 * same uid could (the child is dumpable): its environment, the list of its
	 * descriptors, its standard output (the report's pipe, opened for writing, nothing
	 * written), its working directory, where it plants a file, and a signal (0: nothing
	 * delivered). One line per attempt, {@code reached} or {@code refused}, into
	 * {@code report} in its working directory.
	 */
	private static final String WATCHER = """
			import os, sys, time
			out = open('report', 'w', buffering=1)
			out.write('uid %d\\n' % os.getuid())
			out.write('watching\\n')
			def attempt(what, pid, action):
			    try:
			        action()
			        out.write('reached %s %s\\n' % (what, pid))
			    except ProcessLookupError:
			        out.write('gone %s %s\\n' % (what, pid))
			    except FileNotFoundError:
			        out.write('gone %s %s\\n' % (what, pid))
			    except OSError as e:
			        out.write('refused %s %s %s\\n' % (what, pid, e.strerror))
			def plant(pid):
			    directory = os.readlink('/proc/%s/cwd' % pid)
			    open(os.path.join(directory, 'planted-by-another-execution'), 'w').close()
			seen = set()
			end = time.time() + 100
			while time.time() < end:
			    for pid in os.listdir('/proc'):
			        if not pid.isdigit() or pid in seen:
			            continue
			        try:
			            argv = open('/proc/%s/cmdline' % pid, 'rb').read().split(b'\\0')
			            status = open('/proc/%s/status' % pid).read()
			        except OSError:
			            continue
			        if len(argv) < 4 or argv[0] != b'/bin/sh' or argv[3] != b'cave-sandbox-probe':
			            continue
			        seen.add(pid)
			        uid = [l.split()[1] for l in status.splitlines() if l.startswith('Uid:')][0]
			        out.write('seen %s uid %s\\n' % (pid, uid))
			        attempt('environ', pid, lambda: open('/proc/%s/environ' % pid, 'rb').read())
			        attempt('fd', pid, lambda: os.listdir('/proc/%s/fd' % pid))
			        attempt('stdout', pid, lambda: os.close(os.open('/proc/%s/fd/1' % pid, os.O_WRONLY)))
			        attempt('cwd', pid, lambda: plant(pid))
			        attempt('signal', pid, lambda: os.kill(int(pid), 0))
			""";

	/**
	 * On seccomp a root JVM's probe runs its child as a uid of the command user range; it
	 * takes that uid from the pool the executors of this JVM share, so a command running
	 * as a uid of the range is never beside a probe child of the same uid (which it could
	 * reach: the probe's script is dumpable). With the range's one uid held by a running
	 * execution, the probe has none and says so instead of running as it.
	 */
	@Test
	void theSeccompProbeNeverRunsAsAUidAnExecutionHolds(@TempDir Path work) throws Exception {
		assumeRootOfTheHost();
		SandboxSettings settings = settings("70901-70901", work);
		IsolationCapability capability = new LinuxProbe(settings, MechanismChoice.SECCOMP).probe();
		assertThat(capability.available()).as(capability.detail()).isTrue();
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.isolated(settings, capability)) {
			SandboxedProcess holder = executor.start(ExecutionRequest.of("/bin/sleep", "120"));
			try {
				IsolationCapability whileHeld = new LinuxProbe(settings, MechanismChoice.SECCOMP).probe();
				assertThat(whileHeld.available()).isFalse();
				assertThat(whileHeld.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
				assertThat(whileHeld.detail()).startsWith("no uid of the command user range is free for the probe");
			}
			finally {
				holder.destroy();
			}
		}
		IsolationCapability afterwards = new LinuxProbe(settings, MechanismChoice.SECCOMP).probe();
		assertThat(afterwards.available()).as(afterwards.detail()).isTrue();
	}

	/**
	 * The gap the threat model named: executor A's execution holds the range's first uid
	 * (a long-running command) while executor B of the same range is created. B's probe
	 * runs its child as the other uid of the range, which its verdict names, and A's
	 * command, which watches for that child, sees it run as that uid and reaches none of
	 * it: not its environment, its descriptors or its working directory, nor a signal.
	 * When the probe ran as the range's first uid, the command could.
	 */
	@Test
	void aSecondExecutorsProbeRunsAsAnotherUidThanARunningExecutionOfTheFirstAndIsOutOfItsReach(@TempDir Path work,
			@TempDir Path watcherDirectory) throws Exception {
		assumeRootOfTheHost();
		SandboxSettings settings = settings("70920-70921", work);
		// A's verdict comes from a probe of another range: this range's pool is untouched
		// until A's execution takes its first uid.
		IsolationCapability verifiedElsewhere = LinuxMechanisms
			.verified(SandboxSettings.builder().mechanism(MechanismChoice.SECCOMP).build());
		Path report = watcherDirectory.resolve("report");
		try (ProcessIsolatedExecutor a = ProcessIsolatedExecutor.isolated(settings, verifiedElsewhere)) {
			SandboxedProcess watcher = a.start(ExecutionRequest.builder("/usr/bin/python3", "-c", WATCHER)
				.workingDirectory(watcherDirectory)
				.timeout(Duration.ofMinutes(2))
				.build());
			List<IsolationCapability> verdicts = new ArrayList<>();
			try {
				await().atMost(Duration.ofSeconds(30))
					.until(() -> Files.exists(report) && Files.readString(report).contains("watching"));
				assertThat(Files.readString(report)).as("A's command holds the range's first uid")
					.startsWith("uid 70920\n");
				// Executor B: its probe, again until A's command saw the probe's child
				// (a child that ends before the watcher's next look goes unseen).
				for (int i = 0; i < 5 && !Files.readString(report).contains("seen "); i++) {
					IsolationCapability b = new LinuxProbe(settings, MechanismChoice.SECCOMP).probe();
					verdicts.add(b);
					Thread.sleep(200);
				}
			}
			finally {
				watcher.destroy();
				watcher.onExit().get();
			}
			String seen = Files.readString(report);
			assertThat(verdicts).as(seen)
				.isNotEmpty()
				.allSatisfy((b) -> assertThat(b.verified()).as("%s", b)
					.anyMatch((fact) -> fact.startsWith("uid 70921: the command user")));
			try (ProcessIsolatedExecutor b = ProcessIsolatedExecutor.isolated(settings, verdicts.get(0))) {
				assertThat(b.execute("/bin/true").exitCode()).isZero();
			}
			List<String> lines = seen.lines().toList();
			assertThat(lines).as(seen)
				.anyMatch((line) -> line.matches("seen \\d+ uid 70921"))
				.noneMatch((line) -> line.matches("seen \\d+ uid 70920"))
				.anyMatch((line) -> line.startsWith("refused "))
				.noneMatch((line) -> line.startsWith("reached "));
		}
	}

	/**
	 * The seam of the red-team tests: the observer is told, before the probe's child
	 * runs, the uid that the verdict then names as the command user.
	 */
	@Test
	void anObserverIsToldTheUidThatTheVerdictNames(@TempDir Path work) throws Exception {
		assumeRootOfTheHost();
		SandboxSettings settings = settings("70930-70932", work);
		List<Long> taken = new ArrayList<>();
		List<IsolationCapability> verdicts = new ArrayList<>();
		LinuxProbe.observingCommandUids(taken::add, () -> {
			for (int i = 0; i < 2; i++) {
				verdicts.add(new LinuxProbe(settings, MechanismChoice.SECCOMP).probe());
			}
		});
		assertThat(taken).hasSize(2).allSatisfy((uid) -> assertThat(uid).isBetween(70930L, 70932L));
		for (int i = 0; i < 2; i++) {
			String fact = "uid " + taken.get(i) + ": the command user";
			assertThat(verdicts.get(i).verified()).as("%s", verdicts.get(i))
				.anyMatch((verified) -> verified.startsWith(fact));
		}
		new LinuxProbe(settings, MechanismChoice.SECCOMP).probe();
		assertThat(taken).as("told only while observing").hasSize(2);
	}

	private static void assumeRootOfTheHost() {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
	}

	private static SandboxSettings settings(String range, Path work) {
		return SandboxSettings.builder()
			.mechanism(MechanismChoice.SECCOMP)
			.maxConcurrent(1)
			.commandUserRange(SandboxSettings.CommandUserRange.parse(range))
			.workDirectory(work)
			.timeout(Duration.ofMinutes(2))
			// no warm sandbox: it would hold a uid of these two-uid ranges
			.warm(WarmPoolSettings.OFF)
			.build();
	}

}
