package dev.cavesandbox.internal.probe;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.jspecify.annotations.Nullable;

/**
 * Judges the Landlock layer of a mechanism without a mount namespace (landlock(7)), from
 * the launcher's {@code landlock=} line (ABI, {@code reads=view} or {@code reads=host})
 * and from what the child could do: it must not have written a file beside its working
 * directory, nor opened the JVM's memory for writing. Also states what Landlock gives of
 * the filesystem in place of a mount namespace.
 */
final class LandlockCheck {

	private LandlockCheck() {
	}

	/**
	 * Check the layer and add its facts.
	 * @param facts the child's report by key
	 * @param view the view of the settings ({@code reads=view} for a system view)
	 * @param verified receives the facts
	 * @return {@link UnavailabilityCause#LANDLOCK_UNAVAILABLE} where the launcher reports
	 * none, a failure of {@link UnavailabilityCause#NOT_VERIFIED} where the child got
	 * through it, or {@code null} when the layer holds
	 */
	static LinuxVerdict.@Nullable Failure check(Map<String, List<String>> facts, FilesystemView view,
			List<String> verified) {
		String landlock = ProbeScript.first(facts, "landlock");
		if (landlock.isEmpty() || landlock.startsWith("unavailable")) {
			return new LinuxVerdict.Failure(UnavailabilityCause.LANDLOCK_UNAVAILABLE,
					"the launcher reports landlock=" + (landlock.isEmpty() ? "(no report)" : landlock));
		}
		String outside = ProbeScript.first(facts, "outside_write");
		if (outside.equals("allowed")) {
			return LinuxVerdict.Failure.notVerified("the child wrote a file outside its working directory although "
					+ "the launcher reports landlock=" + landlock);
		}
		if (!outside.equals("refused")) {
			return LinuxVerdict.Failure.notVerified("the child could not tell whether a write outside its working "
					+ "directory is refused: outside_write=" + (outside.isEmpty() ? "(no report)" : outside)
					+ ", not refused");
		}
		if (ProbeScript.first(facts, "jvm").equals("invisible")) {
			return LinuxVerdict.Failure.notVerified("the child could not see the JVM's /proc entry, so the probe could "
					+ "not check that the JVM's memory is out of its reach");
		}
		if (!ProbeScript.first(facts, "jvm_mem").equals("refused")) {
			return LinuxVerdict.Failure
				.notVerified("the child could open the JVM's memory (/proc/PID/mem) for writing");
		}
		String reads = Arrays.stream(landlock.split(" "))
			.filter((part) -> part.startsWith("reads="))
			.map((part) -> part.substring("reads=".length()))
			.findFirst()
			.orElse("(no report)");
		if (!reads.equals(view.isSystem() ? "view" : "host")) {
			return LinuxVerdict.Failure.notVerified("the settings ask for a " + (view.isSystem() ? "system" : "host")
					+ " view of the filesystem, but the launcher reports reads=" + reads + " (landlock=" + landlock
					+ ")");
		}
		verified.add("Landlock ABI " + landlock);
		verified.add("writes outside the working directory: refused (Landlock)");
		verified.add("the JVM's memory (/proc/PID/mem): refused (Landlock)");
		verified
			.add(ProbeScript.first(facts, "jvm_environ").equals("refused") ? "the JVM's environment: refused (Landlock)"
					: LinuxProbe.NOT_GIVEN + "the JVM's environment (/proc/PID/environ) is readable");
		verified.add(ProbeScript.first(facts, "jvm_signal").equals("refused")
				? "signals to the JVM and every process outside the sandbox: refused (Landlock scope)"
				: LinuxProbe.NOT_GIVEN + "signal scoping (Landlock ABI 6+): the command can signal the JVM and other "
						+ "processes of its user");
		String unix = ProbeScript.first(facts, "unix");
		if (!unix.endsWith(" outside=EACCES") && !unix.endsWith(" outside=EAFNOSUPPORT")) {
			return LinuxVerdict.Failure.notVerified("a unix socket outside the working directory was not refused: the "
					+ "launcher reports unix=" + (unix.isEmpty() ? "(no report)" : unix));
		}
		verified.add(unixSockets(unix));
		return null;
	}

	/**
	 * State what the launcher's {@code unix=} line reports:
	 * {@code supervised own=connected} where the command's own pathname socket beneath
	 * its working directory worked through the launcher's supervisor of
	 * {@code connect(2)} and {@code bind(2)}; otherwise {@code refused REASON own=ERRNO}
	 * (no supervisor: the kernel or the host lacks what it needs, and
	 * {@code socket(AF_UNIX)} stays refused) or {@code supervised own=ERRNO}. Either way
	 * the host's unix sockets stay out of reach, so neither fails the probe.
	 * @param unix the value of the {@code unix=} line, empty where there is none
	 * @return the fact
	 */
	static String unixSockets(String unix) {
		if (unix.startsWith("supervised own=connected ")) {
			return "unix sockets: only the command's own beneath the working directory (supervised connect and bind); "
					+ "no datagram socket, no abstract name on the host's network stack";
		}
		return LinuxProbe.NOT_GIVEN + "unix sockets between the command's own processes (socket(AF_UNIX) and "
				+ "socketpair(2) pairs only): the launcher reports unix=" + (unix.isEmpty() ? "(no report)" : unix);
	}

	/**
	 * Add what a mechanism without a mount namespace gives of the filesystem: no private
	 * hidden directories, writes (and in a system view reads) limited by Landlock, file
	 * metadata not covered, and with a PID namespace the host's {@code /proc}.
	 * @param view the view of the settings
	 * @param pidNamespace whether the mechanism creates a PID namespace
	 * @param verified receives the facts
	 */
	static void filesystemFacts(FilesystemView view, boolean pidNamespace, List<String> verified) {
		if (view.isSystem()) {
			verified.add(LinuxProbe.NOT_GIVEN + "hidden directories: without a mount namespace /tmp, /run and the "
					+ "other hidden directories are not private ones; in the system view Landlock refuses reading and "
					+ "writing them; the host's unix sockets there are unreachable (connect(2) and bind(2) of a unix "
					+ "socket only beneath the working directory, no unix datagram socket)");
			verified.add("root filesystem: writes refused outside the working directory and the writable paths "
					+ "(Landlock)");
		}
		else {
			verified.add(LinuxProbe.NOT_GIVEN + "hidden directories: without a mount namespace the host's files stay "
					+ "readable (/tmp, /run, other executions' working directories); its unix sockets are "
					+ "unreachable (connect(2) and bind(2) of a unix socket only beneath the working directory, no "
					+ "unix datagram socket)");
			verified.add("root filesystem: writes refused outside the working directory (Landlock), reads allowed"
					+ (view.readOnlyRoot() ? ""
							: "; readOnlyRoot=false has no effect on this mechanism: Landlock limits writes all the same"));
		}
		verified.add(LinuxProbe.NOT_GIVEN + "the metadata of files outside the working directory that the JVM's user "
				+ "owns: Landlock does not cover chmod (set-id bits stay refused by the filter), chown to the user's "
				+ "own groups, extended attributes and timestamps");
		if (pidNamespace) {
			verified.add(LinuxProbe.NOT_GIVEN + "a /proc of its own: /proc is the host's and lists its processes "
					+ "(their memory and environment are refused by Landlock)");
		}
	}

}
