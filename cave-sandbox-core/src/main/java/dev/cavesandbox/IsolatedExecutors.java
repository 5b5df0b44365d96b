package dev.cavesandbox;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.UnavailableIsolatedExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where the mode meets the probe's verdict: from {@link SandboxSettings}
 * and an {@link IsolationCapability} it returns the executor that the policy allows.
 * Plain Java code uses it directly; the Spring Boot starter calls it too and adds only
 * fail-fast startup and reporting.
 * <ul>
 * <li>isolation verified: a {@link ProcessIsolatedExecutor} behind the verified
 * mechanism;</li>
 * <li>unavailable, {@link SandboxMode#STRICT}: an {@link UnavailableIsolatedExecutor},
 * which fails closed: every execution throws {@link NetworkIsolationUnavailableException}
 * ({@code cave_sandbox_os_network_isolation_unavailable}) and nothing is spawned;</li>
 * <li>unavailable, {@link SandboxMode#FALLBACK}: an unisolated
 * {@link ProcessIsolatedExecutor}, after one warning that names the cause and its fix;
 * every result reports {@link Isolation#NONE}.</li>
 * </ul>
 * <pre>{@code
 * SandboxSettings settings = SandboxSettings.defaults();
 * try (IsolatedExecutor executor = IsolatedExecutors.create(settings)) {
 *     ExecutionResult result = executor.execute(ExecutionRequest.builder("id", "-u").build());
 * }
 * }</pre>
 */
public final class IsolatedExecutors {

	private static final Logger logger = LoggerFactory.getLogger(IsolatedExecutors.class);

	private IsolatedExecutors() {
	}

	/**
	 * Probe this host with the settings ({@link NetworkIsolationProbe}, once, taking up
	 * to {@link SandboxSettings#probeTimeout()}) and return the executor that the mode
	 * allows.
	 * @param settings the settings
	 * @return the executor; the caller closes it
	 */
	public static IsolatedExecutor create(SandboxSettings settings) {
		return create(settings, new NetworkIsolationProbe(settings).probe());
	}

	/**
	 * Return the executor that the mode allows for a verdict the caller has already
	 * measured with the same settings.
	 * @param settings the settings
	 * @param capability the probe's verdict for these settings
	 * @return the executor; the caller closes it
	 */
	public static IsolatedExecutor create(SandboxSettings settings, IsolationCapability capability) {
		if (capability.available()) {
			String egress = settings.egress().allowedHosts().isEmpty() ? null : capability.egressRefusal();
			if (egress != null) {
				logger.warn(
						"cave-sandbox: allowed hosts are set (cave.sandbox.egress.allowed-hosts), but {}: every execution that "
								+ "keeps that list fails with cave_sandbox_egress_unavailable",
						egress);
			}
			return ProcessIsolatedExecutor.isolated(settings, capability);
		}
		if (settings.mode() == SandboxMode.FALLBACK) {
			logger.warn(
					"cave-sandbox runs in fallback mode WITHOUT network isolation: {}{}. Commands run by the "
							+ "IsolatedExecutor CAN reach the network, and no resource limit is applied to them "
							+ "(cave.sandbox.limits.* and a request's limits are ignored); every result reports "
							+ "isolation 'none'. Fix: {}. Set cave.sandbox.mode=strict to fail closed instead.",
					capability.cause().description(),
					capability.detail().isEmpty() ? "" : " (" + capability.detail() + ")", capability.cause().fix());
			if (!settings.egress().allowedHosts().isEmpty()) {
				logger
					.warn("cave-sandbox: allowed hosts are set (cave.sandbox.egress.allowed-hosts), but commands run WITHOUT "
							+ "network isolation in fallback mode: they reach every host, not only those listed, and no "
							+ "proxy decides anything");
			}
			return ProcessIsolatedExecutor.unisolated(settings);
		}
		return new UnavailableIsolatedExecutor(capability);
	}

}
