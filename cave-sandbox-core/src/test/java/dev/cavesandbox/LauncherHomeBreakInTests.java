package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Break-in attempts on the home of the private directories and of the extracted launcher
 * ({@code <workDirectory>/cave-sandbox-<uid>}), which every sandbox hides and which a
 * request's working directory must neither contain nor lie in. Each test is an attack
 * that must stay stopped.
 */
@EnabledOnOs(OS.LINUX)
class LauncherHomeBreakInTests {

	/**
	 * Found by the second i10 break-in attempt: an executor checked a request's working
	 * directory only against its own home, so a second executor of the same user (another
	 * work directory) accepted the first one's launcher directory and mounted it
	 * writable; the command replaced the launcher, and the first executor ran the
	 * replacement as {@code outer} on the host. Now every home this JVM knows (and any
	 * directory named like one) is refused, and a replaced launcher is refused before it
	 * runs.
	 */
	@ForEachLinuxMechanism
	void anotherExecutorCannotReplaceTheLauncherInAHomeThatIsNotItsOwn(MechanismChoice mechanism, @TempDir Path workA,
			@TempDir Path workB, @TempDir Path evidence) throws Exception {
		Path marker = evidence.toRealPath().resolve("outer-ran-here");
		String hostNetwork = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
		try (ProcessIsolatedExecutor a = LinuxMechanisms.isolated(mechanism, (s) -> s.workDirectory(workA));
				ProcessIsolatedExecutor b = LinuxMechanisms.isolated(mechanism, (s) -> s.workDirectory(workB))) {
			assertThat(a.execute("true").exitCode()).isZero();
			Path launcherDirectory = launcherDirectory(PrivateHome.of(workA).toRealPath());
			Path launcher = launcherDirectory.resolve(LauncherInstallation.BINARY);
			String original = LauncherInstallation.sha256(launcher);
			// A script that, run as outer, records the network namespace it runs in.
			String replace = "printf '#!/bin/sh\\nreadlink /proc/self/ns/net > " + marker
					+ "\\nexit 1\\n' > .x && chmod 500 .x && mv -f .x " + LauncherInstallation.BINARY;
			Throwable refusal = catchThrowable(() -> b.execute(
					ExecutionRequest.builder("/bin/sh", "-c", replace).workingDirectory(launcherDirectory).build()));
			// A run of the first executor shows what it now executes.
			catchThrowable(() -> a.execute("true"));
			assertThat(marker)
				.as("the launcher replaced from a sandbox ran on the host (network namespace %s)", hostNetwork)
				.doesNotExist();
			assertThat(refusal).isInstanceOf(InvalidExecutionRequestException.class);
			assertThat(LauncherInstallation.sha256(launcher)).isEqualTo(original);
		}
	}

	private static Path launcherDirectory(Path home) throws Exception {
		try (Stream<Path> entries = Files.list(home)) {
			return entries.filter((entry) -> entry.getFileName().toString().startsWith("launcher-"))
				.findFirst()
				.orElseThrow();
		}
	}

}
