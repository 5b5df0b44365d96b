package dev.cavesandbox.internal.egress;

import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link EgressProxy} decided: each decision is logged at DEBUG (as the proxy's),
 * kept (the first {@value #MAX_DECISIONS}) and passed to the {@link EgressListener},
 * whose failure is logged and does not stop the proxy.
 */
final class DecisionLog {

	/** The most decisions kept; later ones are still logged and told. */
	static final int MAX_DECISIONS = 10_000;

	private static final Logger logger = LoggerFactory.getLogger(EgressProxy.class);

	private final EgressListener listener;

	private final List<EgressDecision> decisions = new ArrayList<>();

	DecisionLog(EgressListener listener) {
		this.listener = listener;
	}

	/**
	 * Log, keep and tell a decision.
	 * @param decision the decision
	 * @param detail what the log line adds (the refusal's reason, the address)
	 */
	void decided(EgressDecision decision, String detail) {
		logger.debug("Egress {} {}: {}",
				decision.host().isEmpty() ? "request" : decision.host() + ":" + decision.port(),
				decision.allowed() ? "allowed" : "refused (" + decision.reason() + ")", detail);
		synchronized (this.decisions) {
			if (this.decisions.size() < MAX_DECISIONS) {
				this.decisions.add(decision);
			}
		}
		try {
			this.listener.decided(decision);
		}
		catch (RuntimeException ex) {
			logger.warn("Egress listener failed on {}", decision, ex);
		}
	}

	/**
	 * The decisions kept so far, in order.
	 * @return a snapshot
	 */
	List<EgressDecision> decisions() {
		synchronized (this.decisions) {
			return List.copyOf(this.decisions);
		}
	}

}
