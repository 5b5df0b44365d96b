package dev.cavesandbox;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WarmPoolStateTests {

	@Test
	void everyReasonHasACountAndTheMissesAddUp() {
		WarmPoolState state = new WarmPoolState(2, 1, 1, 5,
				Map.of(WarmPoolState.Miss.EMPTY, 2L, WarmPoolState.Miss.EGRESS, 1L),
				Map.of(WarmPoolState.Discard.AGE, 3L), 9, Duration.ofMillis(90), null);
		assertThat(state.misses()).hasSize(WarmPoolState.Miss.values().length)
			.containsEntry(WarmPoolState.Miss.LIMITS, 0L);
		assertThat(state.discards()).hasSize(WarmPoolState.Discard.values().length)
			.containsEntry(WarmPoolState.Discard.AGE, 3L)
			.containsEntry(WarmPoolState.Discard.CLOSED, 0L);
		assertThat(state.missCount()).isEqualTo(3);
	}

	@Test
	void anExecutorWithoutAPoolSaysSo() {
		IsolatedExecutor executor = IsolatedExecutors
			.create(SandboxSettings.builder().mode(SandboxMode.FALLBACK).mechanism(MechanismChoice.NONE).build());
		try (executor) {
			assertThat(executor.warmPool()).isEqualTo(WarmPoolState.OFF);
			assertThat(executor.warmPool().missCount()).isZero();
			assertThat(executor.warmPool().suspended()).isNull();
		}
	}

}
