package dev.cavesandbox.autoconfigure.observation;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.WarmPoolState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The meters of the executor's pool of warm sandboxes ({@code cave.sandbox.warm.size}),
 * read from {@link IsolatedExecutor#warmPool()} whenever a registry publishes: gauges
 * {@value #READY} and {@value #SIZE}; counters {@value #CLAIMS} ({@code outcome=hit} with
 * {@code reason=none}, {@code outcome=miss} with the {@link WarmPoolState.Miss reason})
 * and {@value #DISCARDS} (by {@link WarmPoolState.Discard reason}); the timer
 * {@value #PREPARATION} (count and total time of the preparations). Nothing is registered
 * for an executor without a pool.
 */
final class WarmPoolMeterBinder implements MeterBinder {

	static final String READY = "cave.sandbox.warm.ready";

	static final String SIZE = "cave.sandbox.warm.size";

	static final String CLAIMS = "cave.sandbox.warm.claims";

	static final String DISCARDS = "cave.sandbox.warm.discards";

	static final String PREPARATION = "cave.sandbox.warm.preparation";

	private final IsolatedExecutor executor;

	WarmPoolMeterBinder(IsolatedExecutor executor) {
		this.executor = executor;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		if (this.executor.warmPool().size() == 0) {
			return;
		}
		Gauge.builder(READY, this.executor, (executor) -> executor.warmPool().ready())
			.description("Warm sandboxes set up and waiting for an execution")
			.register(registry);
		Gauge.builder(SIZE, this.executor, (executor) -> executor.warmPool().size())
			.description("How many warm sandboxes wait ready, at most (cave.sandbox.warm.size)")
			.register(registry);
		counter(registry, CLAIMS, "Executions that took a warm sandbox (hit) or the cold path (miss)",
				(executor) -> executor.warmPool().hits())
			.tags("outcome", "hit", "reason", "none")
			.register(registry);
		for (WarmPoolState.Miss miss : WarmPoolState.Miss.values()) {
			counter(registry, CLAIMS, "Executions that took a warm sandbox (hit) or the cold path (miss)",
					(executor) -> executor.warmPool().misses().get(miss))
				.tags("outcome", "miss", "reason", name(miss))
				.register(registry);
		}
		for (WarmPoolState.Discard discard : WarmPoolState.Discard.values()) {
			counter(registry, DISCARDS, "Warm sandboxes torn down without serving an execution",
					(executor) -> executor.warmPool().discards().get(discard))
				.tags("reason", name(discard))
				.register(registry);
		}
		FunctionTimer
			.builder(PREPARATION, this.executor, (executor) -> executor.warmPool().preparations(),
					(executor) -> executor.warmPool().preparationTime().toNanos(), TimeUnit.NANOSECONDS)
			.description("Set-up of warm sandboxes, ready or not")
			.register(registry);
	}

	private FunctionCounter.Builder<IsolatedExecutor> counter(MeterRegistry registry, String name, String description,
			ToDoubleFunction<IsolatedExecutor> count) {
		return FunctionCounter.builder(name, this.executor, count).description(description);
	}

	/** The tag value of a reason: {@code working-directory}, {@code view-changed}. */
	private static String name(Enum<?> reason) {
		return reason.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
