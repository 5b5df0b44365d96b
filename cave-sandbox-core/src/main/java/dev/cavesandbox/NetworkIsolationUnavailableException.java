package dev.cavesandbox;

import java.util.Objects;

/**
 * Thrown when a command must run network-isolated but this host cannot provide the
 * isolation: the primitive is missing, the kernel refuses it, or the probe could not
 * verify it. Its code is {@value #CODE}. Nothing was run when this is thrown (fail
 * closed).
 */
public class NetworkIsolationUnavailableException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_os_network_isolation_unavailable";

	/**
	 * The way out where another boundary already blocks egress; left out where the cause
	 * would stop unisolated runs too ({@link UnavailabilityCause#fallbackHelps()}).
	 */
	private static final String FALLBACK = ". Or, if a container or VM without network already blocks egress, "
			+ "mode fallback runs commands unisolated";

	private final IsolationCapability capability;

	/**
	 * Create an exception for the given probe verdict.
	 * @param capability the verdict of the probe, which must be unavailable
	 */
	public NetworkIsolationUnavailableException(IsolationCapability capability) {
		super(CODE, describe(capability), null);
		this.capability = capability;
	}

	private static String describe(IsolationCapability capability) {
		Objects.requireNonNull(capability, "capability must not be null");
		UnavailabilityCause cause = capability.cause();
		if (cause == null) {
			throw new IllegalArgumentException("capability must be unavailable");
		}
		return "OS-level network isolation is unavailable on this host: " + cause.description()
				+ (capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")") + ". Fix: " + cause.fix()
				+ (cause.fallbackHelps() ? FALLBACK : "");
	}

	/**
	 * Return the probe verdict that explains why isolation is unavailable.
	 * @return the capability, whose {@link IsolationCapability#cause() cause} is not
	 * {@code null}
	 */
	public IsolationCapability capability() {
		return this.capability;
	}

	/**
	 * Return the detected cause.
	 * @return the cause, never {@code null}
	 */
	public UnavailabilityCause cause() {
		return this.capability.cause();
	}

}
