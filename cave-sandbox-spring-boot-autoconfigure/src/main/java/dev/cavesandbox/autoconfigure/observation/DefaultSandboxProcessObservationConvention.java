package dev.cavesandbox.autoconfigure.observation;

/**
 * The default convention of {@link SandboxObservationDocumentation#PROCESS}: name
 * {@value #NAME}, the keys of {@link DefaultSandboxExecutionObservationConvention}.
 */
public class DefaultSandboxProcessObservationConvention extends DefaultSandboxExecutionObservationConvention {

	/** The name of the observation, and so of its timer. */
	public static final String NAME = "cave.sandbox.process";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(SandboxExecutionObservationContext context) {
		return "sandboxed process";
	}

}
