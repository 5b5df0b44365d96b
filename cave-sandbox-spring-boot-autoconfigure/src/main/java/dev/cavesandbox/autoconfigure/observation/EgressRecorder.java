package dev.cavesandbox.autoconfigure.observation;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;

/**
 * Records the egress proxy's decisions of one execution; the
 * {@link ObservedIsolatedExecutor} calls it after each. A type of its own, free of
 * Micrometer's meter types, so that the parts of the observation auto-configuration that
 * need only {@code micrometer-observation} (which Spring Framework brings to every
 * application) can ask for it without loading a class of {@code micrometer-core}, which
 * an application without Actuator does not have. Implemented by {@link EgressMetrics}, a
 * bean only when {@code micrometer-core} is present.
 */
@FunctionalInterface
interface EgressRecorder {

	/**
	 * Record the decisions of one execution.
	 * @param request the request (its own allow-list, if any, names the hosts)
	 * @param result its result, whose {@link ExecutionResult#egressDecisions()} may be
	 * empty
	 */
	void record(ExecutionRequest request, ExecutionResult result);

}
