package dev.cavesandbox.autoconfigure;

import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.WarmPoolState;

import org.springframework.boot.convert.DurationStyle;

/**
 * What the health indicator, the info contributor and the gauge report about the sandbox
 * of this instance: the {@link State state} of the boundary and the facts behind it, read
 * from the {@link IsolatedExecutor} actually in use and the probe verdict. Causes are
 * described and fixed in terms of the {@code cave.sandbox.*} properties
 * ({@link PropertyFixes}). Public for the packages of the health indicator, the info
 * contributor and the gauge, and for {@code cave-sandbox-spring-boot3-autoconfigure}.
 */
public final class SandboxFacts {

	private final IsolatedExecutor executor;

	private final IsolationCapability capability;

	private final SandboxMode mode;

	/**
	 * Create the facts of one executor.
	 * @param executor the executor in use
	 * @param capability the probe's verdict
	 * @param mode the bound {@code cave.sandbox.mode}
	 */
	public SandboxFacts(IsolatedExecutor executor, IsolationCapability capability, SandboxMode mode) {
		this.executor = executor;
		this.capability = capability;
		this.mode = mode;
	}

	public String mode() {
		return this.mode.name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Read the facts now.
	 * @return the state and, in a stable order, {@code mode}, {@code isolated},
	 * {@code mechanism}, {@code error} (only when executions are refused), {@code probe}
	 * and, where the executor has a pool of warm sandboxes, {@code warm} ({@code size},
	 * {@code ready}, {@code preparing}, {@code hits}, {@code misses}, {@code suspended}
	 * while suspended); the pool never changes the state (cold executions go on without
	 * it)
	 */
	public Snapshot read() {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("mode", mode());
		State state;
		try {
			Isolation isolation = this.executor.isolation();
			details.put("isolated", isolation.networkIsolated());
			details.put("mechanism", isolation.mechanism());
			state = !isolation.networkIsolated() ? State.UNISOLATED
					: this.capability.available() ? State.ISOLATED : State.UNVERIFIED;
		}
		catch (NetworkIsolationUnavailableException ex) {
			details.put("isolated", false);
			details.put("mechanism", Isolation.NONE.mechanism());
			details.put("error", ex.code());
			state = State.UNAVAILABLE;
		}
		details.put("probe", probe());
		WarmPoolState pool = this.executor.warmPool();
		if (pool.size() > 0) {
			details.put("warm", warm(pool));
		}
		return new Snapshot(state, Collections.unmodifiableMap(details));
	}

	private Map<String, Object> probe() {
		Map<String, Object> probe = new LinkedHashMap<>();
		probe.put("available", this.capability.available());
		if (this.capability.available()) {
			probe.put("mechanism", this.capability.mechanismName());
			probe.put("verified", this.capability.verified());
		}
		else {
			probe.put("cause", this.capability.cause().name());
			probe.put("description", PropertyFixes.description(this.capability.cause()));
			probe.put("fix", PropertyFixes.fix(this.capability.cause()));
			if (!this.capability.detail().isEmpty()) {
				probe.put("detail", this.capability.detail());
			}
		}
		probe.put("time", DurationStyle.SIMPLE.print(this.capability.probeTime(), ChronoUnit.MILLIS));
		return Collections.unmodifiableMap(probe);
	}

	private static Map<String, Object> warm(WarmPoolState pool) {
		Map<String, Object> warm = new LinkedHashMap<>();
		warm.put("size", pool.size());
		warm.put("ready", pool.ready());
		warm.put("preparing", pool.preparing());
		warm.put("hits", pool.hits());
		warm.put("misses", pool.missCount());
		if (pool.suspended() != null) {
			warm.put("suspended", pool.suspended());
		}
		return Collections.unmodifiableMap(warm);
	}

	/**
	 * The facts at one moment.
	 *
	 * @param state the state of the boundary
	 * @param details the facts
	 */
	public record Snapshot(State state, Map<String, Object> details) {

	}

	/**
	 * The state of the sandbox boundary on this instance.
	 */
	public enum State {

		/** The probe verified isolation and the executor applies it. */
		ISOLATED,

		/** The executor runs commands WITHOUT network isolation (fallback mode). */
		UNISOLATED,

		/**
		 * Isolation is unavailable and the mode is strict: every execution is refused.
		 */
		UNAVAILABLE,

		/**
		 * The executor claims an isolation that the probe did not verify (an
		 * application's own bean).
		 */
		UNVERIFIED

	}

}
