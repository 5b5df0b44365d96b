package dev.cavesandbox.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import dev.cavesandbox.EgressUnavailableException;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.ResourceLimit;
import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.RestrictedHost;
import dev.cavesandbox.SmallTmpfs;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import dev.cavesandbox.internal.execution.UnavailableIsolatedExecutor;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.mockito.Mockito;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The auto-configuration in an application context. Two groups: the tests tagged
 * {@value HostSandboxes#SANDBOX} need a working sandbox on this host (the real probe
 * verifies isolation, commands run isolated); the others need none: they take a real
 * verdict of unavailable isolation through {@link ProbedCapability#supplyUnavailable}
 * instead of probing, or fail before anything is probed. {@code ./mvnw verify} runs both.
 */
@EnabledOnOs(OS.LINUX)
@ExtendWith(OutputCaptureExtension.class)
class CaveSandboxAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class));

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void verifiedHostGetsAnIsolatingExecutorThatRunsCommands() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(IsolatedExecutor.class);
			IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
			assertThat(executor).isInstanceOf(ProcessIsolatedExecutor.class);
			assertThat(executor.isolation()).isEqualTo(new Isolation("bwrap", true));
			ExecutionResult result = executor.execute("echo", "hello");
			assertThat(result.stdoutText()).isEqualTo("hello\n");
			assertThat(result.isolation().networkIsolated()).isTrue();
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void environmentPropertiesReachTheChildrenOfTheExecutorBean() {
		assertThat(System.getenv("CAVE_SANDBOX_TEST_PASSED")).as("set by surefire").isEqualTo("from-the-jvm");
		this.runner
			.withPropertyValues("cave.sandbox.env.pass=CAVE_SANDBOX_TEST_PASSED",
					"cave.sandbox.env.set.CAVE_SANDBOX_GREETING=from the properties")
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				assertThat(executor.isolation().networkIsolated()).isTrue();
				ExecutionResult result = executor.execute("env");
				assertThat(result.exitCode()).as(result.stderrText()).isZero();
				assertThat(result.stdoutText().lines()).contains("CAVE_SANDBOX_TEST_PASSED=from-the-jvm",
						"CAVE_SANDBOX_GREETING=from the properties");
				assertThat(result.stdoutText()).doesNotContain("CAVE_SANDBOX_TEST_SECRET");
			});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void fallbackModeStillIsolatesWhereIsolationIsVerified() {
		this.runner.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> assertThat(context.getBean(IsolatedExecutor.class).isolation().networkIsolated())
				.isTrue());
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void conditionsReportSaysWhichExecutorWasChosenAndWhy() {
		this.runner.run((context) -> {
			ConditionEvaluationReport report = ConditionEvaluationReport.get(context.getBeanFactory());
			assertThat(report.getConditionAndOutcomesBySource()
				.get(CaveSandboxAutoConfiguration.DECISION_SOURCE)
				.isFullMatch()).isTrue();
			assertThat(decision(report)).startsWith(OnNetworkIsolationCondition.DECISION + "isolated executor: ")
				.contains("network isolation verified by the probe")
				.contains(": bwrap: ")
				.contains("; only interface: lo; ")
				.contains("; limits: memory 4 GiB, processes 512, cpu-time none, file-size none, ");
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void probeRunsOncePerContextAndIsExposedAsABean(CapturedOutput output) {
		this.runner.run((context) -> {
			IsolationCapability capability = context.getBean(IsolationCapability.class);
			assertThat(capability.available()).isTrue();
			assertThat(ProbedCapability.get(context.getBeanFactory(), context.getEnvironment())).isSameAs(capability);
		});
		assertThat(output.getAll().split("Network isolation verified in", -1)).hasSize(2);
	}

	/**
	 * The INFO line says what was verified, how fast and where the facts are; the facts,
	 * about 2,000 characters, are at DEBUG.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void probeLogsAShortLineAtInfoAndItsFactsAtDebug(CapturedOutput output) {
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		logging.setLogLevel(ProbedCapability.class.getName(), LogLevel.DEBUG);
		try {
			this.runner.run((context) -> assertThat(context).hasSingleBean(IsolationCapability.class));
		}
		finally {
			logging.setLogLevel(ProbedCapability.class.getName(), null);
		}
		String info = output.getAll()
			.lines()
			.filter((line) -> line.contains("Network isolation verified in"))
			.findFirst()
			.orElseThrow();
		assertThat(info).contains("INFO")
			.containsPattern("Network isolation verified in \\d+ ms: mechanism bwrap; its \\d+ facts: at DEBUG "
					+ "\\(logging.level.dev.cavesandbox.autoconfigure.ProbedCapability=debug\\), or in the info "
					+ "endpoint \\(sandbox.probe.verified, with management.info.sandbox.enabled=true\\)");
		// the message itself, without the log pattern's date, pid and thread
		assertThat(info.substring(info.indexOf("Network isolation verified in"))).hasSizeLessThan(350);
		assertThat(output.getAll()).containsPattern("DEBUG [^\\n]*Network isolation verified: mechanism bwrap: network "
				+ "namespace [^\\n]*; only interface: lo; [^\\n]*; limits: memory 4 GiB, processes 512, cpu-time none, ");
	}

	/**
	 * A listed path of the settings that the view leaves out (here one that does not
	 * exist) is a fact of the probe and a WARN at startup that names it and its reason:
	 * otherwise a typo would only show as a command's "No such file or directory".
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void aListedPathLeftOutOfTheViewIsWarnedAtStartup(CapturedOutput output) {
		String missing = "/srv/cave-sandbox-missing-" + java.util.UUID.randomUUID();
		this.runner.withPropertyValues("cave.sandbox.filesystem.readable-paths=" + missing)
			.run((context) -> assertThat(context.getBean(IsolationCapability.class).verified())
				.contains("readable path " + missing
						+ " left out: it does not exist or cannot be resolved (NoSuchFileException)"));
		assertThat(output.getAll()).containsPattern("WARN .*ProbedCapability.*cave-sandbox: readable path " + missing
				+ " left out: it does not exist .*; commands do not see it");
	}

	/**
	 * A JVM running as root whose commands stay root ({@code command-user=0}) gets no
	 * process limit (the kernel exempts uid 0): the probe states it, and startup warns
	 * once, with the fix. Any other user's JVM gets the limit and no warning.
	 */
	/**
	 * Allowed hosts on a mechanism without a network namespace (seccomp) cannot hold: the
	 * executor says so at startup, and an execution fails with its code.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void allowedHostsWhereTheMechanismCannotOfferEgressAreWarnedAtStartup(CapturedOutput output) {
		this.runner
			.withPropertyValues("cave.sandbox.mechanism=seccomp", "cave.sandbox.egress.allowed-hosts=localhost:8080")
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				assertThat(output.getAll()).containsPattern("WARN .*cave-sandbox: allowed hosts are set "
						+ "\\(cave.sandbox.egress.allowed-hosts\\), but the mechanism seccomp has no network namespace of the command's own.*"
						+ "fails with cave_sandbox_egress_unavailable");
				assertThatExceptionOfType(EgressUnavailableException.class).isThrownBy(() -> executor.execute("true"));
			});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void processLimitThatDoesNotHoldIsWarnedOnceAtStartup(CapturedOutput output) {
		boolean root = "root".equals(System.getProperty("user.name"));
		this.runner.withPropertyValues("cave.sandbox.linux.command-user=0")
			.run((context) -> assertThat(context.getBean(IsolationCapability.class).verified())
				.filteredOn((fact) -> fact.startsWith("not given: the process limit"))
				.hasSize(root ? 1 : 0));
		String[] warnings = output.getAll().split("fix: run the JVM as a non-root user", -1);
		assertThat(warnings).hasSize(root ? 2 : 1);
		if (root) {
			assertThat(output.getAll()).containsPattern("WARN .*ProbedCapability.*not given: the process limit")
				.contains("(cave.sandbox.limits.processes does not hold); fix: run the JVM as a non-root user");
		}
	}

	/**
	 * By default a root JVM's commands run as the command user on bwrap: the process
	 * limit holds, the probe says so, and startup does not warn.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void processLimitHoldsByDefaultWithoutAWarning(CapturedOutput output) {
		boolean root = "root".equals(System.getProperty("user.name"));
		this.runner.run((context) -> {
			List<String> facts = context.getBean(IsolationCapability.class).verified();
			assertThat(facts).noneMatch((fact) -> fact.startsWith("not given: the process limit"));
			if (root) {
				assertThat(facts)
					.contains("uid 65534: the command user of a root JVM, so that the process limit holds");
			}
		});
		assertThat(output.getAll()).doesNotContain("cave.sandbox.limits.processes does not hold");
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void usersOwnExecutorWins() {
		this.runner.withUserConfiguration(UserExecutorConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(IsolatedExecutor.class);
			assertThat(context.getBean(IsolatedExecutor.class)).isSameAs(context.getBean("userExecutor"));
		});
	}

	@Test
	void usersOwnExecutorWinsEvenInStrictModeWithoutIsolation() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withUserConfiguration(UserExecutorConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(IsolatedExecutor.class);
				assertThat(context.getBean(IsolatedExecutor.class)).isSameAs(context.getBean("userExecutor"));
			});
	}

	@Test
	void strictModeFailsStartupWithoutIsolation() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation()).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(NetworkIsolationUnavailableException.class)
				.hasMessageContaining("cave_sandbox_os_network_isolation_unavailable")
				.hasMessageContaining("does not exist");
		});
	}

	/**
	 * A read-only work directory (a read-only root file system without a volume at
	 * java.io.tmpdir): startup fails with the named cause, its fix in properties, and no
	 * advice to fall back; the conditions report says the same.
	 */
	@Test
	void readOnlyWorkDirectoryFailsStartupWithItsCauseAndNoFallbackAdvice(@TempDir Path directory) throws IOException {
		try (SmallTmpfs tmpfs = SmallTmpfs.mount(directory, "size=1m")) {
			tmpfs.remount(true);
			String detail = "the work directory " + tmpfs.path() + " (workDirectory) is on a read-only file system";
			this.runner.withPropertyValues("cave.sandbox.work-directory=" + tmpfs.path()).run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription())
					.contains("Cause: WORK_DIRECTORY_UNUSABLE: the work directory "
							+ "(cave.sandbox.work-directory) cannot hold the sandbox's private directories")
					.contains(detail);
				assertThat(analysis.getAction()).contains("emptyDir) at java.io.tmpdir")
					.contains("set cave.sandbox.work-directory to a writable directory")
					.contains("cave.sandbox.linux.launcher-path")
					.doesNotContainIgnoringCase("fallback");
				assertThat(analysis.getDescription()).doesNotContainIgnoringCase("fallback");
			});
			this.runner
				.withPropertyValues("cave.sandbox.work-directory=" + tmpfs.path(), "cave.sandbox.fail-fast=false")
				.run((context) -> assertThat(decision(ConditionEvaluationReport.get(context.getBeanFactory())))
					.contains("executor that runs nothing (cave.sandbox.mode=strict, cave.sandbox.fail-fast=false)")
					.contains("network isolation unavailable: WORK_DIRECTORY_UNUSABLE")
					.contains(detail)
					.contains("fix: free space or inodes")
					.doesNotContainIgnoringCase("fallback"));
			assertThat(tmpfs.entries()).containsExactly("");
		}
	}

	@Test
	void conditionsReportSaysWhyIsolationIsUnavailableAndWhichPropertiesFixIt() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.fail-fast=false")
			.run((context) -> assertThat(decision(ConditionEvaluationReport.get(context.getBeanFactory())))
				.contains("executor that runs nothing (cave.sandbox.mode=strict, cave.sandbox.fail-fast=false)")
				.contains("network isolation unavailable: BINARY_MISSING")
				.contains(HostSandboxes.MISSING_UNSHARE + " does not exist")
				.contains("fix: install bubblewrap")
				.contains("cave.sandbox.linux.bwrap-path / unshare-path / setpriv-path")
				.doesNotContain("bwrapPath"));
	}

	/**
	 * The report of a failed startup, as Boot's logging of it ({@code --debug}) holds it
	 * since the context's initialization.
	 */
	@Test
	void conditionsReportSaysWhyStartupFailed() {
		AtomicReference<ConditionEvaluationReport> report = new AtomicReference<>();
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withInitializer((context) -> report.set(ConditionEvaluationReport.get(context.getBeanFactory())))
			.run((context) -> assertThat(context).hasFailed());
		assertThat(decision(report.get()))
			.startsWith(OnNetworkIsolationCondition.DECISION + "startup fails (cave.sandbox.mode=strict, "
					+ "cave.sandbox.fail-fast=true): network isolation unavailable: BINARY_MISSING");
	}

	@Test
	void conditionsReportSaysWhenTheExecutorRunsUnisolated() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> assertThat(decision(ConditionEvaluationReport.get(context.getBeanFactory())))
				.startsWith(OnNetworkIsolationCondition.DECISION + "unisolated executor (cave.sandbox.mode=fallback): "
						+ "network isolation unavailable: BINARY_MISSING"));
	}

	/**
	 * The executor's decision in the conditions report, beside the outcome of the bean
	 * method's {@code @ConditionalOnMissingBean}: all match.
	 */
	private static String decision(ConditionEvaluationReport report) {
		ConditionEvaluationReport.ConditionAndOutcomes outcomes = report.getConditionAndOutcomesBySource()
			.get(CaveSandboxAutoConfiguration.DECISION_SOURCE);
		assertThat(outcomes.isFullMatch()).isTrue();
		return outcomes.stream()
			.map((outcome) -> outcome.getOutcome().getMessage())
			.filter((message) -> message.startsWith(OnNetworkIsolationCondition.DECISION))
			.reduce((first, second) -> first + second)
			.orElseThrow();
	}

	@Test
	void suppliedVerdictReplacesTheProbe(CapturedOutput output) {
		IsolationCapability verdict = HostSandboxes.missingUnshare();
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> assertThat(context.getBean(IsolationCapability.class)).isSameAs(verdict));
		assertThat(output).doesNotContain("Network isolation verified in")
			.doesNotContain("Network isolation unavailable (probe took");
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void onlyTheProbeCanVerifyIsolation() {
		IsolationCapability verified = HostSandboxes.verified();
		this.runner.withInitializer((context) -> ProbedCapability.supplyUnavailable(context.getBeanFactory(), verified))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("only the probe can verify isolation"));
	}

	@Test
	void strictModeWithoutFailFastStartsAndRunsNothing(@TempDir Path directory) {
		Path marker = directory.resolve("marker");
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.fail-fast=false")
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				assertThat(executor).isInstanceOf(UnavailableIsolatedExecutor.class);
				assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
					.isThrownBy(() -> executor.execute("touch", marker.toString()))
					.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_os_network_isolation_unavailable"))
					.satisfies((ex) -> assertThat(ex.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING));
				assertThat(executor.executeAsync(ExecutionRequest.of("touch", marker.toString())))
					.failsWithin(java.time.Duration.ofSeconds(5));
				assertThat(marker).doesNotExist();
			});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void strictModeRunsNothingWhenTheKernelRefusesNamespaces(@TempDir Path directory) throws IOException {
		Path marker = directory.resolve("marker");
		Path unshare = RestrictedHost.unshareWithNamespaceLimitZero(directory);
		this.runner
			// The wrapper sets the limit for its own user namespace: no command user,
			// whose namespace the launcher would create before the wrapper.
			.withPropertyValues("cave.sandbox.mechanism=unshare", "cave.sandbox.linux.unshare-path=" + unshare,
					"cave.sandbox.fail-fast=false", "cave.sandbox.linux.command-user=0")
			.run((context) -> {
				assertThat(context.getBean(IsolationCapability.class).cause())
					.isEqualTo(UnavailabilityCause.NAMESPACE_LIMIT);
				assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
					.isThrownBy(() -> context.getBean(IsolatedExecutor.class).execute("touch", marker.toString()))
					.withMessageContaining("No space left on device");
				assertThat(marker).doesNotExist();
			});
	}

	@Test
	void fallbackModeRunsUnisolatedSaysSoAndWarnsOnce(@TempDir Path directory, CapturedOutput output) {
		Path marker = directory.resolve("marker");
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				ExecutionResult result = executor.execute("touch", marker.toString());
				assertThat(result.exitCode()).isZero();
				assertThat(result.isolation()).isEqualTo(Isolation.NONE);
				assertThat(marker).exists();
			});
		assertThat(output.getAll().split("runs in fallback mode WITHOUT network isolation", -1)).hasSize(2);
		assertThat(output).contains("CAN reach the network, and no resource limit is applied to them")
			.contains(UnavailabilityCause.BINARY_MISSING.description())
			.contains(HostSandboxes.MISSING_UNSHARE + " does not exist");
	}

	@Test
	void customizersSetExecutorSideValuesInTheirOrder() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback", "cave.sandbox.timeout=30s")
			.withBean("first", SandboxSettingsCustomizer.class,
					() -> (settings) -> settings.environment(Map.of("CAVE_SANDBOX_CUSTOMIZED", "first"))
						.timeout(Duration.ofMillis(500)))
			.withBean("second", SandboxSettingsCustomizer.class,
					() -> (settings) -> settings.environment(Map.of("CAVE_SANDBOX_CUSTOMIZED", "second")))
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				ExecutionResult env = executor.execute("printenv", "CAVE_SANDBOX_CUSTOMIZED");
				assertThat(env.exitCode()).as(env.stderrText()).isZero();
				assertThat(env.stdoutText()).isEqualTo("second\n");
				ExecutionResult slow = executor.execute("sleep", "20");
				assertThat(slow.timedOut()).isTrue();
			});
	}

	/**
	 * A limit set by a property reaches the probe and the executor bean alike: the
	 * command dies of the limit's signal itself, and the probe's facts state the limit
	 * the command got. Without its limit a signal is not reported.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void limitsOfThePropertiesReachTheProbeAndTheExecutor() {
		this.runner.withPropertyValues("cave.sandbox.limits.cpu-time=60s", "cave.sandbox.limits.processes=300")
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				assertThat(executor.isolation().networkIsolated()).isTrue();
				assertThat(context.getBean(IsolationCapability.class).verified())
					.anyMatch((fact) -> fact.startsWith("limits: memory 4 GiB, processes 300, cpu-time 60s, "));
				assertThat(executor.execute("sh", "-c", "kill -XCPU $$").limitExceeded())
					.isEqualTo(ResourceLimit.CPU_TIME);
				assertThat(executor.execute("sh", "-c", "kill -XFSZ $$").limitExceeded()).isNull();
			});
	}

	/**
	 * The probe runs before any customizer exists, so it cannot verify a customizer's
	 * limits: a customizer that changes them fails startup, naming the properties, as for
	 * the other probed settings, instead of commands running with limits that health,
	 * info and the conditions report do not state.
	 */
	@Test
	void customizerThatChangesTheLimitsFailsStartup() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withBean(SandboxSettingsCustomizer.class,
					() -> (settings) -> settings
						.limits(ResourceLimits.defaults().toBuilder().processes(16).tmpfsSize(8L << 20).build()))
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure())
					.hasStackTraceContaining(
							"A SandboxSettingsCustomizer changed what the startup probe verified (cave.sandbox.limits ")
					.hasStackTraceContaining("processes=16")
					.hasStackTraceContaining("set these with their properties instead");
			});
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback", "cave.sandbox.limits.processes=16")
			.withBean(SandboxSettingsCustomizer.class,
					() -> (settings) -> settings.limits(ResourceLimits.defaults().toBuilder().processes(16).build()))
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void customizerThatChangesWhatTheProbeVerifiedFailsStartup() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withBean(SandboxSettingsCustomizer.class, () -> (settings) -> settings.readOnlyRoot(false))
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure())
					.hasStackTraceContaining("A SandboxSettingsCustomizer changed what the startup probe verified "
							+ "(cave.sandbox.read-only-root true -> false)")
					.hasStackTraceContaining("set these with their properties instead");
			});
	}

	/**
	 * macOS's mechanism chosen on Linux fails startup with a report for Linux: the value
	 * as it was set, the mechanisms Linux has, nothing about Windows. No sandbox runs.
	 */
	@Test
	void macosMechanismOnLinuxFailsStartupWithAReportForLinux(CapturedOutput output) {
		this.runner.withPropertyValues("cave.sandbox.mechanism=sandbox-exec").run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer()
				.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription())
				.contains("UNSUPPORTED_OS: cave.sandbox.mechanism=sandbox-exec is macOS's mechanism, and this system "
						+ "is Linux")
				.contains("mechanism sandbox-exec: sandbox-exec is macOS's mechanism; on Linux choose mechanism auto")
				.doesNotContain("SANDBOX_EXEC")
				.doesNotContain("Windows");
			assertThat(analysis.getAction())
				.startsWith("Fix the host: set cave.sandbox.mechanism=auto, or one of "
						+ "Linux's mechanisms: bwrap, unshare, namespaces or seccomp")
				.doesNotContain("WSL2");
		});
		assertThat(output).contains("Network isolation unavailable (probe took")
			.contains("UNSUPPORTED_OS (os.name=Linux, mechanism sandbox-exec: ")
			.doesNotContain("SANDBOX_EXEC");
	}

	/**
	 * The launcher-path property reaches the probe: a copy that is not there makes
	 * isolation unavailable with LAUNCHER_UNAVAILABLE, its detail names the check that
	 * failed, and the fix names the properties.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void launcherPathPropertyReachesTheProbe(@TempDir Path directory) {
		Path missing = directory.resolve("cave-sandbox-launcher");
		this.runner.withPropertyValues("cave.sandbox.linux.launcher-path=" + missing, "cave.sandbox.fail-fast=false")
			.run((context) -> {
				IsolationCapability capability = context.getBean(IsolationCapability.class);
				assertThat(capability.cause()).isEqualTo(UnavailabilityCause.LAUNCHER_UNAVAILABLE);
				assertThat(capability.detail()).contains("launcherPath " + missing + " does not exist");
				assertThat(context.getBean(IsolatedExecutor.class)).isInstanceOf(UnavailableIsolatedExecutor.class);
			});
		this.runner.withPropertyValues("cave.sandbox.linux.launcher-path=" + missing).run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer()
				.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("LAUNCHER_UNAVAILABLE")
				.contains("launcherPath " + missing + " does not exist");
			assertThat(analysis.getAction()).contains("set cave.sandbox.linux.launcher-path to it")
				.contains("cave.sandbox.work-directory")
				.doesNotContain("(launcherPath)")
				.doesNotContain("(workDirectory)");
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void mechanismPropertyChoosesTheVerifiedMechanism() {
		this.runner.withPropertyValues("cave.sandbox.mechanism=unshare").run((context) -> {
			assertThat(context.getBean(IsolationCapability.class).mechanismName()).isEqualTo("unshare");
			assertThat(context.getBean(IsolatedExecutor.class).isolation()).isEqualTo(new Isolation("unshare", true));
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void autoFallsBackToUnshareWhereBubblewrapIsMissing(@TempDir Path directory) {
		this.runner.withPropertyValues("cave.sandbox.linux.bwrap-path=" + directory.resolve("bwrap")).run((context) -> {
			IsolationCapability capability = context.getBean(IsolationCapability.class);
			assertThat(capability.mechanismName()).isEqualTo("unshare");
			assertThat(capability.verified()).anyMatch((fact) -> fact.startsWith("not chosen: bwrap unavailable"));
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void loopbackPropertyGivesEveryCommandAPrivateLoopback() {
		this.runner.withPropertyValues("cave.sandbox.mechanism=unshare", "cave.sandbox.loopback=true")
			.run((context) -> {
				ExecutionResult result = context.getBean(IsolatedExecutor.class)
					.execute("sh", "-c", "grep -c 127.0.0.1 /proc/net/fib_trie");
				assertThat(result.stdoutText().trim()).isNotEqualTo("0");
			});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void hiddenDirectoriesAndReadOnlyRootReachTheProbe(@TempDir Path directory) {
		this.runner
			.withPropertyValues("cave.sandbox.filesystem.view=host", "cave.sandbox.hidden-directories=/run",
					"cave.sandbox.read-only-root=false", "cave.sandbox.work-directory=" + directory)
			.run((context) -> {
				IsolationCapability capability = context.getBean(IsolationCapability.class);
				// The home of the private directories and the launcher is hidden too.
				assertThat(capability.verified())
					.contains("hidden: /run, " + directory.toRealPath().resolve("cave-sandbox-" + uid())
							+ " (private empty tmpfs, 256 MiB each)", "root filesystem: writable");
				ExecutionResult result = context.getBean(IsolatedExecutor.class).execute("pwd");
				assertThat(result.stdoutText()).startsWith(directory.toRealPath().toString());
			});
	}

	@Test
	void mechanismNoneInFallbackModeRunsUnisolatedAndSaysWhy(@TempDir Path directory, CapturedOutput output) {
		Path marker = directory.resolve("marker");
		this.runner.withPropertyValues("cave.sandbox.mechanism=none", "cave.sandbox.mode=fallback").run((context) -> {
			assertThat(context.getBean(IsolationCapability.class).cause())
				.isEqualTo(UnavailabilityCause.MECHANISM_DISABLED);
			ExecutionResult result = context.getBean(IsolatedExecutor.class).execute("touch", marker.toString());
			assertThat(result.isolation()).isEqualTo(Isolation.NONE);
		});
		assertThat(marker).exists();
		assertThat(output).contains("isolation is switched off by mechanism none")
			.contains("Network isolation unavailable (probe took")
			.contains("MECHANISM_DISABLED; fix: set cave.sandbox.mechanism=auto");
	}

	@Test
	void mechanismNoneInStrictModeFailsStartup() {
		this.runner.withPropertyValues("cave.sandbox.mechanism=none").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'cave.sandbox.mechanism'")
				.hasStackTraceContaining(
						"none runs commands without isolation and is only allowed with cave.sandbox.mode=fallback");
		});
	}

	@Test
	void invalidPropertyFailsStartupWithBootsBindingReport() {
		this.runner.withPropertyValues("cave.sandbox.timeout=0s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'cave.sandbox.timeout'")
				.hasStackTraceContaining("must be positive");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserExecutorConfiguration {

		@Bean
		IsolatedExecutor userExecutor() {
			return Mockito.mock(IsolatedExecutor.class);
		}

	}

	private static long uid() throws java.io.IOException {
		return ((Number) java.nio.file.Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
	}

}
