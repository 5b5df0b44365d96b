package dev.cavesandbox;

/**
 * Thrown when an execution asks for egress through the allow-list proxy
 * ({@link ExecutionRequest.Builder#allowedHosts(String...)} or
 * {@link SandboxSettings.Egress#allowedHosts()}) where the mechanism cannot offer it: the
 * egress bridge listens on the command's private loopback, which only the mechanisms with
 * a network namespace of their own have (bwrap, unshare, namespaces), not the seccomp
 * mechanism nor macOS's sandbox-exec, and only where the probe verified that loopback.
 * The command did not run.
 */
public class EgressUnavailableException extends CaveSandboxException {

	/** The stable error code of this failure. */
	public static final String CODE = "cave_sandbox_egress_unavailable";

	/**
	 * Create an exception with the given explanation.
	 * @param message why the mechanism cannot offer egress and how to fix it
	 */
	public EgressUnavailableException(String message) {
		super(CODE, message, null);
	}

}
