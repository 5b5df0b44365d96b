package dev.cavesandbox;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.cavesandbox.internal.mechanism.LinuxNamespace;
import dev.cavesandbox.internal.mechanism.SandboxExecMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import org.jspecify.annotations.Nullable;

/**
 * The verdict of the {@link NetworkIsolationProbe}: whether this host can run a command
 * with no network, with which mechanism, and what was actually verified. Exactly one of
 * {@link #mechanism()} and {@link #cause()} is {@code null}; {@link #mechanismName()}
 * names the mechanism.
 *
 * @param mechanism the mechanism whose real command line the probe verified, which builds
 * the command line of every execution; {@code null} when isolation is unavailable
 * @param cause why isolation is unavailable, or {@code null} when it is available
 * @param detail what the wrapper or the child reported (its stderr, trimmed), or a
 * description of the host; empty, never {@code null}
 * @param verified the facts the probe observed in the child, for example "only interface:
 * lo"
 * @param privateLoopback whether the probe verified that the mechanism brings up a
 * private loopback, so that requests may ask for one
 * @param probeTime how long the probe took
 */
public record IsolationCapability(@Nullable SandboxMechanism mechanism, @Nullable UnavailabilityCause cause,
		String detail, List<String> verified, boolean privateLoopback, Duration probeTime) {

	public IsolationCapability {
		if ((mechanism == null) == (cause == null)) {
			throw new IllegalArgumentException("exactly one of mechanism and cause must be set");
		}
		detail = (detail != null) ? detail : "";
		verified = List.copyOf(verified);
		Objects.requireNonNull(probeTime, "probeTime must not be null");
	}

	/**
	 * Create a verdict of verified isolation.
	 * @param mechanism the verified mechanism
	 * @param verified what the probe observed
	 * @param privateLoopback whether a private loopback was verified too
	 * @param probeTime how long the probe took
	 * @return the capability
	 */
	public static IsolationCapability available(SandboxMechanism mechanism, List<String> verified,
			boolean privateLoopback, Duration probeTime) {
		return new IsolationCapability(Objects.requireNonNull(mechanism, "mechanism must not be null"), null, "",
				verified, privateLoopback, probeTime);
	}

	/**
	 * Create a verdict of unavailable isolation.
	 * @param cause the detected cause
	 * @param detail what the wrapper reported
	 * @param probeTime how long the probe took
	 * @return the capability
	 */
	public static IsolationCapability unavailable(UnavailabilityCause cause, String detail, Duration probeTime) {
		return new IsolationCapability(null, Objects.requireNonNull(cause, "cause must not be null"), detail, List.of(),
				false, probeTime);
	}

	/**
	 * Return the name of the verified mechanism ({@code bwrap}, {@code unshare},
	 * {@code sandbox-exec}).
	 * @return the name, or {@code null} when isolation is unavailable
	 */
	public @Nullable String mechanismName() {
		return (this.mechanism != null) ? this.mechanism.name() : null;
	}

	/**
	 * Return whether the probe verified isolation.
	 * @return {@code true} if a mechanism is available
	 */
	public boolean available() {
		return this.mechanism != null;
	}

	/**
	 * Return why a command cannot be given the egress proxy here, or {@code null} where
	 * it can: the bridge listens in a network namespace of the command's own, on a
	 * private loopback that the probe verified (the mechanisms {@code bwrap},
	 * {@code unshare} and {@code namespaces}).
	 * @return the reason with its fix, or {@code null}; the reason where isolation is
	 * unavailable
	 */
	public @Nullable String egressRefusal() {
		SandboxMechanism verified = this.mechanism;
		if (verified == null) {
			return "isolation is unavailable (" + this.cause + ")";
		}
		if (!verified.namespaces().contains(LinuxNamespace.NETWORK)) {
			return "the mechanism " + verified.name() + " has no network namespace of the command's own, where the "
					+ "egress bridge listens (only the mechanisms bwrap, unshare and namespaces have one); leave "
					+ "cave.sandbox.egress.allowed-hosts (and a request's allowedHosts) empty on this host, or run where "
					+ "a user namespace can be created (see docs/containers-and-kubernetes.md)";
		}
		if (!this.privateLoopback) {
			return "the mechanism " + verified.name() + " cannot give a private loopback on this host, where the "
					+ "egress bridge listens (" + UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix() + ")";
		}
		return null;
	}

	/**
	 * Return why a command cannot be given a private loopback here, or {@code null} where
	 * it can (the probe verified that the mechanism brings one up).
	 * @return the reason with its fix, or {@code null}; the reason where isolation is
	 * unavailable
	 */
	public @Nullable String loopbackRefusal() {
		SandboxMechanism verified = this.mechanism;
		if (verified == null) {
			return "isolation is unavailable (" + this.cause + ")";
		}
		if (this.privateLoopback) {
			return null;
		}
		String why = verified.namespaces().contains(LinuxNamespace.NETWORK) || verified instanceof SandboxExecMechanism
				? "cannot give a private loopback on this host ("
						+ UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE.fix() + ")"
				: "has no network namespace, so it cannot give a private loopback (only the mechanisms with one "
						+ "can: bwrap, unshare, namespaces)";
		return "the mechanism " + verified.name() + " " + why;
	}

	@Override
	public String toString() {
		return available() ? "available: " + mechanismName() + " " + this.verified
				: "unavailable: " + this.cause + (this.detail.isEmpty() ? "" : " (" + this.detail + ")");
	}

}
