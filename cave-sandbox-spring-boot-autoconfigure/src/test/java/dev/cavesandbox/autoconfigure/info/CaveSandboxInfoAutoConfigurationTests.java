package dev.cavesandbox.autoconfigure.info;

import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The opt-in {@code sandbox} info contributor in an application context, with verdicts of
 * the real probe. The test tagged {@value HostSandboxes#SANDBOX} needs a working sandbox
 * on this host; the others take the real verdict of a probe whose unshare binary does not
 * exist ({@link HostSandboxes#withoutIsolation()}) instead of probing.
 * {@code ./mvnw verify} runs both.
 */
@EnabledOnOs(OS.LINUX)
class CaveSandboxInfoAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(CaveSandboxAutoConfiguration.class, CaveSandboxInfoAutoConfiguration.class));

	@Test
	void isOffByDefault() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> assertThat(context).hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean(SandboxInfoContributor.class));
	}

	@Test
	void isNotSwitchedOnByTheDefaultOfAllContributors() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback", "management.info.defaults.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(SandboxInfoContributor.class));
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void contributesTheStateAndTheProbeVerdictWhenEnabled() {
		this.runner.withPropertyValues("management.info.sandbox.enabled=true").run((context) -> {
			Map<String, Object> sandbox = sandbox(context.getBean(SandboxInfoContributor.class));
			assertThat(sandbox).containsEntry("state", "isolated")
				.containsEntry("mode", "strict")
				.containsEntry("isolated", true)
				.containsEntry("mechanism", context.getBean(IsolationCapability.class).mechanismName());
			assertThat(sandbox.get("probe").toString()).contains("only interface: lo");
		});
	}

	@Test
	void reportsUnisolatedFallbackWithTheCause() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("management.info.sandbox.enabled=true", "cave.sandbox.mode=fallback")
			.run((context) -> {
				Map<String, Object> sandbox = sandbox(context.getBean(SandboxInfoContributor.class));
				assertThat(sandbox).containsEntry("state", "unisolated")
					.containsEntry("isolated", false)
					.containsEntry("mechanism", "none");
				assertThat(sandbox.get("probe").toString()).contains("cause=BINARY_MISSING")
					.contains("cave.sandbox.linux.bwrap-path / unshare-path / setpriv-path");
			});
	}

	@Test
	void backsOffWithoutActuator() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("management.info.sandbox.enabled=true", "cave.sandbox.mode=fallback")
			.withClassLoader(new FilteredClassLoader(InfoContributor.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean("sandboxInfoContributor"));
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> sandbox(InfoContributor contributor) {
		Info.Builder builder = new Info.Builder();
		contributor.contribute(builder);
		return (Map<String, Object>) builder.build().get("sandbox");
	}

}
