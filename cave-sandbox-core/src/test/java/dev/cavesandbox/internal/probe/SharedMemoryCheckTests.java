package dev.cavesandbox.internal.probe;

import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.UnavailabilityCause;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SharedMemoryCheck}: the child's {@code shm_preload}, {@code shm_own} and
 * {@code devshm} lines.
 */
class SharedMemoryCheckTests {

	@Test
	void theLibraryAndTheOwnDirectoryWorkingAndDevShmRefusedAreGiven() {
		List<String> verified = new ArrayList<>();
		assertThat(check("shm_preload=yes\nshm_own=ok\ndevshm=refused\n", verified)).isNull();
		assertThat(verified).containsExactly(SharedMemoryCheck.GIVEN);
	}

	@Test
	void aWritableDevShmFailsTheProbe() {
		List<String> verified = new ArrayList<>();
		LinuxVerdict.Failure failure = check("shm_preload=yes\nshm_own=ok\ndevshm=writable\n", verified);
		assertThat(failure).isNotNull();
		assertThat(failure.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
		assertThat(failure.detail()).isEqualTo("the child created a file in the host's /dev/shm, where every process "
				+ "of the host shares POSIX shared memory objects");
		assertThat(verified).isEmpty();
	}

	/**
	 * The child creates a new file under a random name; only a refusal (EACCES, EPERM,
	 * EROFS) says that the sandbox refuses {@code /dev/shm}: a name taken, a full file
	 * system, or no random name says nothing about it, and fails the probe naming it.
	 */
	@Test
	void aDevShmFailureOtherThanARefusalFailsTheProbeNamingIt() {
		for (String failed : List.of("failed File exists", "failed No space left on device",
				"failed no random name (od /dev/urandom)")) {
			List<String> verified = new ArrayList<>();
			LinuxVerdict.Failure failure = check("shm_preload=yes\nshm_own=ok\ndevshm=" + failed + "\n", verified);
			assertThat(failure).as(failed).isNotNull();
			assertThat(failure.cause()).isEqualTo(UnavailabilityCause.NOT_VERIFIED);
			assertThat(failure.detail()).isEqualTo("the child could not tell whether the host's /dev/shm is refused: "
					+ "creating a new file under a random name there " + failed + " (devshm=" + failed
					+ "), not refused");
			assertThat(verified).isEmpty();
		}
	}

	@Test
	void aHostWithoutDevShmIsStatedAsSuch() {
		List<String> verified = new ArrayList<>();
		assertThat(check("shm_preload=yes\nshm_own=ok\ndevshm=absent\n", verified)).isNull();
		assertThat(verified).singleElement().asString().endsWith("the host's /dev/shm absent");
	}

	@Test
	void aLibraryNotPreloadedOrADirectoryNotWritableIsNotGivenWithWhatTheChildReported() {
		List<String> verified = new ArrayList<>();
		assertThat(check("shm_preload=no\nshm_own=ok\ndevshm=refused\n", verified)).isNull();
		assertThat(check("shm_preload=yes\nshm_own=refused\ndevshm=refused\n", verified)).isNull();
		assertThat(check("", verified)).isNull();
		assertThat(verified).containsExactly(
				LinuxProbe.NOT_GIVEN + "POSIX shared memory and semaphores between the command's own processes: the "
						+ "child reports shm_preload=no shm_own=ok devshm=refused",
				LinuxProbe.NOT_GIVEN + "POSIX shared memory and semaphores between the command's own processes: the "
						+ "child reports shm_preload=yes shm_own=refused devshm=refused",
				LinuxProbe.NOT_GIVEN + "POSIX shared memory and semaphores between the command's own processes: the "
						+ "child reports shm_preload=(no report) shm_own=(no report) devshm=(no report)");
	}

	private static LinuxVerdict.Failure check(String report, List<String> verified) {
		return SharedMemoryCheck.check(ProbeScript.facts(report), verified);
	}

}
