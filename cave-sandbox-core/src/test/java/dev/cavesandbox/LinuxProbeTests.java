package dev.cavesandbox;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.mechanism.BubblewrapMechanism;
import dev.cavesandbox.mechanism.FilesystemView;
import dev.cavesandbox.mechanism.SandboxMechanism;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Linux probe's judgement of a child's report. Its real runs, against real faulty
 * sandboxes, are in {@link NetworkIsolationProbeTests}.
 */
class LinuxProbeTests {

	/**
	 * A JVM that cannot read its own namespaces or a hidden directory's device (a host
	 * this test cannot make: the JVM always reads its own {@code /proc/self/ns}) compares
	 * the child's with nothing: no fact counts as verified. The child's report is right
	 * in every respect.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|',
			value = { "unknown|pid:[2]|ipc:[5]|42|network namespace", "net:[1]|unknown|ipc:[5]|42|PID namespace",
					"net:[1]|pid:[2]|unknown|42|IPC namespace", "net:[1]|pid:[2]|ipc:[5]|-1|hidden directory /tmp" })
	void aJvmThatCannotReadItsOwnFactsVerifiesNothing(String net, String pid, String ipc, long device,
			String unverified) {
		HostFacts host = new HostFacts(net, pid, ipc, 1000, 1000, FilesystemView.of(List.of(Path.of("/tmp")), true),
				Map.of(Path.of("/tmp"), device));
		IsolationCapability verdict = verdict(host);
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(verdict.detail()).contains(unverified);
		HostFacts readable = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L));
		assertThat(verdict(readable).available()).as("%s", verdict(readable)).isTrue();
	}

	/**
	 * Judge a child's report that is right in every respect.
	 */
	private static IsolationCapability verdict(HostFacts host) {
		String report = "net=net:[3]\npid=pid:[4]\nipc=ipc:[6]\nuid=1000\ncaps=0000000000000000\nmarker="
				+ ProbeSession.MARKER + "\nwrite=ok\nroot=read-only\nhidden=43 /tmp\nlo=down\nif=lo\n";
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5));
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), host.view());
		return LinuxProbe.verdict(mechanism, outcome, host, false, Duration.ofMillis(5));
	}

}
