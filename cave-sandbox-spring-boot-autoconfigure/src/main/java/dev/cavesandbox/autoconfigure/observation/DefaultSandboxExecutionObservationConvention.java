package dev.cavesandbox.autoconfigure.observation;

import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.ResourceLimit;
import dev.cavesandbox.autoconfigure.observation.SandboxObservationDocumentation.HighCardinalityKeyNames;
import dev.cavesandbox.autoconfigure.observation.SandboxObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

/**
 * The default {@link SandboxExecutionObservationConvention}: name {@value #NAME}, the
 * keys of {@link SandboxObservationDocumentation}.
 */
public class DefaultSandboxExecutionObservationConvention implements SandboxExecutionObservationConvention {

	/** The name of the observation, and so of its timer. */
	public static final String NAME = "cave.sandbox.execution";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(SandboxExecutionObservationContext context) {
		return "sandbox execution";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(SandboxExecutionObservationContext context) {
		String errorCode = context.getErrorCode();
		ExecutionResult result = context.getResult();
		ResourceLimit limit = (result != null) ? result.limitExceeded() : null;
		// KeyValue.NONE_VALUE, not withNoneValue(): Micrometer 1.15 (Spring Boot 3.5)
		// lacks that.
		return KeyValues.of(LowCardinalityKeyNames.MECHANISM.withValue(context.getIsolation().mechanism()),
				LowCardinalityKeyNames.ISOLATED.withValue(String.valueOf(context.getIsolation().networkIsolated())),
				LowCardinalityKeyNames.OUTCOME.withValue(context.getOutcome().name()),
				(errorCode != null) ? LowCardinalityKeyNames.ERROR_CODE.withValue(errorCode)
						: LowCardinalityKeyNames.ERROR_CODE.withValue(KeyValue.NONE_VALUE),
				LowCardinalityKeyNames.LIMIT.withValue((limit != null) ? limit.propertyName() : KeyValue.NONE_VALUE));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(SandboxExecutionObservationContext context) {
		KeyValues keyValues = KeyValues
			.of(HighCardinalityKeyNames.COMMAND.withValue(context.getRequest().argv().get(0)));
		ExecutionResult result = context.getResult();
		if (result != null) {
			keyValues = keyValues.and(HighCardinalityKeyNames.EXIT_CODE.withValue(String.valueOf(result.exitCode())));
		}
		return keyValues;
	}

}
