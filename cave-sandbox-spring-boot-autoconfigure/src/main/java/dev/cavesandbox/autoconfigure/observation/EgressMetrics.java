package dev.cavesandbox.autoconfigure.observation;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.egress.EgressAllowList;
import dev.cavesandbox.egress.EgressDecision;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Counts the egress proxy's decisions in the counter {@value #EGRESS}, one increment per
 * connection a command asked the proxy for, tagged with {@code outcome} ({@code allowed}
 * or the refusal's reason: {@code not_allowed}, {@code private_destination},
 * {@code unresolved}, {@code connect_failed}, {@code bad_request}) and {@code host}: the
 * allow-list entry that matched (bounded by the list), else {@code other}, never the name
 * the command sent (which it chooses freely). Bound to every registry like any
 * {@link MeterBinder}; the {@link ObservedIsolatedExecutor} reports each result's
 * decisions.
 */
final class EgressMetrics implements MeterBinder, EgressRecorder {

	static final String EGRESS = "cave.sandbox.egress";

	static final String OTHER_HOST = "other";

	private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

	private final EgressAllowList allowList;

	/**
	 * @param allowList the executor's allow-list, for requests that keep it
	 */
	EgressMetrics(EgressAllowList allowList) {
		this.allowList = allowList;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registries.add(registry);
	}

	/**
	 * Count the decisions of one execution.
	 * @param request the request (its own allow-list, if any, names the hosts)
	 * @param result its result
	 */
	@Override
	public void record(ExecutionRequest request, ExecutionResult result) {
		if (result.egressDecisions().isEmpty()) {
			return;
		}
		EgressAllowList list = (request.allowedHosts() != null) ? EgressAllowList.of(request.allowedHosts())
				: this.allowList;
		for (EgressDecision decision : result.egressDecisions()) {
			String entry = list.matchingEntry(decision.host(), decision.port());
			for (MeterRegistry registry : this.registries) {
				Counter.builder(EGRESS)
					.description("Connections the egress proxy allowed or refused for sandboxed commands")
					.tag("outcome", decision.allowed() ? "allowed" : decision.reason())
					.tag("host", (entry != null) ? entry : OTHER_HOST)
					.register(registry)
					.increment();
			}
		}
	}

}
