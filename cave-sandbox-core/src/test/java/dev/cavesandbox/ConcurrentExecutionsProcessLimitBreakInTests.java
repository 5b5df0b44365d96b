package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.probe.LinuxProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * One execution's fork storm against another execution of the same JVM (issue 26, point
 * 4: "Two concurrent executions of a root JVM on seccomp: one runs a fork storm up to its
 * limit, the other still runs normally"). The {@code seccomp} mechanism has no user
 * namespace, so the kernel counts {@code RLIMIT_NPROC} per real uid of the host; when the
 * commands of a root JVM all ran as one command user (65534), a break-in's trees made a
 * concurrent test's forks fail. Now each execution runs as a uid of its own from
 * {@code cave.sandbox.linux.command-user-range}. One execution forks until its process
 * limit refuses, and holds its processes; the other, started then, must still fork a few
 * children and finish normally. Run only where the JVM is the host's root: a JVM of
 * another user runs every command as its own uid, which the executions share (README,
 * Resource limits).
 */
@EnabledOnOs(OS.LINUX)
public class ConcurrentExecutionsProcessLimitBreakInTests {

	private static final String PYTHON = "/usr/bin/python3";

	/**
	 * The process limit of the executor (the setting), lower than the default to fill
	 * fast.
	 */
	private static final int PROCESSES = 32;

	/**
	 * Forks until the limit refuses, each child sleeping (30 s at most), then writes how
	 * many it forked to {@code storm-full} and waits. {@code argv[1]} is the test's
	 * marker.
	 */
	private static final String STORM = """
			import os, sys, time
			children = 0
			while True:
			    try:
			        if os.fork() == 0:
			            time.sleep(30)
			            os._exit(0)
			        children += 1
			    except OSError:
			        break
			with open('storm-full', 'w') as full:
			    full.write('%d\\n' % children)
			time.sleep(30)
			""";

	/** Forks eight children that exit at once, waits for them, and says ok. */
	private static final String ORDINARY = "for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; echo ok";

	@Test
	void aForkStormUpToItsLimitDoesNotStopAConcurrentExecutionOfTheSameJvmFromForking(@TempDir Path storm,
			@TempDir Path ordinary) throws Exception {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
		String marker = "cave-storm-" + UUID.randomUUID();
		ResourceLimits limits = ResourceLimits.defaults().toBuilder().processes(PROCESSES).build();
		try (ProcessIsolatedExecutor executor = LinuxMechanisms.isolated(MechanismChoice.SECCOMP,
				(settings) -> settings.limits(limits).timeout(Duration.ofSeconds(60)))) {
			CompletableFuture<ExecutionResult> storming = executor
				.executeAsync(ExecutionRequest.builder(PYTHON, "-c", STORM, marker)
					.workingDirectory(storm)
					.timeout(Duration.ofSeconds(40))
					.build());
			try {
				await().atMost(Duration.ofSeconds(30))
					.until(() -> Files.exists(storm.resolve("storm-full")) || storming.isDone());
				assertThat(storming).as("the storm still runs").isNotDone();
				String forked = Files.readString(storm.resolve("storm-full")).trim();
				ExecutionResult result = executor.execute(ExecutionRequest.builder("/bin/sh", "-c", ORDINARY)
					.workingDirectory(ordinary)
					.timeout(Duration.ofSeconds(20))
					.build());
				System.out.println(getClass().getSimpleName() + ": the storm forked " + forked + " under a limit of "
						+ PROCESSES + "; the other execution: exit " + result.exitCode() + ", stdout "
						+ result.stdoutText().trim() + ", stderr " + result.stderrText().trim());
				assertThat(result.stderrText()).as("the other execution's stderr").isEmpty();
				assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("ok\n");
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
			}
			finally {
				storming.cancel(true);
				executor.close();
				MarkedProcesses.stopAndKill(marker);
			}
		}
	}

}
