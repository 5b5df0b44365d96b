package dev.cavesandbox.autoconfigure;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.UnavailabilityCause;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a startup that failed closed because network isolation is unavailable in
 * strict mode: the detected cause, the probe detail, and every way out, in terms of the
 * {@code cave.sandbox.*} properties ({@link PropertyFixes}). Fallback is offered only
 * where it can help ({@link dev.cavesandbox.UnavailabilityCause#fallbackHelps()}): not
 * for an unusable work directory, which would stop unisolated runs just the same.
 */
class NetworkIsolationUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<NetworkIsolationUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, NetworkIsolationUnavailableException cause) {
		IsolationCapability capability = cause.capability();
		// A work directory it cannot use says so first: the host may isolate well.
		String what = (capability.cause() == UnavailabilityCause.WORK_DIRECTORY_UNUSABLE)
				? "cave-sandbox cannot use its work directory, so it could not verify OS-level network isolation"
				: "cave-sandbox could not verify OS-level network isolation";
		String description = String.format(
				"%s on this host, and cave.sandbox.mode is strict, so it failed closed (%s).%n%nCause: %s: %s.%n%s",
				what, NetworkIsolationUnavailableException.CODE, capability.cause(),
				PropertyFixes.description(capability.cause()),
				capability.detail().isEmpty() ? "" : "Probe detail: " + capability.detail());
		String failLate = String.format(
				"set cave.sandbox.fail-fast=false to start anyway; every execution then " + "fails with %s.",
				NetworkIsolationUnavailableException.CODE);
		String action = String.format("%s: %s.%n%n", fixOf(capability.cause()), PropertyFixes.fix(capability.cause()));
		if (capability.cause().fallbackHelps()) {
			action += String.format("Or, if another boundary (a container or VM without network) already blocks "
					+ "egress:%n    - set cave.sandbox.mode=fallback to run commands unisolated (a warning is logged "
					+ "and every result reports isolation 'none'), or%n    - %s", failLate);
		}
		else {
			action += "Or " + failLate;
		}
		return new FailureAnalysis(description, action, cause);
	}

	/**
	 * What the fix changes: the configuration where the properties ask for what no
	 * mechanism here gives (a private loopback) or switch isolation off; the host
	 * otherwise.
	 */
	static String fixOf(UnavailabilityCause cause) {
		return switch (cause) {
			case PRIVATE_LOOPBACK_UNAVAILABLE, MECHANISM_DISABLED -> "Fix the configuration";
			default -> "Fix the host";
		};
	}

}
