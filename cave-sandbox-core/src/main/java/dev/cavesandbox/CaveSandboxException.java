package dev.cavesandbox;

import org.jspecify.annotations.Nullable;

/**
 * Base class of every failure that cave-sandbox reports. Each subclass stands for one
 * failure and carries a stable, machine-readable {@linkplain #code() code} (snake case,
 * prefixed {@code cave_sandbox_}) that does not change between releases, so callers can
 * branch on it and operators can search logs for it.
 */
public abstract class CaveSandboxException extends RuntimeException {

	private final String code;

	protected CaveSandboxException(String code, String message, @Nullable Throwable cause) {
		super(code + ": " + message, cause);
		this.code = code;
	}

	/**
	 * Return the stable error code of this failure, for example
	 * {@code cave_sandbox_os_network_isolation_unavailable}.
	 * @return the error code, never {@code null}
	 */
	public String code() {
		return this.code;
	}

}
