package dev.cavesandbox;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class ResourceLimitsTests {

	@Test
	void defaultsBoundMemoryProcessesAndTmpfsAndLeaveTheRestUnset() {
		assertThat(ResourceLimits.defaults())
			.isEqualTo(new ResourceLimits(4L << 30, 512, null, null, null, 256L << 20));
		assertThat(SandboxSettings.builder().build().limits()).isEqualTo(ResourceLimits.defaults());
	}

	@Test
	void aRequestsValuesOverrideTheSettingsAndTheRestIsKept() {
		ResourceLimits request = ResourceLimits.builder().processes(64).cpuTime(Duration.ofSeconds(1)).build();
		assertThat(ResourceLimits.defaults().overriddenBy(request))
			.isEqualTo(new ResourceLimits(4L << 30, 64, Duration.ofSeconds(1), null, null, 256L << 20));
		assertThat(ResourceLimits.defaults().overriddenBy(ResourceLimits.NONE)).isEqualTo(ResourceLimits.defaults());
		assertThat(ResourceLimits.NONE.overriddenBy(request)).isEqualTo(request);
		assertThatNullPointerException().isThrownBy(() -> ResourceLimits.NONE.overriddenBy(null));
	}

	@Test
	void cpuSecondsAreRoundedUp() {
		assertThat(ResourceLimits.NONE.cpuSeconds()).isNull();
		assertThat(ResourceLimits.builder().cpuTime(Duration.ofSeconds(2)).build().cpuSeconds()).isEqualTo(2);
		assertThat(ResourceLimits.builder().cpuTime(Duration.ofMillis(1)).build().cpuSeconds()).isEqualTo(1);
		assertThat(ResourceLimits.builder().cpuTime(Duration.ofMillis(2001)).build().cpuSeconds()).isEqualTo(3);
	}

	@Test
	void everySetValueMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> ResourceLimits.builder().memory(0).build())
			.withMessage("memory must be positive, but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> ResourceLimits.builder().processes(-1).build())
			.withMessage("processes must be positive, but was -1");
		assertThatIllegalArgumentException().isThrownBy(() -> ResourceLimits.builder().cpuTime(Duration.ZERO).build())
			.withMessageStartingWith("cpuTime must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> ResourceLimits.builder().fileSize(0).build())
			.withMessageStartingWith("fileSize must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> ResourceLimits.builder().openFiles(0).build())
			.withMessageStartingWith("openFiles must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> ResourceLimits.builder().tmpfsSize(-5).build())
			.withMessageStartingWith("tmpfsSize must be positive");
	}

	@Test
	void aBuilderFromLimitsStartsWithTheirValues() {
		ResourceLimits limits = ResourceLimits.defaults().toBuilder().openFiles(32).build();
		assertThat(limits).isEqualTo(new ResourceLimits(4L << 30, 512, null, null, 32, 256L << 20));
	}

}
