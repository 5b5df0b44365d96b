package dev.cavesandbox.internal.probe;

import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.UnavailabilityCause;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.cavesandbox.internal.probe.ChildReports.limitedReport;
import static dev.cavesandbox.internal.probe.ChildReports.limitedVerdict;
import static dev.cavesandbox.internal.probe.ChildReports.seccompReport;
import static dev.cavesandbox.internal.probe.ChildReports.seccompVerdict;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Linux probe's judgement of the child's resource limits and tmpfs sizes, from the
 * child's report.
 */
class LimitsCheckTests {

	/**
	 * The child's limits, as its {@code /proc/self/limits} shows them, are stated in the
	 * facts; each private tmpfs has the set size.
	 */
	@Test
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
	@Test
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
	@Test
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
	@Test
	void theSeccompMechanismsProcessLimitCountsTheUidsOtherTasks() {
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

}
