package dev.cavesandbox.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.WarmPoolSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

@ExtendWith(OutputCaptureExtension.class)
class CaveSandboxPropertiesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(PropertiesConfiguration.class);

	/**
	 * Binds as the application does: with the rules of each value, before the probe runs.
	 */
	private final ApplicationContextRunner startup = new ApplicationContextRunner()
		.withUserConfiguration(StartupConfiguration.class);

	/**
	 * The defaults contain a fork bomb and a tmpfs fill; the other limits are not set
	 * unless a property sets them, each on its own.
	 */
	@Test
	void limitsDefaultToTheCoreDefaultsAndEachPropertySetsOnlyItsOwn() {
		this.runner.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().limits())
			.isEqualTo(ResourceLimits.defaults())
			.isEqualTo(new ResourceLimits(4L * 1024 * 1024 * 1024, 512, null, null, null, 256L * 1024 * 1024)));
		this.runner.withPropertyValues("cave.sandbox.limits.cpu-time=5s")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().limits())
				.isEqualTo(ResourceLimits.defaults().toBuilder().cpuTime(Duration.ofSeconds(5)).build()));
		this.runner.withPropertyValues("cave.sandbox.limits.processes=64")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().limits())
				.isEqualTo(ResourceLimits.defaults().toBuilder().processes(64).build()));
	}

	@Test
	void defaultsMatchTheCoreDefaults() {
		this.runner.run((context) -> {
			CaveSandboxProperties properties = context.getBean(CaveSandboxProperties.class);
			assertThat(properties.mode()).isEqualTo(SandboxMode.STRICT);
			assertThat(properties.failFast()).isTrue();
			assertThat(properties.toSettings()).isEqualTo(SandboxSettings.defaults());
		});
	}

	@Test
	void everyPropertyBinds() {
		this.runner
			.withPropertyValues("cave.sandbox.mode=fallback", "cave.sandbox.fail-fast=false", "cave.sandbox.timeout=5s",
					"cave.sandbox.max-output=64KB", "cave.sandbox.kill-grace-period=250ms",
					"cave.sandbox.probe-timeout=3s", "cave.sandbox.max-concurrent=4", "cave.sandbox.queue-timeout=2s",
					"cave.sandbox.work-directory=/var/tmp", "cave.sandbox.env.pass=JAVA_HOME,TZ",
					"cave.sandbox.env.set.GREETING=hi", "cave.sandbox.linux.unshare-path=/opt/bin/unshare",
					"cave.sandbox.linux.setpriv-path=/opt/bin/setpriv", "cave.sandbox.linux.bwrap-path=/opt/bin/bwrap",
					"cave.sandbox.linux.launcher-path=/opt/cave-sandbox/cave-sandbox-launcher",
					"cave.sandbox.linux.user-namespaces=true", "cave.sandbox.linux.command-user=4321",
					"cave.sandbox.linux.command-user-range=70000-70099",
					"cave.sandbox.macos.sandbox-exec-path=/opt/bin/sandbox-exec", "cave.sandbox.mechanism=sandbox-exec",
					"cave.sandbox.loopback=true", "cave.sandbox.read-only-root=false",
					"cave.sandbox.hidden-directories=/run,/srv/sockets", "cave.sandbox.limits.memory=512MB",
					"cave.sandbox.limits.processes=64", "cave.sandbox.limits.cpu-time=1500ms",
					"cave.sandbox.limits.file-size=1MB", "cave.sandbox.limits.open-files=256",
					"cave.sandbox.limits.tmpfs-size=16MB", "cave.sandbox.output-files.max-size=64MB")
			.run((context) -> {
				CaveSandboxProperties properties = context.getBean(CaveSandboxProperties.class);
				assertThat(properties.failFast()).isFalse();
				SandboxSettings settings = properties.toSettings();
				assertThat(settings.mode()).isEqualTo(SandboxMode.FALLBACK);
				assertThat(settings.timeout()).isEqualTo(Duration.ofSeconds(5));
				assertThat(settings.maxOutputBytes()).isEqualTo(64 * 1024);
				assertThat(settings.killGracePeriod()).isEqualTo(Duration.ofMillis(250));
				assertThat(settings.probeTimeout()).isEqualTo(Duration.ofSeconds(3));
				assertThat(settings.maxConcurrent()).isEqualTo(4);
				assertThat(settings.queueTimeout()).isEqualTo(Duration.ofSeconds(2));
				assertThat(settings.workDirectory()).isEqualTo(Path.of("/var/tmp"));
				assertThat(settings.env().pass()).containsExactlyInAnyOrderElementsOf(List.of("JAVA_HOME", "TZ"));
				assertThat(settings.env().set()).isEqualTo(Map.of("GREETING", "hi"));
				assertThat(settings.linux().unsharePath()).isEqualTo(Path.of("/opt/bin/unshare"));
				assertThat(settings.linux().setprivPath()).isEqualTo(Path.of("/opt/bin/setpriv"));
				assertThat(settings.linux().bwrapPath()).isEqualTo(Path.of("/opt/bin/bwrap"));
				assertThat(settings.linux().launcherPath())
					.isEqualTo(Path.of("/opt/cave-sandbox/cave-sandbox-launcher"));
				assertThat(settings.linux().userNamespaces()).isTrue();
				assertThat(settings.linux().commandUser()).isEqualTo(4321);
				assertThat(settings.linux().commandUserRange())
					.isEqualTo(new SandboxSettings.CommandUserRange(70000, 70099));
				assertThat(settings.macos().sandboxExecPath()).isEqualTo(Path.of("/opt/bin/sandbox-exec"));
				assertThat(settings.mechanism()).isEqualTo(MechanismChoice.SANDBOX_EXEC);
				assertThat(settings.loopback()).isTrue();
				assertThat(settings.readOnlyRoot()).isFalse();
				assertThat(settings.hiddenDirectories()).containsExactly(Path.of("/run"), Path.of("/srv/sockets"));
				assertThat(settings.limits()).isEqualTo(new ResourceLimits(512L * 1024 * 1024, 64,
						Duration.ofMillis(1500), 1024L * 1024, 256, 16L * 1024 * 1024));
				assertThat(settings.maxOutputFileBytes()).isEqualTo(64L * 1024 * 1024);
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "cave.sandbox.timeout=0s", "cave.sandbox.timeout=-1s", "cave.sandbox.max-output=0B",
			"cave.sandbox.max-output=-1B", "cave.sandbox.max-concurrent=0", "cave.sandbox.kill-grace-period=0ms",
			"cave.sandbox.queue-timeout=-5s", "cave.sandbox.probe-timeout=0s", "cave.sandbox.limits.memory=0B",
			"cave.sandbox.limits.processes=0", "cave.sandbox.limits.cpu-time=0s", "cave.sandbox.limits.cpu-time=-1s",
			"cave.sandbox.limits.file-size=0B", "cave.sandbox.limits.open-files=-1",
			"cave.sandbox.limits.tmpfs-size=-1MB", "cave.sandbox.output-files.max-size=0B",
			"cave.sandbox.warm.max-age=0s" })
	void nonPositiveValuesFailWithTheirName(String property) {
		String name = property.substring(0, property.indexOf('='));
		this.startup.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under '" + name + "'")
				.hasStackTraceContaining("must be positive");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "relative/dir", "/" })
	void hiddenDirectoriesMustBeAbsoluteAndNotTheRoot(String directory) {
		this.startup.withPropertyValues("cave.sandbox.hidden-directories=" + directory).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'cave.sandbox.hidden-directories'")
				.hasStackTraceContaining("must list absolute paths other than /");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "cave.sandbox.filesystem.readable-paths=srv/relative",
			"cave.sandbox.filesystem.writable-paths=/" })
	void listedPathsMustBeAbsoluteAndNotTheRoot(String property) {
		String name = property.substring(0, property.indexOf('='));
		this.startup.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under '" + name + "'")
				.hasStackTraceContaining("must list absolute paths other than /");
		});
	}

	@Test
	void warmPoolHoldsTwoByDefaultAndBindsItsSizeAndAge() {
		this.runner.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().warm())
			.isEqualTo(WarmPoolSettings.DEFAULT));
		this.runner.withPropertyValues("cave.sandbox.warm.size=1", "cave.sandbox.warm.max-age=15s")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().warm())
				.isEqualTo(new WarmPoolSettings(1, Duration.ofSeconds(15))));
		this.runner.withPropertyValues("cave.sandbox.warm.size=0")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().warm().enabled())
				.isFalse());
	}

	@Test
	void theDefaultPoolFitsMaxConcurrentAndTheCommandUserRangeKeepingItsAge() {
		this.runner.withPropertyValues("cave.sandbox.max-concurrent=1", "cave.sandbox.warm.max-age=15s")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().warm())
				.isEqualTo(new WarmPoolSettings(1, Duration.ofSeconds(15))));
		this.runner
			.withPropertyValues("cave.sandbox.max-concurrent=4", "cave.sandbox.linux.command-user-range=70000-70003")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().warm().enabled())
				.isFalse());
	}

	@ParameterizedTest
	@CsvSource(delimiter = ';', textBlock = """
			-1; 1000-2000; must not be negative
			17; 1000-2000; must not exceed cave.sandbox.max-concurrent (16)
			2;  70000-70016; more than cave.sandbox.linux.command-user-range holds (17)
			""")
	void warmPoolSizeFailsWithItsNameAndTheRule(String size, String range, String rule) {
		this.startup
			.withPropertyValues("cave.sandbox.warm.size=" + size, "cave.sandbox.linux.command-user-range=" + range)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure())
					.hasStackTraceContaining("Failed to bind properties under 'cave.sandbox.warm.size'")
					.hasStackTraceContaining(rule);
			});
	}

	@Test
	void mechanismNoneIsOnlyAllowedInFallbackMode() {
		this.startup.withPropertyValues("cave.sandbox.mechanism=none").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("only allowed with cave.sandbox.mode=fallback");
		});
		this.runner.withPropertyValues("cave.sandbox.mechanism=none", "cave.sandbox.mode=fallback")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().mechanism())
				.isEqualTo(MechanismChoice.NONE));
	}

	@Test
	void unknownMechanismFailsWithBootsBindingReport() {
		this.runner.withPropertyValues("cave.sandbox.mechanism=firejail").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasStackTraceContaining("cave.sandbox.mechanism");
		});
	}

	@Test
	void variableWithANulByteFailsStartup() {
		this.startup.withPropertyValues("cave.sandbox.env.set.GREETING=a\0b").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasStackTraceContaining("no NUL byte");
		});
	}

	@Test
	void unknownModeFailsWithBootsBindingReport() {
		this.runner.withPropertyValues("cave.sandbox.mode=lenient").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasStackTraceContaining("cave.sandbox.mode");
		});
	}

	/**
	 * The filesystem view and its listed paths bind into the settings; a path is the host
	 * path as written, also where the class path has a directory of that name
	 * ({@code dev/} holds this project's packages).
	 */
	@Test
	void filesystemPropertiesBindIntoTheSettings() {
		this.runner
			.withPropertyValues("cave.sandbox.filesystem.view=host",
					"cave.sandbox.filesystem.readable-paths=/srv/data,/opt/tools,/dev",
					"cave.sandbox.filesystem.writable-paths=/srv/out")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().filesystem())
				.isEqualTo(new SandboxSettings.Filesystem(SandboxSettings.Filesystem.View.HOST,
						List.of(Path.of("/srv/data"), Path.of("/opt/tools"), Path.of("/dev")),
						List.of(Path.of("/srv/out")))));
		this.runner.withPropertyValues("cave.sandbox.filesystem.view=SYSTEM")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().filesystem().view())
				.isEqualTo(SandboxSettings.Filesystem.View.SYSTEM));
	}

	/** The egress allow-list binds into the settings, normalized; empty by default. */
	@Test
	void egressPropertiesBindIntoTheSettings() {
		this.runner
			.withPropertyValues("cave.sandbox.egress.allowed-hosts=PyPI.org,*.pythonhosted.org,localhost:8080",
					"cave.sandbox.egress.allow-private-destinations=true")
			.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().egress()).isEqualTo(
					new SandboxSettings.Egress(List.of("pypi.org", "*.pythonhosted.org", "localhost:8080"), true)));
		this.runner.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().egress())
			.isEqualTo(SandboxSettings.Egress.NONE));
	}

	/** An entry of none of the accepted forms fails the binding of its property. */
	@ParameterizedTest
	@ValueSource(strings = { "http://pypi.org", "pypi.org/simple", "*", "localhost:0", "a.*.org" })
	void badAllowListEntryFailsWithBootsBindingReport(String entry) {
		this.startup.withPropertyValues("cave.sandbox.egress.allowed-hosts=" + entry).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'cave.sandbox.egress.allowed-hosts'")
				.hasStackTraceContaining(entry);
		});
	}

	/** Without properties commands get the system view and no listed paths. */
	@Test
	void filesystemDefaultsToTheSystemViewWithoutListedPaths() {
		this.runner.run((context) -> assertThat(context.getBean(CaveSandboxProperties.class).toSettings().filesystem())
			.isEqualTo(SandboxSettings.Filesystem.DEFAULT)
			.isEqualTo(new SandboxSettings.Filesystem(SandboxSettings.Filesystem.View.SYSTEM, List.of(), List.of())));
	}

	/** A view that does not exist fails the binding of its property. */
	@Test
	void unknownFilesystemViewFailsWithBootsBindingReport() {
		this.runner.withPropertyValues("cave.sandbox.filesystem.view=everything").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'cave.sandbox.filesystem.view'")
				.hasStackTraceContaining("everything");
		});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "cave.sandbox.timeout|-1s|must be positive",
			"cave.sandbox.mode|banana|failed to convert",
			"cave.sandbox.mechanism|none|only allowed with cave.sandbox.mode=fallback",
			"cave.sandbox.max-concurrent|0|must be positive", "cave.sandbox.limits.processes|0|must be positive",
			"cave.sandbox.linux.command-user|-1|must be a uid",
			"cave.sandbox.linux.command-user-range|65536|must be written FIRST-LAST with two decimal uids",
			"cave.sandbox.linux.command-user-range|0-99|must go from a uid of at least 1",
			"cave.sandbox.linux.command-user-range|70000-70003|holds 4 uids, fewer than cave.sandbox.max-concurrent (16)",
			"cave.sandbox.limits.memory|lots|failed to convert",
			"cave.sandbox.hidden-directories|relative|absolute path",
			"cave.sandbox.filesystem.view|everything|failed to convert" })
	void badValueFailsStartupWithBootsReportBeforeAnyProbe(String property, String value, String reason,
			CapturedOutput output) {
		SpringApplication application = new SpringApplication(StartupConfiguration.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--" + property + "=" + value));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: " + property)
			.contains("Value: \"" + value + "\"")
			.contains("Origin: \"" + property + "\" from property source \"commandLineArgs\"")
			.containsIgnoringCase(reason)
			.doesNotContain("Network isolation");
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(CaveSandboxAutoConfiguration.class)
	static class StartupConfiguration {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(CaveSandboxProperties.class)
	static class PropertiesConfiguration {

	}

}
