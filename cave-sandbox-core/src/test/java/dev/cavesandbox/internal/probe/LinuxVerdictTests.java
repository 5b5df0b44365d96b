package dev.cavesandbox.internal.probe;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationProbeTests;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.process.ProcessRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import org.junit.jupiter.api.Test;
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
	 * The seccomp rung's child shares the JVM's namespaces: the probe accepts that, names
	 * what is not given, and requires the Landlock layer instead.
	 */
	@org.junit.jupiter.api.Test
	void theSeccompRungIsVerifiedWithoutNamespacesAndNamesWhatItDoesNotGive() {
		IsolationCapability verdict = seccompVerdict(seccompReport());
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.privateLoopback()).isFalse();
		assertThat(verdict.verified()).contains(
				"seccomp filter refuses: " + String.join(", ", LAUNCHER.refusals(false, true, true)),
				"writes outside the working directory: refused (Landlock)",
				"root filesystem: writes refused outside the working directory (Landlock), reads allowed",
				"the JVM's memory (/proc/PID/mem): refused (Landlock)",
				"signals to the JVM and every process outside the sandbox: refused (Landlock scope)");
		assertThat(verdict.verified()).filteredOn((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN))
			.hasSize(5)
			.anyMatch((fact) -> fact.startsWith("not given: the metadata of files outside the working directory"))
			.anyMatch((fact) -> fact.startsWith("not given: network namespace"))
			.anyMatch((fact) -> fact.startsWith("not given: PID namespace"))
			.anyMatch((fact) -> fact.startsWith("not given: IPC namespace"))
			.anyMatch((fact) -> fact.startsWith("not given: hidden directories"));
	}

	/**
	 * Without its Landlock layer the seccomp rung is refused, named; where the layer is
	 * reported but a write or the JVM's memory got through, it is not verified.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|', value = {
			"landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix|landlock=unavailable ENOSYS|LANDLOCK_UNAVAILABLE|landlock=unavailable ENOSYS",
			"outside_write=refused|outside_write=allowed|NOT_VERIFIED|wrote a file outside its working directory",
			"jvm_mem=refused|jvm_mem=writable|NOT_VERIFIED|the JVM's memory (/proc/PID/mem)",
			"landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix|landlock=7 writes=workdir reads=view net=refused scope=signal,abstract-unix|NOT_VERIFIED|a host view of the filesystem, but the launcher reports reads=view",
			"landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix|landlock=7 writes=workdir net=refused scope=signal,abstract-unix|NOT_VERIFIED|reports reads=(no report)",
			"refused=socket(AF_UNIX) EAFNOSUPPORT|allowed=socket(AF_UNIX) succeeded|NOT_VERIFIED|let through: socket(AF_UNIX)" })
	void theSeccompRungWithoutItsLayersIsRefused(String present, String replacement, UnavailabilityCause cause,
			String detail) {
		String report = seccompReport();
		assertThat(report).contains(present + "\n");
		IsolationCapability verdict = seccompVerdict(report.replace(present + "\n", replacement + "\n"));
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(cause);
		assertThat(verdict.detail()).contains(detail);
	}

	/**
	 * A system view is verified only where the launcher reports that Landlock handles
	 * reads (reads=view); a launcher that reads the host's files (reads=host) fails
	 * closed.
	 */
	@Test
	void aSystemViewIsVerifiedOnlyWhereTheLauncherReportsReadsOfTheView() {
		FilesystemView system = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/tmp")), true,
				List.of(Path.of("/usr"), Path.of("/etc")), Map.of(), List.of(Path.of("/etc/shadow")), List.of(),
				List.of(), List.of());
		String report = seccompReport();
		IsolationCapability hostReads = seccompVerdict(report, system);
		assertThat(hostReads.cause()).as("%s", hostReads).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(hostReads.detail())
			.contains("the settings ask for a system view of the filesystem, but the launcher reports reads=host");
		String viewReport = report.replace("reads=host", "reads=view")
				+ "rootlist=refused\nplanted=refused\nshadow=refused\n";
		IsolationCapability viewReads = seccompVerdict(viewReport, system);
		assertThat(viewReads.available()).as("%s", viewReads).isTrue();
		assertThat(viewReads.verified()).anyMatch((fact) -> fact.startsWith("filesystem view: system, by Landlock"));
		assertThat(seccompVerdict(report).verified()).noneMatch((fact) -> fact.startsWith("filesystem view: system"));
	}

	private static String seccompReport() {
		StringBuilder report = new StringBuilder();
		LAUNCHER.refusals(false, true, true)
			.forEach((name) -> report.append("refused=").append(name).append(" EAFNOSUPPORT\n"));
		report.append("landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix\n");
		report.append(
				"net=net:[1]\npid=pid:[2]\nipc=ipc:[5]\nuid=1000\ngid=1000\ncaps=0000000000000000\nnnp=1\nseccomp=2\n"
						+ "sigblk=0000000000000000\nsigign=0000000000000000\nmarker=" + ProbeSession.MARKER
						+ "\nwrite=ok\nroot=writable\nlo=up\nif=lo\nif=eth0\njvm_mem=refused\njvm_environ=refused\n"
						+ "jvm_signal=refused\noutside_write=refused\nlimit=core file size:0\n");
		return report.toString();
	}

	/**
	 * A writable root is not what the seccomp rung gives: Landlock limits writes all the
	 * same, and the facts say so rather than let the setting look applied.
	 */
	@org.junit.jupiter.api.Test
	void aWritableRootIsNamedAsWithoutEffectOnTheSeccompRung() {
		assertThat(seccompVerdict(seccompReport(), false).verified())
			.contains("root filesystem: writes refused outside the working directory (Landlock), reads allowed; "
					+ "readOnlyRoot=false has no effect on this rung: Landlock limits writes all the same");
	}

	/**
	 * The seccomp rung's command user, a uid of the host: verified only as the range's
	 * first uid with the command user's gid, without any capability, and able to reach
	 * its directory by its path; the facts say what a uid of the host means and what the
	 * executions share through the gid.
	 */
	@org.junit.jupiter.api.Test
	void theSeccompRungsCommandUserIsVerifiedAsAUidOfTheHostWithTheCommandUsersGidWithoutCapabilities() {
		String asCommandUser = seccompReport().replace("uid=1000\ngid=1000\n", "uid=65536\ngid=65534\n") + "path=ok\n";
		IsolationCapability verdict = commandUserVerdict(asCommandUser);
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.verified()).contains("capabilities: none",
				"uid 65536: the command user of a root JVM, so that the process limit holds (the first of the "
						+ "command user range: each execution runs as a uid of the host of its own, which no other "
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

	private static IsolationCapability commandUserVerdict(String report) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 0, 0,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L));
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5), List.of());
		return LinuxProbe.verdict(
				new SeccompMechanism(new Launcher(LAUNCHER.path(), false, 65534).withCommandUser(65536), host.view()),
				outcome, host, false, ResourceLimits.NONE, true, Duration.ofMillis(5));
	}

	private static IsolationCapability seccompVerdict(String report) {
		return seccompVerdict(report, true);
	}

	private static IsolationCapability seccompVerdict(String report, boolean readOnlyRoot) {
		return seccompVerdict(report, FilesystemView.of(List.of(Path.of("/tmp")), readOnlyRoot));
	}

	private static IsolationCapability seccompVerdict(String report, FilesystemView view) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000, view, Map.of(Path.of("/tmp"), 42L));
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5), List.of());
		return LinuxProbe.verdict(new SeccompMechanism(LAUNCHER, host.view()), outcome, host, false,
				Duration.ofMillis(5));
	}

	/**
	 * A child's report that is right in every respect.
	 */
	private static String report() {
		StringBuilder report = new StringBuilder();
		LAUNCHER.refusals(false).forEach((name) -> report.append("refused=").append(name).append(" EPERM\n"));
		report.append(
				"net=net:[3]\npid=pid:[4]\nipc=ipc:[6]\nuid=1000\ngid=1000\ncaps=0000000000000000\nnnp=1\nseccomp=2\n"
						+ "sigblk=0000000000000000\nsigign=0000000000000000\nmarker=" + ProbeSession.MARKER
						+ "\nwrite=ok\nroot=read-only\nhidden=43 /tmp\nlo=down\nif=lo\nlimit=core file size:0\n");
		return report.toString();
	}

	private static IsolationCapability verdict(HostFacts host) {
		return verdict(host, report());
	}

	private static IsolationCapability verdict(HostFacts host, String report) {
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5), List.of());
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, host.view());
		return LinuxProbe.verdict(mechanism, outcome, host, false, Duration.ofMillis(5));
	}

	/**
	 * The child's limits, as its {@code /proc/self/limits} shows them, are stated in the
	 * facts; each private tmpfs has the set size.
	 */
	@org.junit.jupiter.api.Test
	void theChildsLimitsAndTmpfsSizeAreStated() {
		IsolationCapability verdict = limitedVerdict(limitedReport(), ResourceLimits.defaults(), false);
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.verified())
			.contains("limits: memory 4 GiB, processes 512, cpu-time none, file-size none, open-files 1048576, "
					+ "core files 0", "hidden: /tmp (private empty tmpfs, 256 MiB each)");
		assertThat(verdict.verified()).noneMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN));
	}

	/**
	 * A limit the child does not have (an older launcher, a wrapper that drops the
	 * options), or a tmpfs of another size, is not verified.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "limit=processes:512|limit=processes:unlimited|processes limit is unlimited",
			"limit=data size:4294967296|limit=data size:unlimited|memory limit is unlimited",
			"limit=core file size:0|limit=core file size:unlimited|core files limit is unlimited",
			"size=65536:4096 /tmp|size=1964371:4096 /tmp|the private tmpfs over /tmp is not of 268435456 bytes" })
	void aChildWithoutItsLimitsIsNotVerified(String present, String replacement, String detail) {
		String report = limitedReport();
		assertThat(report).contains(present + "\n");
		IsolationCapability verdict = limitedVerdict(report.replace(present + "\n", replacement + "\n"),
				ResourceLimits.defaults(), false);
		assertThat(verdict.cause()).as("%s", verdict).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(verdict.detail()).contains(detail);
	}

	/**
	 * A setting above the JVM's own hard limit becomes that hard limit in the launcher
	 * (setrlimit(2) cannot raise it): the child must have exactly it, and the facts say
	 * so.
	 */
	@org.junit.jupiter.api.Test
	void aLimitAboveTheJvmsOwnHardLimitIsTheJvmsAndSaidSo() {
		Map<String, Long> jvmHard = Map.of("processes", 300L, "open files", 1048576L);
		String report = limitedReport().replace("limit=processes:512\n", "limit=processes:300\n");
		IsolationCapability verdict = limitedVerdict(report, ResourceLimits.defaults(), false, jvmHard);
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.verified()).contains("limits: memory 4 GiB, processes 300 (the JVM's own hard limit, "
				+ "below the setting 512), cpu-time none, file-size none, open-files 1048576, core files 0");
		IsolationCapability above = limitedVerdict(limitedReport(), ResourceLimits.defaults(), false, jvmHard);
		assertThat(above.cause()).as("%s", above).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(above.detail())
			.contains("processes limit is 512, not 300 (the JVM's own hard limit, below the " + "setting 512)");
	}

	/**
	 * A JVM running as the host's root whose command stays root (command user 0): the
	 * kernel exempts uid 0 from RLIMIT_NPROC, and the facts say so wherever a process
	 * limit is set.
	 */
	@org.junit.jupiter.api.Test
	void theProcessLimitIsNotGivenToAHostRootJvm() {
		assertThat(limitedVerdict(limitedReport(), ResourceLimits.defaults(), true).verified())
			.filteredOn((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN))
			.containsExactly("not given: the process limit: the command runs as the host's root (uid 0), which the "
					+ "kernel exempts from RLIMIT_NPROC (kernel/fork.c); no command user (cave.sandbox.linux.command-user "
					+ "is 0, or the JVM lacks CAP_SETUID and CAP_SETGID to switch to one); a "
					+ "JVM of another user bounds it");
		assertThat(limitedVerdict(limitedReport(), ResourceLimits.defaults(), true).verified())
			.anyMatch((fact) -> fact.startsWith("limits: memory 4 GiB, processes 512 (set, not enforced for root), "));
		ResourceLimits noProcesses = new ResourceLimits(ResourceLimits.DEFAULT_MEMORY, null, null, null, null, null);
		assertThat(limitedVerdict(limitedReport(), noProcesses, true).verified())
			.noneMatch((fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN));
	}

	/**
	 * Without a user namespace the launcher adds the uid's other tasks to the process
	 * limit and reports how many: the child's value must be the setting plus those (not
	 * merely at least the setting, which an inherited limit would pass), and the facts
	 * say what it counts.
	 */
	@org.junit.jupiter.api.Test
	void theSeccompRungsProcessLimitCountsTheUidsOtherTasks() {
		ResourceLimits limits = ResourceLimits.builder().processes(64).build();
		String report = seccompReport() + "nproc_others=18\nlimit=processes:82\n";
		IsolationCapability verdict = seccompVerdict(report, true, limits);
		assertThat(verdict.verified()).anyMatch((fact) -> fact.startsWith("limits: processes 64 beyond the 18 other "
				+ "tasks of the uid at start (RLIMIT_NPROC 82: without a user namespace, every task of the uid counts"));
		IsolationCapability inherited = seccompVerdict(seccompReport() + "nproc_others=18\nlimit=processes:96365\n",
				true, limits);
		assertThat(inherited.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(inherited.detail()).contains("processes limit is 96365, not 82");
		IsolationCapability uncounted = seccompVerdict(seccompReport() + "nproc_others=18\nlimit=processes:64\n", true,
				limits);
		assertThat(uncounted.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(uncounted.detail()).contains("processes limit is 64, not 82");
		IsolationCapability unreported = seccompVerdict(seccompReport() + "limit=processes:82\n", true, limits);
		assertThat(unreported.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(unreported.detail()).contains("did not report the uid's other tasks");
	}

	/**
	 * A host root JVM's command user: the child must run as that uid with exactly
	 * CAP_DAC_OVERRIDE and CAP_FOWNER; then the process limit is given and the facts say
	 * why. Root, or any other capability set, is not verified.
	 */
	@org.junit.jupiter.api.Test
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

	private static IsolationCapability commandUserVerdict(Launcher launcher, String report) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 0, 0,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L), Map.of());
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5), List.of());
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), launcher, host.view());
		return LinuxProbe.verdict(mechanism, outcome, host, false, ResourceLimits.defaults(), true,
				Duration.ofMillis(5));
	}

	private static String limitedReport() {
		return report() + "size=65536:4096 /tmp\nlimit=cpu time:unlimited\nlimit=file size:unlimited\n"
				+ "limit=data size:4294967296\nlimit=processes:512\nlimit=open files:1048576\n";
	}

	private static IsolationCapability limitedVerdict(String report, ResourceLimits limits, boolean hostRoot) {
		return limitedVerdict(report, limits, hostRoot, Map.of());
	}

	private static IsolationCapability limitedVerdict(String report, ResourceLimits limits, boolean hostRoot,
			Map<String, Long> jvmHardLimits) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L), jvmHardLimits);
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5), List.of());
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, host.view());
		return LinuxProbe.verdict(mechanism, outcome, host, false, limits, hostRoot, Duration.ofMillis(5));
	}

	private static IsolationCapability seccompVerdict(String report, boolean readOnlyRoot, ResourceLimits limits) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), readOnlyRoot), Map.of(Path.of("/tmp"), 42L));
		ProcessRunner.Outcome outcome = new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8),
				new byte[0], false, false, false, Duration.ofMillis(5), List.of());
		return LinuxProbe.verdict(new SeccompMechanism(LAUNCHER, host.view()), outcome, host, false, limits, false,
				Duration.ofMillis(5));
	}

}
