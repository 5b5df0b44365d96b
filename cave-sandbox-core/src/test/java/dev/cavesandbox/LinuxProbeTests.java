package dev.cavesandbox;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.mechanism.BubblewrapMechanism;
import dev.cavesandbox.mechanism.FilesystemView;
import dev.cavesandbox.mechanism.Launcher;
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
	 * Where a part of the launcher's confinement is missing from the child's report, the
	 * probe says which; the same report with that part is verified.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "nnp=1|nnp=0|no_new_privs and seccomp filter are not in force",
			"seccomp=2|seccomp=0|no_new_privs and seccomp filter are not in force",
			"sigblk=0000000000000000|sigblk=0000000000000004|blocked or ignored signals (SigBlk=0000000000000004",
			"sigign=0000000000000000|sigign=0000000180000000|ignored signals (SigBlk=0000000000000000, SigIgn=0000000180000000)",
			"refused=socket(AF_VSOCK) EPERM|allowed=socket(AF_VSOCK) succeeded|filter let through: socket(AF_VSOCK) succeeded",
			"refused=ptrace EPERM|note=ptrace left out|did not report refusing: ptrace",
			"refused=keyctl EPERM|note=keyctl left out|did not report refusing: keyctl" })
	void aChildWithoutTheLaunchersConfinementIsNotVerified(String present, String replacement, String detail) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L));
		String report = report();
		assertThat(report).contains(present + "\n");
		assertThat(verdict(host, report).available()).isTrue();
		IsolationCapability verdict = verdict(host, report.replace(present + "\n", replacement + "\n"));
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(verdict.detail()).contains(detail);
	}

	@org.junit.jupiter.api.Test
	void theVerifiedFactsListEveryRefusalOfTheFilter() {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L));
		IsolationCapability verdict = verdict(host, report());
		assertThat(verdict.verified()).contains("no_new_privs, seccomp filter, signals unblocked and not ignored",
				"seccomp filter refuses: " + String.join(", ", LAUNCHER.refusals(false)));
	}

	private static final Launcher LAUNCHER = new Launcher(Path.of("/usr/lib/cave-sandbox-launcher"), false);

	/**
	 * A child's report that is right in every respect.
	 */
	private static String report() {
		StringBuilder report = new StringBuilder();
		LAUNCHER.refusals(false).forEach((name) -> report.append("refused=").append(name).append(" EPERM\n"));
		report.append("net=net:[3]\npid=pid:[4]\nipc=ipc:[6]\nuid=1000\ncaps=0000000000000000\nnnp=1\nseccomp=2\n"
				+ "sigblk=0000000000000000\nsigign=0000000000000000\nmarker=" + ProbeSession.MARKER
				+ "\nwrite=ok\nroot=read-only\nhidden=43 /tmp\nlo=down\nif=lo\n");
		return report.toString();
	}

	private static IsolationCapability verdict(HostFacts host) {
		return verdict(host, report());
	}

	private static IsolationCapability verdict(HostFacts host, String report) {
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5));
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, host.view());
		return LinuxProbe.verdict(mechanism, outcome, host, false, Duration.ofMillis(5));
	}

}
