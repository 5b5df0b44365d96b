package dev.cavesandbox.internal.probe;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import org.jspecify.annotations.Nullable;

/**
 * Judges the child's resource limits ({@code limit=NAME:SOFT} lines of {@code probe.sh},
 * from {@code /proc/self/limits}) against the limits it ran with, and states them in the
 * facts, labelled with the names of the {@code cave.sandbox.limits.*} properties. A
 * setting above the JVM's own hard limit is that hard limit (setrlimit(2) cannot raise
 * it). On a mechanism without a user namespace the launcher adds the uid's other tasks to
 * the process limit and reports how many ({@code nproc_others=N}).
 */
final class LimitsCheck {

	/**
	 * Why a root JVM's commands stay root, as the process limit's not-given fact says.
	 */
	static final String NO_COMMAND_USER = "no command user (cave.sandbox.linux.command-user is 0, or the JVM "
			+ "lacks CAP_SETUID and CAP_SETGID to switch to one)";

	private static final String CAPPED = " (the JVM's own hard limit, below the setting ";

	private final Map<String, String> child;

	private final Map<String, Long> jvmHardLimits;

	private final List<String> stated = new ArrayList<>();

	private LimitsCheck(Map<String, String> child, Map<String, Long> jvmHardLimits) {
		this.child = child;
		this.jvmHardLimits = jvmHardLimits;
	}

	/**
	 * Check that every set limit is the child's, and add the facts.
	 * @param facts the child's report by key
	 * @param limits the limits the child ran with
	 * @param jvmHardLimits the JVM's finite hard limits by their names in
	 * {@code /proc/self/limits}
	 * @param sharedUid whether the child shares the uid with the host's other tasks (no
	 * user namespace), so that the launcher counts them into the process limit
	 * @param hostRoot whether the command runs as the host's root, which the kernel
	 * exempts from the process limit
	 * @param verified receives the facts
	 * @return the failure, or {@code null} when every set limit is the child's
	 */
	static @Nullable String check(Map<String, List<String>> facts, ResourceLimits limits,
			Map<String, Long> jvmHardLimits, boolean sharedUid, boolean hostRoot, List<String> verified) {
		Long processes = (limits.processes() != null) ? limits.processes().longValue() : null;
		Long openFiles = (limits.openFiles() != null) ? limits.openFiles().longValue() : null;
		// Without a user namespace the child's RLIMIT_NPROC is the setting plus the
		// uid's other tasks that the launcher reported: exactly that, never just the
		// setting (which would count the JVM's own threads against the command).
		String others = ProbeScript.first(facts, "nproc_others");
		boolean counted = sharedUid && processes != null;
		if (counted && !isNumber(others)) {
			return "the launcher did not report the uid's other tasks it added to the process limit";
		}
		Long nproc = counted ? Long.valueOf(processes + Long.parseLong(others)) : processes;
		// "none" where the child has no limit, as the properties say it.
		List<Limit> wanted = List.of(new Limit("data size", "memory", limits.memory(), true),
				new Limit("processes", "processes", nproc, false),
				new Limit("cpu time", "cpu-time", limits.cpuSeconds(), false),
				new Limit("file size", "file-size", limits.fileSize(), true),
				new Limit("open files", "open-files", openFiles, false),
				new Limit("core file size", "core files", 0L, true));
		LimitsCheck check = new LimitsCheck(childLimits(facts), jvmHardLimits);
		for (Limit setting : wanted) {
			String failure = (counted && setting.name().equals("processes"))
					? check.countedProcesses(setting, processes, others) : check.limit(setting);
			if (failure != null) {
				return failure;
			}
		}
		check.addFacts(hostRoot && processes != null, verified);
		return null;
	}

	private static Map<String, String> childLimits(Map<String, List<String>> facts) {
		Map<String, String> child = new LinkedHashMap<>();
		for (String fact : facts.getOrDefault("limit", List.of())) {
			int separator = fact.lastIndexOf(':');
			child.put(fact.substring(0, separator), fact.substring(separator + 1));
		}
		return child;
	}

