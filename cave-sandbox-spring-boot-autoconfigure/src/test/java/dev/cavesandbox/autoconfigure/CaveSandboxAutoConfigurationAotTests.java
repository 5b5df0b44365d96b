package dev.cavesandbox.autoconfigure;

import java.util.function.Consumer;

import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.Isolation;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.UnavailabilityCause;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;
import org.springframework.core.test.tools.TestCompiler;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The auto-configuration processed ahead of time, as {@code process-aot} does: the bean
 * definitions are generated on one host (with its properties) and the generated code runs
 * on another, with the properties of the run. Nothing of the build host may be frozen
 * into the generated code: the probe and the choice between strict, fail-fast and
 * fallback happen when the generated context runs. A verdict of unavailable isolation
 * comes from a real probe of an unshare that does not exist
 * ({@link HostSandboxes#MISSING_UNSHARE_PROPERTY}), no mock.
 */
@EnabledOnOs(OS.LINUX)
@ExtendWith(OutputCaptureExtension.class)
@CompileWithForkedClassLoader
class CaveSandboxAutoConfigurationAotTests {

	private static final String[] UNAVAILABLE = { HostSandboxes.ONLY_UNSHARE, HostSandboxes.MISSING_UNSHARE_PROPERTY };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(CaveSandboxAutoConfiguration.class));

	@Test
	void processingProbesNothing() {
		this.runner.prepare((context) -> {
			GenericApplicationContext source = context.getSourceApplicationContext(GenericApplicationContext.class);
			new ApplicationContextAotGenerator().processAheadOfTime(source, new TestGenerationContext());
			assertThat(source.getBeanFactory().containsSingleton(ProbedCapability.BEAN_NAME)).isFalse();
		});
	}

	@Test
	void generatedWhereIsolationIsVerifiedStrictFailsFastWhereItIsUnavailable() {
		generateThenRun(this.runner, UNAVAILABLE, (context) -> {
			assertThatExceptionOfType(RuntimeException.class).isThrownBy(context::refresh)
				.havingRootCause()
				.isInstanceOf(NetworkIsolationUnavailableException.class)
				.satisfies((ex) -> {
					FailureAnalysis analysis = new NetworkIsolationUnavailableFailureAnalyzer().analyze(ex);
					assertThat(analysis.getDescription()).contains("cave_sandbox_os_network_isolation_unavailable")
						.contains("cave.sandbox.mode is strict, so it failed closed")
						.contains("BINARY_MISSING");
				});
		});
	}

	@Test
	void generatedWhereIsolationIsVerifiedStrictWithoutFailFastStartsAndRunsNothing() {
		generateThenRun(this.runner, withUnavailable("cave.sandbox.fail-fast=false"), (context) -> {
			context.refresh();
			assertThatExceptionOfType(NetworkIsolationUnavailableException.class)
				.isThrownBy(() -> context.getBean(IsolatedExecutor.class).execute("true"))
				.satisfies((ex) -> assertThat(ex.code()).isEqualTo("cave_sandbox_os_network_isolation_unavailable"))
				.satisfies((ex) -> assertThat(ex.cause()).isEqualTo(UnavailabilityCause.BINARY_MISSING));
		});
	}

	@Test
	void generatedWhereIsolationIsVerifiedFallbackRunsUnisolatedAndWarns(CapturedOutput output) {
		generateThenRun(this.runner, withUnavailable("cave.sandbox.mode=fallback"), (context) -> {
			context.refresh();
			ExecutionResult result = context.getBean(IsolatedExecutor.class).execute("id", "-u");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.isolation()).isEqualTo(Isolation.NONE);
		});
		assertThat(output).contains("runs in fallback mode WITHOUT network isolation")
			.contains(HostSandboxes.MISSING_UNSHARE + " does not exist");
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void generatedWhereIsolationIsUnavailableRunsIsolatedWhereItIsVerified() {
		generateThenRun(this.runner.withPropertyValues(UNAVAILABLE), new String[0], (context) -> {
			context.refresh();
			ExecutionResult result = context.getBean(IsolatedExecutor.class).execute("id", "-u");
			assertThat(result.exitCode()).as(result.stderrText()).isZero();
			assertThat(result.isolation().networkIsolated()).isTrue();
			assertThat(ConditionEvaluationReport.get(context.getBeanFactory())
				.getConditionAndOutcomesBySource()
				.get(CaveSandboxAutoConfiguration.DECISION_SOURCE)
				.stream()
				.map((outcome) -> outcome.getOutcome().getMessage())).singleElement(InstanceOfAssertFactories.STRING)
				.startsWith(OnNetworkIsolationCondition.DECISION + "isolated executor: ")
				.contains("network isolation verified by the probe");
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void generatedInStrictModeRunsWithTheModeOfTheRun() {
		generateThenRun(this.runner.withPropertyValues(UNAVAILABLE), withUnavailable("cave.sandbox.mode=fallback"),
				(context) -> {
					context.refresh();
					assertThat(context.getBean(IsolatedExecutor.class).isolation()).isEqualTo(Isolation.NONE);
				});
	}

	@Test
	void conditionOnNetworkIsolationFailsAotProcessingInsteadOfProbingTheBuildHost() {
		this.runner.withUserConfiguration(IsolatedOnlyConfiguration.class).prepare((context) -> {
			GenericApplicationContext source = context.getSourceApplicationContext(GenericApplicationContext.class);
			System.setProperty(OnNetworkIsolationCondition.AOT_PROCESSING, "true");
			try {
				assertThatIllegalStateException()
					.isThrownBy(() -> new ApplicationContextAotGenerator().processAheadOfTime(source,
							new TestGenerationContext()))
					.havingRootCause()
					.withMessageContaining("@ConditionalOnNetworkIsolation cannot be evaluated by AOT processing")
					.withMessageContaining("inject IsolationCapability");
			}
			finally {
				System.clearProperty(OnNetworkIsolationCondition.AOT_PROCESSING);
			}
			assertThat(source.getBeanFactory().containsSingleton(ProbedCapability.BEAN_NAME)).isFalse();
		});
	}

	private static String[] withUnavailable(String property) {
		return new String[] { HostSandboxes.ONLY_UNSHARE, HostSandboxes.MISSING_UNSHARE_PROPERTY, property };
	}

	/**
	 * Process the runner's context ahead of time (with the runner's properties), compile
	 * the generated code, and hand a fresh context initialized by it, with the properties
	 * of the run and not refreshed yet, to the action; the context is closed after it.
	 */
	@SuppressWarnings("unchecked")
	private static void generateThenRun(ApplicationContextRunner buildRunner, String[] runProperties,
			Consumer<GenericApplicationContext> action) {
		buildRunner.prepare((context) -> {
			GenericApplicationContext source = context.getSourceApplicationContext(GenericApplicationContext.class);
			TestGenerationContext generationContext = new TestGenerationContext();
			ClassName className = new ApplicationContextAotGenerator().processAheadOfTime(source, generationContext);
			generationContext.writeGeneratedContent();
			TestCompiler.forSystem().with(generationContext).compile((compiled) -> {
				try (GenericApplicationContext fresh = new GenericApplicationContext()) {
					TestPropertyValues.of(runProperties).applyTo(fresh);
					compiled.getInstance(ApplicationContextInitializer.class, className.toString()).initialize(fresh);
					action.accept(fresh);
				}
			});
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class IsolatedOnlyConfiguration {

		@Bean
		@ConditionalOnNetworkIsolation
		String onlyWhereIsolated() {
			return "isolated";
		}

	}

}
