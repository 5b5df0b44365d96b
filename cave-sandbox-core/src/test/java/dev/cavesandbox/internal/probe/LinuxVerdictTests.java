package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationProbeTests;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.cavesandbox.internal.probe.ChildReports.LAUNCHER;
import static dev.cavesandbox.internal.probe.ChildReports.commandUserVerdict;
import static dev.cavesandbox.internal.probe.ChildReports.limitedReport;
import static dev.cavesandbox.internal.probe.ChildReports.report;
import static dev.cavesandbox.internal.probe.ChildReports.seccompReport;
import static dev.cavesandbox.internal.probe.ChildReports.seccompVerdict;
import static dev.cavesandbox.internal.probe.ChildReports.verdict;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Linux probe's judgement of a child's report: namespaces, capabilities, the
 * launcher's confinement, the user. Its real runs, against real faulty sandboxes, are in
 * {@link NetworkIsolationProbeTests}.
 */
class LinuxVerdictTests {

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

	@Test
	void theVerifiedFactsListEveryRefusalOfTheFilter() {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L));
		IsolationCapability verdict = verdict(host, report());
		assertThat(verdict.verified()).contains("no_new_privs, seccomp filter, signals unblocked and not ignored",
				"seccomp filter refuses: " + String.join(", ", LAUNCHER.refusals(false)));
	}

	/**
	 * The seccomp mechanism's child shares the JVM's namespaces: the probe accepts that,
	 * names what is not given, and requires the Landlock layer instead.
	 */
	@Test
	void theSeccompMechanismIsVerifiedWithoutNamespacesAndNamesWhatItDoesNotGive() {
		IsolationCapability verdict = seccompVerdict(seccompReport());
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.privateLoopback()).isFalse();
		assertThat(verdict.verified()).contains(
				"seccomp filter refuses: " + String.join(", ", LAUNCHER.refusals(false, true, true)),
				"writes outside the working directory: refused (Landlock)",
				"root filesystem: writes refused outside the working directory (Landlock), reads allowed",
				"the JVM's memory (/proc/PID/mem): refused (Landlock)",
				"signals to the JVM and every process outside the sandbox: refused (Landlock scope)",
				SharedMemoryCheck.GIVEN);
		assertThat(verdict.verified()).filteredOn((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN))
			.hasSize(5)
			.anyMatch((fact) -> fact.startsWith("not given: the metadata of files outside the working directory"))
			.anyMatch((fact) -> fact.startsWith("not given: network namespace"))
			.anyMatch((fact) -> fact.startsWith("not given: PID namespace"))
			.anyMatch((fact) -> fact.startsWith("not given: IPC namespace"))
			.anyMatch((fact) -> fact.startsWith("not given: hidden directories"));
	}

	/**
	 * The seccomp mechanism's command user, a uid of the host: verified as a uid of the
	 * range with the command user's gid, without any capability, and able to reach its
	 * directory by its path; the facts say what a uid of the host means and what the
	 * executions share through the gid.
	 */
	@Test
	void theSeccompMechanismsCommandUserIsVerifiedAsAUidOfTheHostWithTheCommandUsersGidWithoutCapabilities() {
		String asCommandUser = seccompReport().replace("uid=1000\ngid=1000\n", "uid=65536\ngid=65534\n") + "path=ok\n";
		IsolationCapability verdict = commandUserVerdict(asCommandUser);
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.verified()).contains("capabilities: none",
				"uid 65536: the command user of a root JVM, so that the process limit holds (a uid of the "
						+ "command user range that no execution held meanwhile: each execution runs as a uid of the host of its own, which no other "
						+ "process runs as when it is handed out, so that executions share no process count and "
						+ "cannot signal or ptrace each other; choose uids that nothing else uses)",
				"gid 65534: the command user's, which every execution shares (files and IPC objects made "
						+ "group-accessible, the working directory during the execution)",
				"working directory: reachable by its path for the command user, whose group it is during the "
						+ "execution");
		assertThat(commandUserVerdict(asCommandUser.replace("caps=0000000000000000", "caps=000000000000000a")).detail())
			.isEqualTo("the child holds capabilities (CapEff=000000000000000a)");
		assertThat(commandUserVerdict(seccompReport() + "path=ok\n").detail())
			.isEqualTo("the child runs as uid 1000, not as the command user 65536");
		assertThat(commandUserVerdict(asCommandUser.replace("gid=65534\n", "gid=65536\n")).detail())
			.isEqualTo("the child runs as gid 65536, not as the command user's group 65534");
		assertThat(commandUserVerdict(asCommandUser.replace("path=ok", "path=unreachable")).detail())
			.startsWith("the command user 65536 cannot reach the working directory by its path: give others search "
					+ "permission (x) on the work directory and its parents");
	}

	/**
	 * A host root JVM's command user: the child must run as that uid with exactly
	 * CAP_DAC_OVERRIDE and CAP_FOWNER; then the process limit is given and the facts say
	 * why. Root, or any other capability set, is not verified.
	 */
	@Test
	void aCommandUserMustBeTheChildsUidWithExactlyItsTwoCapabilities() {
		Launcher commandUser = new Launcher(LAUNCHER.path(), false, 65534);
		String report = limitedReport().replace("uid=1000\ngid=1000\n", "uid=65534\ngid=65534\n")
			.replace("caps=0000000000000000", "caps=000000000000000a");
		IsolationCapability verdict = commandUserVerdict(commandUser, report);
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.verified())
			.contains("uid 65534: the command user of a root JVM, so that the process limit holds",
					"capabilities: CAP_DAC_OVERRIDE and CAP_FOWNER only, over files of root:root (the command user's "
							+ "namespace maps no other owner)")
			.noneMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN));
		IsolationCapability root = commandUserVerdict(commandUser, report.replace("uid=65534\n", "uid=0\n"));
		assertThat(root.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(root.detail()).isEqualTo("the child runs as uid 0, not as the command user 65534");
		IsolationCapability more = commandUserVerdict(commandUser,
				report.replace("caps=000000000000000a", "caps=00000000000000ca"));
		assertThat(more.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(more.detail()).contains("CapEff=00000000000000ca");
		assertThat(commandUserVerdict(commandUser,
				limitedReport().replace("uid=1000\ngid=1000\n", "uid=65534\ngid=65534\n"))
			.cause()).as("without the two capabilities").isEqualTo(UnavailabilityCause.NOT_VERIFIED);
	}

}