	/** Check one limit: the setting, or the JVM's hard limit where that is lower. */
	private @Nullable String limit(Limit setting) {
		Limit limit = setting.within(this.jvmHardLimits.get(setting.name()));
		String actual = this.child.getOrDefault(limit.name(), "");
		if (limit != setting) {
			if (!actual.equals(String.valueOf(limit.expected()))) {
				return "the child's " + limit.label() + " limit is " + (actual.isEmpty() ? "unknown" : actual)
						+ ", not " + limit.expected() + CAPPED + setting.expected() + ")";
			}
			this.stated.add(limit.label() + " " + limit.shown(actual) + CAPPED + setting.expected() + ")");
			return null;
		}
		if (limit.expected() != null && !actual.equals(limit.expected().toString())) {
			return "the child's " + limit.label() + " limit is " + (actual.isEmpty() ? "unknown" : actual) + ", not "
					+ limit.expected();
		}
		if (!actual.isEmpty()) {
			this.stated.add(limit.label() + " " + limit.shown(actual));
		}
		return null;
	}

	/**
	 * Check the process limit that the launcher counted: the setting plus the uid's other
	 * tasks, exactly.
	 */
	private @Nullable String countedProcesses(Limit setting, Long processes, String others) {
		Limit limit = setting.within(this.jvmHardLimits.get(setting.name()));
		String actual = this.child.getOrDefault(limit.name(), "");
		if (limit == setting && actual.equals(String.valueOf(limit.expected()))) {
			this.stated.add("processes " + processes + " beyond the " + others
					+ " other tasks of the uid at start (RLIMIT_NPROC " + actual
					+ ": without a user namespace, every task of the uid counts, also those in other PID "
					+ "namespaces that the launcher cannot see)");
			return null;
		}
		return limit(setting);
	}

	private void addFacts(boolean rootProcesses, List<String> verified) {
		if (rootProcesses) {
			// Set in the child, but the kernel does not hold root to it: said here too,
			// not only in the not-given fact below.
			this.stated.replaceAll(
					(entry) -> entry.startsWith("processes ") ? entry + " (set, not enforced for root)" : entry);
		}
		if (!this.stated.isEmpty()) {
			verified.add("limits: " + String.join(", ", this.stated));
		}
		if (rootProcesses) {
			verified.add(LinuxProbe.NOT_GIVEN + "the process limit: the command runs as the host's root (uid 0), "
					+ "which the kernel exempts from RLIMIT_NPROC (kernel/fork.c); " + NO_COMMAND_USER
					+ "; a JVM of another user bounds it");
		}
	}

	/**
	 * Whether {@code stat -f -c %b:%S} reports a filesystem of the size, rounded up to
	 * whole blocks.
	 */
	static boolean ofSize(String blocks, long size) {
		int separator = blocks.indexOf(':');
		if (separator < 0 || !isNumber(blocks.substring(0, separator)) || !isNumber(blocks.substring(separator + 1))) {
			return false;
		}
		long count = Long.parseLong(blocks.substring(0, separator));
		long blockSize = Long.parseLong(blocks.substring(separator + 1));
		return blockSize > 0 && count == (size + blockSize - 1) / blockSize;
	}

	/** A size in bytes as the properties write it: in the largest whole unit. */
	static String bytes(long size) {
		if (size == 0) {
			return "0";
		}
		String[] units = { "GiB", "MiB", "KiB" };
		for (int i = 0; i < units.length; i++) {
			long unit = 1L << (10 * (3 - i));
			if (size % unit == 0) {
				return (size / unit) + " " + units[i];
			}
		}
		return size + " bytes";
	}

	private static boolean isNumber(String text) {
		return !text.isEmpty() && text.length() < 19 && text.chars().allMatch(Character::isDigit);
	}

	/** A resource limit as {@code /proc/self/limits} names it, and its setting. */
	private record Limit(String name, String label, @Nullable Long expected, boolean inBytes) {

		/**
		 * Return this limit as the launcher sets it under the JVM's hard limit of that
		 * resource: a setting above it becomes it (the launcher's soft limit, which is
		 * the CPU limit's too while its hard limit is one second above); this limit
		 * itself when it is not set or not above.
		 */
		Limit within(@Nullable Long jvmHard) {
			if (this.expected == null || jvmHard == null || this.expected <= jvmHard
					|| this.name.equals("core file size")) {
				return this;
			}
			return new Limit(this.name, this.label, jvmHard, this.inBytes);
		}

		/**
		 * Return the child's value of this limit as the properties write it: "none" for
		 * no limit, a size in bytes with its unit, a CPU time in seconds.
		 */
		String shown(String actual) {
			if (actual.equals("unlimited")) {
				return "none";
			}
			if (!isNumber(actual)) {
				return actual;
			}
			if (this.inBytes) {
				return bytes(Long.parseLong(actual));
			}
			return this.name.equals("cpu time") ? actual + "s" : actual;
		}

	}

}
