package dev.cavesandbox.internal.execution;

import java.time.Duration;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

/**
 * A request merged over the settings, once: every value the request leaves unset is the
 * settings'.
 *
 * @param request the request as the caller built it (its argv, directory, files,
 * environment, streams and listed paths)
 * @param started whether for {@code start()}: then only the request's own timeout
 * applies, and no output cap
 * @param loopback whether the command asked for a private loopback (the request's wish,
 * else the settings')
 * @param allowList the request's allow-list, else the settings'
 * @param limits the settings' resource limits, each overridden by the request's
 * @param timeout the request's timeout, else the settings' for {@code execute()};
 * {@code null} for a started process without one of its own
 * @param maxOutputBytes the cap of each output stream; 0 for a started process
 * @param maxOutputFileBytes the cap of the output files, all together: the request's,
 * else the settings'
 */
record EffectiveRequest(ExecutionRequest request, boolean started, boolean loopback, EgressAllowList allowList,
		ResourceLimits limits, @Nullable Duration timeout, long maxOutputBytes, long maxOutputFileBytes) {

	/**
	 * Merge the request over the settings.
	 * @param request the request
	 * @param settings the executor's settings
	 * @param settingsAllowList the settings' allow-list, parsed once
	 * @param started whether for {@code start()}
	 * @return the effective request
	 */
	static EffectiveRequest of(ExecutionRequest request, SandboxSettings settings, EgressAllowList settingsAllowList,
			boolean started) {
		boolean loopback = (request.loopback() != null) ? request.loopback() : settings.loopback();
		EgressAllowList allowList = (request.allowedHosts() != null) ? EgressAllowList.of(request.allowedHosts())
				: settingsAllowList;
		ResourceLimits limits = settings.limits().overriddenBy(request.limits());
		long maxOutputFileBytes = (request.maxOutputFileBytes() != null) ? request.maxOutputFileBytes()
				: settings.maxOutputFileBytes();
		if (started) {
			return new EffectiveRequest(request, true, loopback, allowList, limits, request.timeout(), 0,
					maxOutputFileBytes);
		}
		Duration timeout = (request.timeout() != null) ? request.timeout() : settings.timeout();
		long maxOutputBytes = (request.maxOutputBytes() != null) ? request.maxOutputBytes() : settings.maxOutputBytes();
		return new EffectiveRequest(request, false, loopback, allowList, limits, timeout, maxOutputBytes,
				maxOutputFileBytes);
	}

	/**
	 * Return the command as the request names it ({@code argv[0]}).
	 * @return the command
	 */
	String command() {
		return this.request.argv().get(0);
	}

}
