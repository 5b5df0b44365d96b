package dev.cavesandbox;

/**
 * What to do when OS-level network isolation is unavailable on the host.
 */
public enum SandboxMode {

	/**
	 * Fail closed: nothing ever runs unisolated. Executions throw
	 * {@link NetworkIsolationUnavailableException} (the default).
	 */
	STRICT,

	/**
	 * Run unisolated after one loud warning; every {@link ExecutionResult} reports
	 * {@link Isolation#NONE}.
	 */
	FALLBACK

}
