package dev.cavesandbox.internal.probe;

/**
 * The red-team tests' way to the uid that each seccomp probe of a root JVM takes for its
 * child ({@link LinuxProbe#observingCommandUids}), for tests outside this package.
 */
public final class ProbeCommandUids {

	private ProbeCommandUids() {
	}

	/**
	 * Run probes on this thread while an observer is told each uid that a seccomp probe
	 * takes for its child, once the probe holds it and before the probe's directory is
	 * made; the probe waits for the observer.
	 * @param observer told each uid; what it throws ends the probe (its uid given back)
	 * and is thrown here, wrapped
	 * @param probes the probes
	 * @throws Exception what the probes threw, or the observer's exception, wrapped
	 */
	public static void observing(Observer observer, Probes probes) throws Exception {
		LinuxProbe.observingCommandUids((uid) -> {
			try {
				observer.taken(uid);
			}
			catch (Exception ex) {
				throw new IllegalStateException("the observer of the probe's uid " + uid + " failed", ex);
			}
		}, probes::run);
	}

	/** Told each uid that a probe took. */
	@FunctionalInterface
	public interface Observer {

		void taken(long uid) throws Exception;

	}

	/** The probes to run. */
	@FunctionalInterface
	public interface Probes {

		void run() throws Exception;

	}

}
