package dev.cavesandbox;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the executor reports as the limit that ended a command: the exit code
 * {@code 128 + n} of the limit's signal, under that limit, and never after a timeout or
 * where no limit was applied.
 */
class ResourceLimitTests {

	private static final int SIGXCPU_EXIT = 128 + 24;

	private static final int SIGXFSZ_EXIT = 128 + 25;

	private static final ResourceLimits BOTH = ResourceLimits.builder()
		.cpuTime(Duration.ofSeconds(5))
		.fileSize(1024 * 1024)
		.build();

	@Test
	void sigxcpuUnderACpuTimeLimitIsTheCpuTimeLimit() {
		ResourceLimits cpuOnly = ResourceLimits.builder().cpuTime(Duration.ofMillis(1)).build();
		assertThat(ResourceLimit.exceeded(SIGXCPU_EXIT, false, cpuOnly)).isEqualTo(ResourceLimit.CPU_TIME);
		assertThat(ResourceLimit.exceeded(SIGXCPU_EXIT, false, BOTH)).isEqualTo(ResourceLimit.CPU_TIME);
	}

	@Test
	void sigxfszUnderAFileSizeLimitIsTheFileSizeLimit() {
		ResourceLimits fileOnly = ResourceLimits.builder().fileSize(1).build();
		assertThat(ResourceLimit.exceeded(SIGXFSZ_EXIT, false, fileOnly)).isEqualTo(ResourceLimit.FILE_SIZE);
		assertThat(ResourceLimit.exceeded(SIGXFSZ_EXIT, false, BOTH)).isEqualTo(ResourceLimit.FILE_SIZE);
	}

	@Test
	void signalOfALimitThatWasNotSetIsNoLimit() {
		ResourceLimits fileOnly = ResourceLimits.builder().fileSize(1).build();
		ResourceLimits cpuOnly = ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build();
		assertThat(ResourceLimit.exceeded(SIGXCPU_EXIT, false, fileOnly)).isNull();
		assertThat(ResourceLimit.exceeded(SIGXFSZ_EXIT, false, cpuOnly)).isNull();
		assertThat(ResourceLimit.exceeded(SIGXCPU_EXIT, false, ResourceLimits.defaults())).isNull();
		assertThat(ResourceLimit.exceeded(SIGXFSZ_EXIT, false, ResourceLimits.defaults())).isNull();
	}

	@Test
	void nothingIsReportedWhereNoLimitWasApplied() {
		assertThat(ResourceLimit.exceeded(SIGXCPU_EXIT, false, ResourceLimits.NONE)).isNull();
		assertThat(ResourceLimit.exceeded(SIGXFSZ_EXIT, false, ResourceLimits.NONE)).isNull();
	}

	@Test
	void timedOutExecutionReportsNoLimit() {
		assertThat(ResourceLimit.exceeded(SIGXCPU_EXIT, true, BOTH)).isNull();
		assertThat(ResourceLimit.exceeded(SIGXFSZ_EXIT, true, BOTH)).isNull();
	}

	@Test
	void otherExitCodesAreNoLimit() {
		for (int exitCode : new int[] { 0, 1, 24, 25, 124, 125, 126, 127, 137, 143, 151, 154, 159 }) {
			assertThat(ResourceLimit.exceeded(exitCode, false, BOTH)).as("exit code %d", exitCode).isNull();
		}
	}

	@Test
	void propertyNamesAreThoseOfTheProperties() {
		assertThat(ResourceLimit.CPU_TIME.propertyName()).isEqualTo("cpu-time");
		assertThat(ResourceLimit.FILE_SIZE.propertyName()).isEqualTo("file-size");
	}

}
