package dev.cavesandbox.autoconfigure.observation;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.cavesandbox.WarmPoolState;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import dev.cavesandbox.autoconfigure.WarmPoolReporting;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WarmPoolMeterBinderTests {

	private final ProcessIsolatedExecutor executor = ProcessIsolatedExecutor.unisolated(HostSandboxes.settings());

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	@AfterEach
	void close() {
		this.executor.close();
	}

	@Test
	void metersFollowThePoolAsItChanges() {
		AtomicReference<WarmPoolState> state = new AtomicReference<>(
				new WarmPoolState(2, 2, 0, 0, Map.of(), Map.of(), 2, Duration.ofMillis(30), null));
		new WarmPoolMeterBinder(new WarmPoolReporting(this.executor, state::get)).bindTo(this.registry);
		assertThat(this.registry.get(WarmPoolMeterBinder.SIZE).gauge().value()).isEqualTo(2);
		assertThat(this.registry.get(WarmPoolMeterBinder.READY).gauge().value()).isEqualTo(2);
		state.set(new WarmPoolState(2, 1, 1, 5, Map.of(WarmPoolState.Miss.LISTED_PATHS, 3L),
				Map.of(WarmPoolState.Discard.VIEW_CHANGED, 1L), 7, Duration.ofMillis(140), null));
		assertThat(this.registry.get(WarmPoolMeterBinder.READY).gauge().value()).isEqualTo(1);
		assertThat(claims("hit", "none")).isEqualTo(5);
		assertThat(claims("miss", "listed-paths")).isEqualTo(3);
		assertThat(claims("miss", "empty")).isZero();
		assertThat(
				this.registry.get(WarmPoolMeterBinder.DISCARDS).tag("reason", "view-changed").functionCounter().count())
			.isEqualTo(1);
		assertThat(this.registry.get(WarmPoolMeterBinder.DISCARDS).functionCounters())
			.hasSize(WarmPoolState.Discard.values().length);
		assertThat(this.registry.get(WarmPoolMeterBinder.PREPARATION).functionTimer().count()).isEqualTo(7);
		assertThat(this.registry.get(WarmPoolMeterBinder.PREPARATION).functionTimer().totalTime(TimeUnit.MILLISECONDS))
			.isEqualTo(140);
	}

	@Test
	void anExecutorWithoutAPoolHasNoMeters() {
		new WarmPoolMeterBinder(this.executor).bindTo(this.registry);
		assertThat(this.registry.getMeters()).isEmpty();
	}

	private double claims(String outcome, String reason) {
		return this.registry.get(WarmPoolMeterBinder.CLAIMS)
			.tag("outcome", outcome)
			.tag("reason", reason)
			.functionCounter()
			.count();
	}

}
