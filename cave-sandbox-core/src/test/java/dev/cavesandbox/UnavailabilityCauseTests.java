package dev.cavesandbox;

import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
	@EnumSource(value = UnavailabilityCause.class,
			names = { "BINARY_MISSING", "BINARY_NOT_EXECUTABLE", "LAUNCHER_UNAVAILABLE", "WORK_DIRECTORY_UNUSABLE",
					"MOUNT_REFUSED", "PRIVATE_LOOPBACK_UNAVAILABLE", "PROBE_TIMEOUT" })
	void fixesNameTheSettingsByTheirComponent(UnavailabilityCause cause) {
		assertThat(componentNames()).isNotEmpty()
			.anyMatch((name) -> cause.fix().contains("(" + name) || cause.fix().contains(name + ")"));
	}

	@ParameterizedTest
	@EnumSource(UnavailabilityCause.class)
	void exceptionAdvisesFallbackOnlyWhereItHelps(UnavailabilityCause cause) {
		assertThat(cause.fallbackHelps()).isEqualTo(cause != UnavailabilityCause.WORK_DIRECTORY_UNUSABLE);
		String message = new NetworkIsolationUnavailableException(
				IsolationCapability.unavailable(cause, "detail", Duration.ZERO))
			.getMessage();
		assertThat(message).contains(cause.description()).contains(cause.fix());
		if (cause.fallbackHelps()) {
			assertThat(message).contains("mode fallback runs commands unisolated");
		}
		else {
			assertThat(message).doesNotContainIgnoringCase("fallback");
		}
	}

	/**
	 * The names of the components of {@link SandboxSettings} and of those of its groups
	 * (records nested in it, such as {@link SandboxSettings.Linux}): the texts name a
	 * setting of a group by its own name, as in {@code unsharePath}, which is also the
	 * name of the builder's method that sets it.
	 */
	private static List<String> componentNames() {
		List<String> names = new ArrayList<>();
		for (RecordComponent component : SandboxSettings.class.getRecordComponents()) {
			Class<?> type = component.getType();
			if (type.isRecord() && type.getEnclosingClass() == SandboxSettings.class) {
				for (RecordComponent member : type.getRecordComponents()) {
					names.add(member.getName());
				}
			}
			else {
				names.add(component.getName());
			}
		}
		return names;
	}

}
