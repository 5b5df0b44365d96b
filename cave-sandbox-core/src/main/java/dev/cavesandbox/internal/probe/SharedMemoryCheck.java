package dev.cavesandbox.internal.probe;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Judges POSIX shared memory and semaphores on a mechanism without a mount namespace,
 * where {@code /dev/shm} is the host's: the probe's child runs as an execution's does,
 * with the preload library ({@code libcave-shm.so}, which puts {@code shm_open(3)} and
 * {@code sem_open(3)} objects in {@code CAVE_SANDBOX_SHM}) and a directory of its own for
 * them, and reports {@code shm_preload=yes|no}, {@code shm_own=ok|refused} and
 * {@code devshm=refused|writable|absent|failed REASON} ({@code probe.sh}: a new file
 * under a random name that the child picks, never an existing one). A writable
 * {@code /dev/shm} fails the probe (every process of the host shares its objects), and so
 * does a failure other than a refusal ({@code EACCES}, {@code EPERM}, {@code EROFS}):
 * "File exists" or "No space left on device" says nothing about the sandbox. A library or
 * directory that does not work is stated as not given.
 */
final class SharedMemoryCheck {

	static final String GIVEN = "POSIX shared memory and semaphores: the execution's own directory (shm_open and "
			+ "sem_open through the preload library libcave-shm.so, dynamically linked programs only); the host's "
			+ "/dev/shm refused";

	private SharedMemoryCheck() {
	}

	/**
	 * Check the child's report and add the fact.
	 * @param facts the child's report by key
	 * @param verified receives the fact
	 * @return a failure where the child could create a file in the host's
	 * {@code /dev/shm}, or where its attempt failed otherwise than refused, else
	 * {@code null}
	 */
	static LinuxVerdict.@Nullable Failure check(Map<String, List<String>> facts, List<String> verified) {
		String devShm = ProbeScript.first(facts, "devshm");
		if (devShm.equals("writable")) {
			return LinuxVerdict.Failure.notVerified("the child created a file in the host's /dev/shm, where every "
					+ "process of the host shares POSIX shared memory objects");
		}
		if (devShm.startsWith("failed")) {
			return LinuxVerdict.Failure.notVerified("the child could not tell whether the host's /dev/shm is refused: "
					+ "creating a new file under a random name there " + devShm + " (devshm=" + devShm
					+ "), not refused");
		}
		String preload = ProbeScript.first(facts, "shm_preload");
		String own = ProbeScript.first(facts, "shm_own");
		if ((devShm.equals("refused") || devShm.equals("absent")) && preload.equals("yes") && own.equals("ok")) {
			verified.add(devShm.equals("refused") ? GIVEN : GIVEN.replace("refused", "absent"));
		}
		else {
			verified.add(LinuxProbe.NOT_GIVEN + "POSIX shared memory and semaphores between the command's own "
					+ "processes: the child reports shm_preload=" + orNone(preload) + " shm_own=" + orNone(own)
					+ " devshm=" + orNone(devShm));
		}
		return null;
	}

	private static String orNone(String value) {
		return value.isEmpty() ? "(no report)" : value;
	}

}
