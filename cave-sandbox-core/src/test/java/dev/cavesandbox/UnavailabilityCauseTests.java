package dev.cavesandbox;

import java.lang.reflect.RecordComponent;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

class UnavailabilityCauseTests {

	@ParameterizedTest
	@EnumSource(UnavailabilityCause.class)
	void textsNameNoPropertyOfAFramework(UnavailabilityCause cause) {
		assertThat(cause.description()).isNotBlank().doesNotContain("cave.sandbox").doesNotContain("-path");
		assertThat(cause.fix()).isNotBlank().doesNotContain("cave.sandbox").doesNotContain("-path");
	}

	@ParameterizedTest
	@EnumSource(value = UnavailabilityCause.class, names = { "BINARY_MISSING", "BINARY_NOT_EXECUTABLE", "MOUNT_REFUSED",
			"PRIVATE_LOOPBACK_UNAVAILABLE", "PROBE_TIMEOUT" })
	void fixesNameTheSettingsByTheirComponent(UnavailabilityCause cause) {
		assertThat(SandboxSettings.class.getRecordComponents()).extracting(RecordComponent::getName)
			.anyMatch((name) -> cause.fix().contains("(" + name) || cause.fix().contains(name + ")"));
	}

}
