package dev.cavesandbox.autoconfigure.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * An {@link ObservationConvention} of {@link SandboxObservationDocumentation#EXECUTION
 * sandbox executions}. Declare a bean of this type to replace the
 * {@link DefaultSandboxExecutionObservationConvention default}, or register a
 * {@link io.micrometer.observation.GlobalObservationConvention} with the registry.
 */
public interface SandboxExecutionObservationConvention
		extends ObservationConvention<SandboxExecutionObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof SandboxExecutionObservationContext;
	}

}
