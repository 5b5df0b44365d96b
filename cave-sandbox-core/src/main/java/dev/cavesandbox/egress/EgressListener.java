package dev.cavesandbox.egress;

import dev.cavesandbox.internal.egress.EgressProxy;

/**
 * Told of every decision of an {@link EgressProxy}, on the connection's thread, after the
 * decision was logged and recorded. An exception it throws is logged and otherwise
 * ignored.
 */
@FunctionalInterface
public interface EgressListener {

	/** A listener that does nothing. */
	EgressListener NONE = (decision) -> {
	};

	/**
	 * Called once per decision.
	 * @param decision the decision
	 */
	void decided(EgressDecision decision);

}
