package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

@EnabledOnOs(OS.LINUX)
class LinuxProbeTests {

	/**
	 * On seccomp a root JVM's probe runs its child as a uid of the command user range; it
	 * takes that uid from the pool the executors of this JVM share, so a command running
	 * as a uid of the range is never beside a probe child of the same uid (which it could
	 * reach: the probe's script is dumpable). With the range's one uid held by a running
	 * execution, the probe has none and says so instead of running as it.
	 */
	@Test
	void theSeccompProbeNeverRunsAsAUidAnExecutionHolds(@TempDir Path work) throws Exception {
		assumeThat(LinuxProbe.initialUserNamespace() && "root".equals(System.getProperty("user.name")))
			.as("the JVM runs as the host's root")
			.isTrue();
		SandboxSettings settings = SandboxSettings.builder()
			.mechanism(MechanismChoice.SECCOMP)
			.maxConcurrent(1)
			.commandUserRange(SandboxSettings.CommandUserRange.parse("70901-70901"))
			.workDirectory(work)
			.timeout(Duration.ofMinutes(2))
			.build();
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

}
