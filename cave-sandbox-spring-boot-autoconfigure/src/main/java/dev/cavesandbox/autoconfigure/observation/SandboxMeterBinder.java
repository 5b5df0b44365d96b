package dev.cavesandbox.autoconfigure.observation;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.SandboxFacts;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Registers the gauge {@value #UNISOLATED}: 1 while the {@link IsolatedExecutor} runs
 * commands WITHOUT network isolation (fallback mode on a host that cannot isolate), 0
 * otherwise. It exists from startup on, before any execution, so an alert on it fires on
 * an instance that has silently been downgraded even when it is idle.
 */
final class SandboxMeterBinder implements MeterBinder {

	static final String UNISOLATED = "cave.sandbox.unisolated";

	private final SandboxFacts facts;

	SandboxMeterBinder(SandboxFacts facts) {
		this.facts = facts;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder(UNISOLATED, this::unisolated)
			.description("1 while commands run WITHOUT network isolation (cave.sandbox.mode=fallback), else 0")
			.tag("mode", this.facts.mode())
			.register(registry);
	}

	private int unisolated() {
		return (this.facts.read().state() == SandboxFacts.State.UNISOLATED) ? 1 : 0;
	}

}
