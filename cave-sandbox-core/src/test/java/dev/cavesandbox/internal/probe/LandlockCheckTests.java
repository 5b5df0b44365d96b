package dev.cavesandbox.internal.probe;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.cavesandbox.internal.probe.ChildReports.seccompReport;
import static dev.cavesandbox.internal.probe.ChildReports.seccompVerdict;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Linux probe's judgement of the Landlock layer of a mechanism without a mount
 * namespace, from the child's report.
 */
class LandlockCheckTests {

	/**
	 * Without its Landlock layer the seccomp mechanism is refused, named; where the layer
	 * is reported but a write or the JVM's memory got through, it is not verified.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|', value = {
			"landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix|landlock=unavailable ENOSYS|LANDLOCK_UNAVAILABLE|landlock=unavailable ENOSYS",
			"outside_write=refused|outside_write=allowed|NOT_VERIFIED|wrote a file outside its working directory",
			"outside_write=refused|outside_write=failed No space left on device|NOT_VERIFIED|could not tell whether a write outside its working directory is refused: outside_write=failed No space left on device, not refused",
			"outside_write=refused|outside_write=failed no random name (od /dev/urandom)|NOT_VERIFIED|outside_write=failed no random name",
			"jvm_mem=refused|jvm_mem=writable|NOT_VERIFIED|the JVM's memory (/proc/PID/mem)",
			"landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix|landlock=7 writes=workdir reads=view net=refused scope=signal,abstract-unix|NOT_VERIFIED|a host view of the filesystem, but the launcher reports reads=view",
			"landlock=7 writes=workdir reads=host net=refused scope=signal,abstract-unix|landlock=7 writes=workdir net=refused scope=signal,abstract-unix|NOT_VERIFIED|reports reads=(no report)",
			"refused=socket(AF_UNIX, SOCK_DGRAM) EAFNOSUPPORT|allowed=socket(AF_UNIX, SOCK_DGRAM) succeeded|NOT_VERIFIED|let through: socket(AF_UNIX, SOCK_DGRAM)",
			"unix=supervised own=connected outside=EACCES|unix=supervised own=connected outside=ENOENT|NOT_VERIFIED|a unix socket outside the working directory was not refused",
			"unix=supervised own=connected outside=EACCES|unix=supervised own=connected outside=connected|NOT_VERIFIED|a unix socket outside the working directory was not refused" })
	void theSeccompMechanismWithoutItsLayersIsRefused(String present, String replacement, UnavailabilityCause cause,
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

	/**
	 * A writable root is not what the seccomp mechanism gives: Landlock limits writes all
	 * the same, and the facts say so rather than let the setting look applied.
	 */
	@Test
	void aWritableRootIsNamedAsWithoutEffectOnTheSeccompMechanism() {
		assertThat(seccompVerdict(seccompReport(), false).verified())
			.contains("root filesystem: writes refused outside the working directory (Landlock), reads allowed; "
					+ "readOnlyRoot=false has no effect on this mechanism: Landlock limits writes all the same");
	}

	/**
	 * The facts name what unix sockets give: the command's own through the supervisor,
	 * or, where the launcher has none (socket(AF_UNIX) refused), a named limitation; the
	 * host's stay out of reach either way.
	 */
	@Test
	void theFactsNameWhatUnixSocketsGive() {
		assertThat(seccompVerdict(seccompReport()).verified()).contains(
				"unix sockets: only the command's own beneath the working directory (supervised connect and bind); "
						+ "no datagram socket, no abstract name on the host's network stack");
		String unsupervised = seccompReport().replace("unix=supervised own=connected outside=EACCES",
				"unix=refused pidfd_getfd own=EAFNOSUPPORT outside=EAFNOSUPPORT");
		IsolationCapability verdict = seccompVerdict(unsupervised);
		assertThat(verdict.available()).as("%s", verdict).isTrue();
		assertThat(verdict.verified()).anyMatch(
				(fact) -> fact.startsWith(LinuxProbe.NOT_GIVEN + "unix sockets between the command's own processes")
						&& fact.contains("pidfd_getfd"));
	}

}
