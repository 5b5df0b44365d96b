package dev.cavesandbox;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class WarmPoolSettingsTests {

	@Test
	void theDefaultPoolHoldsTwoSandboxesWaitingAMinuteAtMost() {
		assertThat(SandboxSettings.defaults().warm()).isEqualTo(WarmPoolSettings.DEFAULT)
			.isEqualTo(new WarmPoolSettings(2, Duration.ofSeconds(60)));
		assertThat(WarmPoolSettings.OFF.size()).isZero();
		assertThat(WarmPoolSettings.OFF.enabled()).isFalse();
		assertThat(WarmPoolSettings.OFF.maxAge()).isEqualTo(Duration.ofSeconds(60));
		assertThat(new WarmPoolSettings(2, Duration.ofSeconds(5)).enabled()).isTrue();
	}

	@Test
	void aNegativeSizeOrANonPositiveAgeIsRefusedWithItsName() {
		assertThatIllegalArgumentException().isThrownBy(() -> new WarmPoolSettings(-1, Duration.ofSeconds(1)))
			.withMessage("warm.size must not be negative, but was -1");
		assertThatIllegalArgumentException().isThrownBy(() -> new WarmPoolSettings(1, Duration.ZERO))
			.withMessage("warm.maxAge must be positive, but was PT0S");
		assertThatIllegalArgumentException().isThrownBy(() -> new WarmPoolSettings(1, null))
			.withMessage("warm.maxAge must be positive, but was null");
	}

	@Test
	void thePoolIsNoLargerThanTheConcurrency() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SandboxSettings.builder()
				.maxConcurrent(2)
				.warm(new WarmPoolSettings(3, Duration.ofSeconds(60)))
				.build())
			.withMessage("warm.size (3) must not exceed maxConcurrent (2)");
		assertThat(SandboxSettings.builder()
			.maxConcurrent(2)
			.warm(new WarmPoolSettings(2, Duration.ofSeconds(9)))
			.build()
			.warm()).isEqualTo(new WarmPoolSettings(2, Duration.ofSeconds(9)));
	}

	@Test
	void theCommandUserRangeHoldsAUidForEachExecutionAndEachWarmSandbox() {
		SandboxSettings.Builder builder = SandboxSettings.builder()
			.maxConcurrent(4)
			.commandUserRange(SandboxSettings.CommandUserRange.parse("70000-70004"));
		assertThat(builder.warm(new WarmPoolSettings(1, Duration.ofSeconds(60))).build().warm().size()).isOne();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> builder.warm(new WarmPoolSettings(2, Duration.ofSeconds(60))).build())
			.withMessageStartingWith(
					"commandUserRange 70000-70004 holds 5 uids, fewer than maxConcurrent (4) plus " + "warm.size (2)");
	}

	@Test
	void theDefaultPoolIsFittedToTheConcurrencyAndTheCommandUserRange() {
		assertThat(SandboxSettings.builder().maxConcurrent(1).build().warm())
			.isEqualTo(new WarmPoolSettings(1, Duration.ofSeconds(60)));
		SandboxSettings.Builder narrow = SandboxSettings.builder()
			.maxConcurrent(4)
			.commandUserRange(SandboxSettings.CommandUserRange.parse("70000-70004"));
		assertThat(narrow.build().warm().size()).isOne();
		assertThat(narrow.commandUserRange(SandboxSettings.CommandUserRange.parse("70000-70003")).build().warm())
			.isEqualTo(WarmPoolSettings.OFF);
		assertThat(narrow.commandUserRange(SandboxSettings.CommandUserRange.parse("70000-79999")).build().warm())
			.isEqualTo(WarmPoolSettings.DEFAULT);
	}

	@Test
	void fittingKeepsTheMaxAgeAndNeverGrowsThePool() {
		WarmPoolSettings pool = new WarmPoolSettings(3, Duration.ofSeconds(7));
		assertThat(pool.fitting(16, 100)).isSameAs(pool);
		assertThat(pool.fitting(2, 100)).isEqualTo(new WarmPoolSettings(2, Duration.ofSeconds(7)));
		assertThat(pool.fitting(16, 17)).isEqualTo(new WarmPoolSettings(1, Duration.ofSeconds(7)));
		assertThat(pool.fitting(16, 10).enabled()).isFalse();
		assertThat(WarmPoolSettings.OFF.fitting(16, 100)).isSameAs(WarmPoolSettings.OFF);
	}

	@Test
	void settingsMadeWithoutAPoolHaveNone() {
		SandboxSettings d = SandboxSettings.defaults();
		assertThat(new SandboxSettings(d.mode(), d.timeout(), d.maxOutputBytes(), d.killGracePeriod(), d.probeTimeout(),
				d.maxConcurrent(), d.queueTimeout(), d.workDirectory(), d.env(), d.linux(), d.mechanism(), d.loopback(),
				d.readOnlyRoot(), d.hiddenDirectories(), d.macos(), d.limits(), d.filesystem(), d.egress(),
				d.maxOutputFileBytes())
			.warm()).isEqualTo(WarmPoolSettings.OFF);
	}

}
