package dev.cavesandbox.internal.execution;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolState;
import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

/**
 * The shape of the sandboxes a warm pool prepares: the settings' own, a private working
 * directory, no listed paths of a request, no egress, the settings' loopback and resource
 * limits. A request of another shape takes the cold path ({@link #miss}); everything else
 * of a request (argv, environment, stdin, input and output files, timeout, output cap,
 * sinks) comes at the claim and fits any warm sandbox.
 *
 * @param request the settings merged over an empty request: what
 * {@link LaunchPreparation#prepareSandbox(EffectiveRequest)} prepares
 */
record WarmShape(EffectiveRequest request) {

	/**
	 * Return the shape of an executor's settings.
	 * @param settings the settings
	 * @param settingsAllowList the settings' allow-list, parsed
	 * @return the shape, or {@code null} where the settings give every execution an
	 * egress proxy of its own (an allow-list), which no sandbox can hold ahead
	 */
	static @Nullable WarmShape of(SandboxSettings settings, EgressAllowList settingsAllowList) {
		if (!settingsAllowList.isEmpty()) {
			return null;
		}
		return new WarmShape(EffectiveRequest.of(ExecutionRequest.of("true"), settings, settingsAllowList, false));
	}

	/**
	 * Return why a request cannot take a warm sandbox of this shape.
	 * @param candidate the request merged over the settings
	 * @return the reason, or {@code null} where it fits
	 */
	WarmPoolState.@Nullable Miss miss(EffectiveRequest candidate) {
		ExecutionRequest request = candidate.request();
		if (request.workingDirectory() != null) {
			return WarmPoolState.Miss.WORKING_DIRECTORY;
		}
		if (!request.readablePaths().isEmpty() || !request.writablePaths().isEmpty()) {
			return WarmPoolState.Miss.LISTED_PATHS;
		}
		if (!candidate.allowList().isEmpty()) {
			return WarmPoolState.Miss.EGRESS;
		}
		if (candidate.loopback() != this.request.loopback()) {
			return WarmPoolState.Miss.LOOPBACK;
		}
		if (!candidate.limits().equals(this.request.limits())) {
			return WarmPoolState.Miss.LIMITS;
		}
		return null;
	}

}
