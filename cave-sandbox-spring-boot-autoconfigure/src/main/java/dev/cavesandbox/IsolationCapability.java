package dev.cavesandbox;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The verdict of the {@link NetworkIsolationProbe}: whether this host can run a command with no
 * network, with which mechanism, and what was actually verified. Exactly one of
 * {@link #mechanism()} and {@link #cause()} is {@code null}.
 *
 * @param mechanism the mechanism that was verified (for example {@code unshare}), or {@code null}
 * when isolation is unavailable
 * @param cause why isolation is unavailable, or {@code null} when it is available
 * @param detail what the wrapper or the child reported (its stderr, trimmed), or a description of
 * the host; empty, never {@code null}
 * @param verified the facts the probe observed in the child, for example "only interface: lo"
 * @param commandPrefix the verified command line that is put before every argv (the wrapper and
 * its options, ending with {@code --}); empty when isolation is unavailable
 * @param probeTime how long the probe took
 */
public record IsolationCapability(String mechanism, UnavailabilityCause cause, String detail, List<String> verified,
		List<String> commandPrefix, Duration probeTime) {

	public IsolationCapability {
		if ((mechanism == null) == (cause == null)) {
			throw new IllegalArgumentException("exactly one of mechanism and cause must be set");
		}
		detail = (detail != null) ? detail : "";
		verified = List.copyOf(verified);
		commandPrefix = List.copyOf(commandPrefix);
		Objects.requireNonNull(probeTime, "probeTime must not be null");
	}

	/**
	 * Create a verdict of verified isolation.
	 * @param mechanism the mechanism name
	 * @param verified what the probe observed
	 * @param commandPrefix the verified command line put before every argv
	 * @param probeTime how long the probe took
	 * @return the capability
	 */
	public static IsolationCapability available(String mechanism, List<String> verified, List<String> commandPrefix,
			Duration probeTime) {
		return new IsolationCapability(mechanism, null, "", verified, commandPrefix, probeTime);
	}

	/**
	 * Create a verdict of unavailable isolation.
	 * @param cause the detected cause
	 * @param detail what the wrapper reported
	 * @param probeTime how long the probe took
	 * @return the capability
	 */
	public static IsolationCapability unavailable(UnavailabilityCause cause, String detail, Duration probeTime) {
		return new IsolationCapability(null, cause, detail, List.of(), List.of(), probeTime);
	}

	/**
	 * Return whether the probe verified isolation.
	 * @return {@code true} if a mechanism is available
	 */
	public boolean available() {
		return this.mechanism != null;
	}

	@Override
	public String toString() {
		return available() ? "available: " + this.mechanism + " " + this.verified
				: "unavailable: " + this.cause + (this.detail.isEmpty() ? "" : " (" + this.detail + ")");
	}

}
