package dev.cavesandbox.internal.probe;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;

/**
 * Reports of the Linux probe's child for {@link LinuxVerdictTests},
 * {@link LandlockCheckTests} and {@link LimitsCheckTests}, right in every respect, and
 * the verdicts on them.
 */
final class ChildReports {

	static final Launcher LAUNCHER = new Launcher(Path.of("/usr/lib/cave-sandbox-launcher"), false);

	private ChildReports() {
	}

	/**
	 * A child's report that is right in every respect.
	 */
	static String report() {
		StringBuilder report = new StringBuilder();
		LAUNCHER.refusals(false).forEach((name) -> report.append("refused=").append(name).append(" EPERM\n"));
		report.append(
				"net=net:[3]\npid=pid:[4]\nipc=ipc:[6]\nuid=1000\ngid=1000\ncaps=0000000000000000\nnnp=1\nseccomp=2\n"
						+ "sigblk=0000000000000000\nsigign=0000000000000000\nmarker=" + ProbeSession.MARKER
						+ "\nwrite=ok\nroot=read-only\nhidden=43 /tmp\nlo=down\nif=lo\nlimit=core file size:0\n");
		return report.toString();
	}

	static String seccompReport() {
		StringBuilder report = new StringBuilder();
		LAUNCHER.refusals(false, true, true)
			.forEach((name) -> report.append("refused=").append(name).append(" EAFNOSUPPORT\n"));
		report.append("landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix\n");
		report.append("unix=supervised own=connected outside=EACCES\n");
		report.append(
				"net=net:[1]\npid=pid:[2]\nipc=ipc:[5]\nuid=1000\ngid=1000\ncaps=0000000000000000\nnnp=1\nseccomp=2\n"
						+ "sigblk=0000000000000000\nsigign=0000000000000000\nmarker=" + ProbeSession.MARKER
						+ "\nwrite=ok\nroot=writable\nlo=up\nif=lo\nif=eth0\njvm_mem=refused\njvm_environ=refused\n"
						+ "jvm_signal=refused\noutside_write=refused\nshm_preload=yes\nshm_own=ok\ndevshm=refused\n"
						+ "limit=core file size:0\n");
		return report.toString();
	}

	static String limitedReport() {
		return report() + "size=65536:4096 /tmp\nlimit=cpu time:unlimited\nlimit=file size:unlimited\n"
				+ "limit=data size:4294967296\nlimit=processes:512\nlimit=open files:1048576\n";
	}

	static IsolationCapability verdict(HostFacts host) {
		return verdict(host, report());
	}

	static IsolationCapability verdict(HostFacts host, String report) {
		ProcessRunner.Outcome outcome = outcome(report);
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, host.view());
		return LinuxVerdict.judge(mechanism, outcome, host, false, Duration.ofMillis(5));
	}

	static IsolationCapability seccompVerdict(String report) {
		return seccompVerdict(report, true);
	}

	static IsolationCapability seccompVerdict(String report, boolean readOnlyRoot) {
		return seccompVerdict(report, FilesystemView.of(List.of(Path.of("/tmp")), readOnlyRoot));
	}

	static IsolationCapability seccompVerdict(String report, FilesystemView view) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000, view, Map.of(Path.of("/tmp"), 42L));
		ProcessRunner.Outcome outcome = outcome(report);
		return LinuxVerdict.judge(new SeccompMechanism(LAUNCHER, host.view()), outcome, host, false,
				Duration.ofMillis(5));
	}

	static IsolationCapability seccompVerdict(String report, boolean readOnlyRoot, ResourceLimits limits) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), readOnlyRoot), Map.of(Path.of("/tmp"), 42L));
		ProcessRunner.Outcome outcome = outcome(report);
		return LinuxVerdict.judge(new SeccompMechanism(LAUNCHER, host.view()), outcome, host, false, limits, false,
				Duration.ofMillis(5));
	}

	static IsolationCapability commandUserVerdict(String report) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 0, 0,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L));
		ProcessRunner.Outcome outcome = outcome(report);
		return LinuxVerdict.judge(
				new SeccompMechanism(new Launcher(LAUNCHER.path(), false, 65534).withCommandUser(65536), host.view()),
				outcome, host, false, ResourceLimits.NONE, true, Duration.ofMillis(5));
	}

	static IsolationCapability commandUserVerdict(Launcher launcher, String report) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 0, 0,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L), Map.of());
		ProcessRunner.Outcome outcome = outcome(report);
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), launcher, host.view());
		return LinuxVerdict.judge(mechanism, outcome, host, false, ResourceLimits.defaults(), true,
				Duration.ofMillis(5));
	}

	static IsolationCapability limitedVerdict(String report, ResourceLimits limits, boolean hostRoot) {
		return limitedVerdict(report, limits, hostRoot, Map.of());
	}

	static IsolationCapability limitedVerdict(String report, ResourceLimits limits, boolean hostRoot,
			Map<String, Long> jvmHardLimits) {
		HostFacts host = new HostFacts("net:[1]", "pid:[2]", "ipc:[5]", 1000, 1000,
				FilesystemView.of(List.of(Path.of("/tmp")), true), Map.of(Path.of("/tmp"), 42L), jvmHardLimits);
		ProcessRunner.Outcome outcome = outcome(report);
		SandboxMechanism mechanism = new BubblewrapMechanism(Path.of("/usr/bin/bwrap"), LAUNCHER, host.view());
		return LinuxVerdict.judge(mechanism, outcome, host, false, limits, hostRoot, Duration.ofMillis(5));
	}

	private static ProcessRunner.Outcome outcome(String report) {
		return new ProcessRunner.Outcome(0, report.getBytes(StandardCharsets.UTF_8), new byte[0], false, false, false,
				Duration.ofMillis(5), List.of(), true);
	}

}
