package dev.cavesandbox.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import dev.cavesandbox.UnavailabilityCause;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class PropertyFixesTests {

	/**
	 * How the core names a setting in its texts: a component name, a choice such as "mode
	 * fallback", or a setting of one word in parentheses, "(loopback)".
	 */
	private static final Pattern SETTING_NAME = Pattern
		.compile("\\b(" + String.join("|", camelCaseComponents()) + ")\\b|\\b(mode|mechanism) ("
				+ String.join("|", values()) + ")\\b|\\((" + String.join("|", oneWordComponents()) + ")\\)");

	/** A Java constant of a choice, such as SANDBOX_EXEC, where a value belongs. */
	private static final Pattern CONSTANT = Pattern.compile("\\b(" + String.join("|", constants()) + ")\\b");

	@Test
	void everySettingHasThePropertyThatBootGeneratedMetadataFor() throws IOException {
		List<String> documented = documentedProperties();
		List<String> settings = settings();
		assertThat(settings)
			.contains("mode", "linux.unsharePath", "env.pass", "macos.sandboxExecPath", "limits.memory",
					"limits.cpuTime", "limits.tmpfsSize")
			.doesNotContain("linux", "env", "macos", "limits");
		for (String setting : settings) {
			assertThat(documented).as("property of %s", setting).contains(PropertyFixes.property(setting));
		}
	}

	@Test
	void unknownSettingHasNoProperty() {
		assertThatIllegalArgumentException().isThrownBy(() -> PropertyFixes.property("noSuchSetting"))
			.withMessageContaining("noSuchSetting");
	}

	@ParameterizedTest
	@EnumSource(UnavailabilityCause.class)
	void springTextsNameNoCoreSettingButProperties(UnavailabilityCause cause) {
		assertThat(SETTING_NAME.matcher(PropertyFixes.description(cause)).find())
			.as("core setting name in %s", PropertyFixes.description(cause))
			.isFalse();
		assertThat(SETTING_NAME.matcher(PropertyFixes.fix(cause)).find())
			.as("core setting name in %s", PropertyFixes.fix(cause))
			.isFalse();
		boolean coreNamesASetting = SETTING_NAME.matcher(cause.description() + " " + cause.fix()).find();
		if (coreNamesASetting) {
			assertThat(PropertyFixes.description(cause) + " " + PropertyFixes.fix(cause)).contains("cave.sandbox.");
		}
		else {
			assertThat(PropertyFixes.description(cause)).isEqualTo(cause.description());
			assertThat(PropertyFixes.fix(cause)).isEqualTo(cause.fix());
		}
	}

	@ParameterizedTest
	@EnumSource(UnavailabilityCause.class)
	void textsNameChoicesByTheirValuesNeverByJavaConstants(UnavailabilityCause cause) {
		List<String> texts = new ArrayList<>(List.of(cause.description(), cause.fix()));
		for (String osName : List.of("Linux", "Mac OS X", "Windows 11")) {
			texts.add(PropertyFixes.description(cause, osName));
			texts.add(PropertyFixes.fix(cause, osName));
		}
		assertThat(texts).allSatisfy((text) -> assertThat(CONSTANT.matcher(text).find()).as(text).isFalse());
	}

	@Test
	void macosMechanismOnLinuxIsExplainedForLinux() {
		assertThat(PropertyFixes.description(UnavailabilityCause.UNSUPPORTED_OS, "Linux"))
			.isEqualTo("cave.sandbox.mechanism=sandbox-exec is macOS's mechanism, and this system is Linux");
		assertThat(PropertyFixes.fix(UnavailabilityCause.UNSUPPORTED_OS, "Linux"))
			.isEqualTo("set cave.sandbox.mechanism=auto, or one of Linux's mechanisms: bwrap, unshare, namespaces or "
					+ "seccomp");
	}

	@Test
	void linuxMechanismOnMacosIsExplainedForMacos() {
		assertThat(PropertyFixes.description(UnavailabilityCause.UNSUPPORTED_OS, "Mac OS X"))
			.isEqualTo("cave.sandbox.mechanism names a Linux mechanism, and this system is macOS");
		assertThat(PropertyFixes.fix(UnavailabilityCause.UNSUPPORTED_OS, "Mac OS X"))
			.isEqualTo("set cave.sandbox.mechanism=auto or sandbox-exec, macOS's mechanism");
	}

	@Test
	void otherSystemsAreToldWhereIsolationRuns() {
		assertThat(PropertyFixes.description(UnavailabilityCause.UNSUPPORTED_OS, "Windows 11"))
			.isEqualTo(UnavailabilityCause.UNSUPPORTED_OS.description());
		assertThat(PropertyFixes.fix(UnavailabilityCause.UNSUPPORTED_OS, "Windows 11")).contains("WSL2")
			.contains("cave.sandbox.mechanism=auto");
	}

	@Test
	void changeOfAProbedSettingNamesItsProperty() {
		assertThat(PropertyFixes.change("readOnlyRoot true -> false"))
			.isEqualTo("cave.sandbox.read-only-root true -> false");
		assertThat(PropertyFixes.change("mechanism auto -> bwrap")).isEqualTo("cave.sandbox.mechanism auto -> bwrap");
		assertThat(PropertyFixes.change("linux.launcherPath null -> /opt/launcher"))
			.isEqualTo("cave.sandbox.linux.launcher-path null -> /opt/launcher");
		assertThat(PropertyFixes.change("limits a -> b")).isEqualTo("cave.sandbox.limits a -> b");
	}

	@Test
	void binaryMissingPointsAtTheBinaryProperties() {
		assertThat(PropertyFixes.fix(UnavailabilityCause.BINARY_MISSING)).startsWith("install bubblewrap")
			.contains("cave.sandbox.linux.bwrap-path / unshare-path / setpriv-path")
			.contains("cave.sandbox.macos.sandbox-exec-path");
	}

	/**
	 * The settings: every component of {@link SandboxSettings}, and those of its groups
	 * (records nested in it) prefixed by the group, as in {@code linux.unsharePath}.
	 */
	private static List<String> settings() {
		List<String> names = new ArrayList<>();
		for (RecordComponent component : SandboxSettings.class.getRecordComponents()) {
			if (isGroup(component)) {
				for (RecordComponent member : component.getType().getRecordComponents()) {
					names.add(component.getName() + "." + member.getName());
				}
			}
			else {
				names.add(component.getName());
			}
		}
		return names;
	}

	/**
	 * How the core's texts name settings: by the last part of their name, as in
	 * {@code unsharePath}; only those in camel case, which prose does not contain.
	 */
	private static List<String> camelCaseComponents() {
		List<String> names = new ArrayList<>();
		for (String setting : settings()) {
			String name = setting.substring(setting.lastIndexOf('.') + 1);
			if (!name.equals(name.toLowerCase())) {
				names.add(name);
			}
		}
		return names;
	}

	/**
	 * The settings of one lower-case word, such as loopback: a core text names one in
	 * parentheses, "(loopback)".
	 */
	private static List<String> oneWordComponents() {
		List<String> names = new ArrayList<>();
		for (String setting : settings()) {
			String name = setting.substring(setting.lastIndexOf('.') + 1);
			if (name.equals(name.toLowerCase())) {
				names.add(name);
			}
		}
		return names;
	}

	/** The values of the choices, as set: auto, sandbox-exec, fallback. */
	private static List<String> values() {
		return constants().stream().map((constant) -> constant.toLowerCase(Locale.ROOT).replace('_', '-')).toList();
	}

	private static List<String> constants() {
		return Stream.concat(Arrays.stream(MechanismChoice.values()), Arrays.stream(SandboxMode.values()))
			.map(Enum::name)
			.toList();
	}

	private static boolean isGroup(RecordComponent component) {
		return component.getType().isRecord() && (component.getType().getEnclosingClass() == SandboxSettings.class
				|| component.getType() == ResourceLimits.class || component.getType() == WarmPoolSettings.class);
	}

	private static List<String> documentedProperties() throws IOException {
		try (InputStream metadata = PropertyFixesTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).as("metadata generated by spring-boot-configuration-processor").isNotNull();
			String json = new String(metadata.readAllBytes(), StandardCharsets.UTF_8);
			List<String> names = new ArrayList<>();
			Matcher name = Pattern.compile("\"name\"\\s*:\\s*\"(cave\\.sandbox\\.[^\"]+)\"").matcher(json);
			while (name.find()) {
				names.add(name.group(1));
			}
			assertThat(names).as("properties in the metadata").isNotEmpty();
			return names;
		}
	}

}
