package dev.cavesandbox.autoconfigure.observation;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import com.sun.net.httpserver.HttpServer;
import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxedProcess;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.autoconfigure.HostSandboxes;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.OverridingClassLoader;
import org.springframework.core.ResolvableType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The Micrometer instrumentation in an application context: observations of REAL
 * executions on this host, with a {@link TestObservationRegistry} and with Boot's own
 * observation and metrics auto-configuration, and the {@code cave.sandbox.unisolated}
 * gauge. The tests tagged {@value HostSandboxes#SANDBOX} observe isolated executions and
 * need a working sandbox on this host; the others take the real verdict of a probe whose
 * unshare binary does not exist ({@link HostSandboxes#withoutIsolation()}) instead of
 * probing, and observe unisolated executions (fallback mode) or the application's own
 * executor. {@code ./mvnw verify} runs both.
 */
@EnabledOnOs(OS.LINUX)
class CaveSandboxObservationAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(CaveSandboxAutoConfiguration.class, CaveSandboxObservationAutoConfiguration.class));

	private final ApplicationContextRunner bootRunner = this.runner
		.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class));

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void executorIsObservedWhenTheContextHasAnObservationRegistry() {
		this.runner.withUserConfiguration(TestRegistryConfiguration.class).run((context) -> {
			IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
			assertThat(executor).isInstanceOf(ObservedIsolatedExecutor.class);
			executor.execute("true");
			TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
				.hasSingleObservationThat()
				.hasNameEqualTo("cave.sandbox.execution")
				.hasLowCardinalityKeyValue("mechanism", context.getBean(IsolationCapability.class).mechanismName())
				.hasLowCardinalityKeyValue("outcome", "SUCCESS");
		});
	}

	@Test
	void executorOfTheApplicationIsObservedToo() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withUserConfiguration(TestRegistryConfiguration.class, OwnExecutorConfiguration.class)
			.run((context) -> {
				IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
				assertThat(executor).isInstanceOf(ObservedIsolatedExecutor.class);
				assertThat(((ObservedIsolatedExecutor) executor).delegate())
					.isSameAs(context.getBean(OwnExecutorConfiguration.class).executor);
				executor.execute("true");
				TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
					.hasSingleObservationThat()
					.hasLowCardinalityKeyValue("isolated", "false");
			});
	}

	@Test
	void conventionBeanReplacesTheDefault() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withUserConfiguration(TestRegistryConfiguration.class, ConventionConfiguration.class)
			.run((context) -> {
				context.getBean(IsolatedExecutor.class).execute("true");
				TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
					.hasSingleObservationThat()
					.hasNameEqualTo("app.sandbox");
			});
	}

	@Test
	void warmPoolMetersAreBoundForTheExecutorInUse() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> {
				assertThat(context).hasSingleBean(WarmPoolMeterBinder.class);
				SimpleMeterRegistry registry = new SimpleMeterRegistry();
				context.getBean(WarmPoolMeterBinder.class).bindTo(registry);
				assertThat(registry.find(WarmPoolMeterBinder.SIZE).gauge()).as("no pool: no meters").isNull();
			});
	}

	@Test
	void executorIsLeftAloneWithoutAnObservationRegistry() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> assertThat(context.getBean(IsolatedExecutor.class))
				.isInstanceOf(ProcessIsolatedExecutor.class));
	}

	@Test
	void backsOffWithoutMicrometer() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withClassLoader(new FilteredClassLoader(ObservationRegistry.class, MeterBinder.class))
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(ObservedIsolatedExecutorPostProcessor.class);
				assertThat(context.getBean(IsolatedExecutor.class)).isInstanceOf(ProcessIsolatedExecutor.class);
			});
	}

	@Test
	void observesWithoutTheGaugeWhenMicrometerCoreIsMissing() {
		this.runner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.withUserConfiguration(TestRegistryConfiguration.class)
			.withClassLoader(new FilteredClassLoader(MeterBinder.class))
			.run((context) -> {
				assertThat(context).doesNotHaveBean(SandboxMeterBinder.class)
					.doesNotHaveBean(WarmPoolMeterBinder.class);
				assertThat(context.getBean(IsolatedExecutor.class)).isInstanceOf(ObservedIsolatedExecutor.class);
			});
	}

	/**
	 * An application without Actuator has {@code micrometer-observation} (Spring
	 * Framework brings it) but not {@code micrometer-core}: the configuration's bean
	 * methods, whose parameters Spring resolves with their generics, must load no class
	 * that needs {@code micrometer-core}. A {@link FilteredClassLoader} cannot show this
	 * (this module's classes still come from the test's class loader, which sees
	 * {@code micrometer-core}), so the package is loaded again by a class loader that
	 * does not see {@code micrometer-core} at all; {@link EgressMetrics}, a
	 * {@link MeterBinder}, cannot load there.
	 */
	@Test
	void beanMethodsResolveWhereMicrometerCoreIsAbsent() throws Exception {
		ClassLoader classLoader = new WithoutMicrometerCore(getClass().getClassLoader());
		assertThatExceptionOfType(NoClassDefFoundError.class)
			.isThrownBy(() -> Class.forName(EgressMetrics.class.getName(), true, classLoader))
			.withMessageContaining("MeterBinder");
		Class<?> configuration = Class.forName(CaveSandboxObservationAutoConfiguration.class.getName(), true,
				classLoader);
		assertThat(configuration.getDeclaredMethods()).isNotEmpty().allSatisfy((method) -> {
			for (int index = 0; index < method.getParameterCount(); index++) {
				assertThat(ResolvableType.forMethodParameter(method, index).resolveGenerics()).doesNotContainNull();
			}
		});
		assertThat(Class.forName(ObservedIsolatedExecutorPostProcessor.class.getName(), true, classLoader)
			.getDeclaredConstructors())
			.allSatisfy((constructor) -> assertThat(constructor.getGenericParameterTypes()).doesNotContainNull());
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void bootRecordsATimerAndAnActiveTimerPerExecution() {
		this.bootRunner.run((context) -> {
			IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
			executor.execute("true");
			executor.execute("sh", "-c", "exit 2");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			Timer success = meters.get("cave.sandbox.execution")
				.tag("mechanism", context.getBean(IsolationCapability.class).mechanismName())
				.tag("isolated", "true")
				.tag("outcome", "SUCCESS")
				.tag("error.code", "none")
				.tag("limit", "none")
				.tag("error", "none")
				.timer();
			assertThat(success.count()).isOne();
			assertThat(meters.get("cave.sandbox.execution").tag("outcome", "NON_ZERO_EXIT").timer().count()).isOne();
			assertThat(meters.get("cave.sandbox.execution").timers()).allSatisfy(
					(timer) -> assertThat(timer.getId().getTag("command")).as("no high-cardinality tag").isNull());
			LongTaskTimer active = meters.get("cave.sandbox.execution.active").longTaskTimer();
			assertThat(active.activeTasks()).isZero();
			assertThat(meters.get("cave.sandbox.unisolated").gauge().value()).isZero();
		});
	}

	@Test
	@Tag(HostSandboxes.SANDBOX)
	void bootCountsRunningStartedProcessesInTheActiveTimer() {
		this.bootRunner.run((context) -> {
			IsolatedExecutor executor = context.getBean(IsolatedExecutor.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			SandboxedProcess process = executor.start(ExecutionRequest.of("cat"));
			assertThat(meters.get("cave.sandbox.process.active").longTaskTimer().activeTasks()).isOne();
			process.destroy();
			await().untilAsserted(
					() -> assertThat(meters.get("cave.sandbox.process.active").longTaskTimer().activeTasks()).isZero());
			Timer ended = meters.get("cave.sandbox.process")
				.tag("mechanism", context.getBean(IsolationCapability.class).mechanismName())
				.tag("outcome", "NON_ZERO_EXIT")
				.timer();
			assertThat(ended.count()).isOne();
			assertThat(meters.find("cave.sandbox.execution").timer()).as("not an execution").isNull();
		});
	}

	/**
	 * Each connection the egress proxy decided is counted, tagged with its outcome and
	 * the allow-list entry that matched (never the name the command sent): an allowed
	 * request to the test's loopback server and a refused one to another name.
	 */
	@Test
	@Tag(HostSandboxes.SANDBOX)
	void bootCountsTheEgressDecisionsByOutcomeAndAllowListEntry() throws Exception {
		HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		server.createContext("/", (exchange) -> {
			exchange.sendResponseHeaders(204, -1);
			exchange.close();
		});
		server.start();
		try {
			String entry = "localhost:" + server.getAddress().getPort();
			this.bootRunner
				.withPropertyValues("cave.sandbox.egress.allowed-hosts=" + entry,
						"cave.sandbox.egress.allow-private-destinations=true")
				.run((context) -> {
					ExecutionResult result = context.getBean(IsolatedExecutor.class)
						.execute("sh", "-c", "curl -s -o /dev/null -o /dev/null -w '%{http_code} ' http://" + entry
								+ "/ http://unlisted.test:" + server.getAddress().getPort() + "/");
					assertThat(result.stdoutText()).as(result.stderrText()).isEqualTo("204 403 ");
					MeterRegistry meters = context.getBean(MeterRegistry.class);
					assertThat(meters.get("cave.sandbox.egress")
						.tag("outcome", "allowed")
						.tag("host", entry)
						.counter()
						.count()).isOne();
					assertThat(meters.get("cave.sandbox.egress")
						.tag("outcome", "not_allowed")
						.tag("host", "other")
						.counter()
						.count()).isOne();
				});
		}
		finally {
			server.stop(0);
		}
	}

	@Test
	void bootCountsUnisolatedExecutionsAndTheGaugeShowsTheDowngrade() {
		this.bootRunner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback")
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("cave.sandbox.unisolated").tag("mode", "fallback").gauge().value()).isOne();
				context.getBean(IsolatedExecutor.class).execute("true");
				assertThat(meters.get("cave.sandbox.execution")
					.tag("isolated", "false")
					.tag("mechanism", "none")
					.timer()
					.count()).isOne();
			});
	}

	@Test
	void gaugeIsZeroWhenStrictModeRefusesEveryExecution() {
		this.bootRunner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.fail-fast=false")
			.run((context) -> assertThat(context.getBean(MeterRegistry.class)
				.get("cave.sandbox.unisolated")
				.tag("mode", "strict")
				.gauge()
				.value()).isZero());
	}

	@Test
	void bootSwitchesTheObservationsOffByPrefix() {
		this.bootRunner.withInitializer(HostSandboxes.withoutIsolation())
			.withPropertyValues("cave.sandbox.mode=fallback", "management.observations.enable.cave.sandbox=false")
			.run((context) -> {
				context.getBean(IsolatedExecutor.class).execute("true");
				assertThat(context.getBean(MeterRegistry.class).find("cave.sandbox.execution").timer()).isNull();
			});
	}

	/**
	 * Loads this package's classes itself and refuses every class of
	 * {@code micrometer-core}, as an application's class loader without it would.
	 */
	static final class WithoutMicrometerCore extends OverridingClassLoader {

		WithoutMicrometerCore(ClassLoader parent) {
			super(parent);
		}

		@Override
		protected boolean isEligibleForOverriding(String className) {
			return className.startsWith(WithoutMicrometerCore.class.getPackageName() + ".");
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			if (name.startsWith("io.micrometer.core.")) {
				throw new ClassNotFoundException(name);
			}
			return super.loadClass(name, resolve);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TestRegistryConfiguration {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnExecutorConfiguration {

		final IsolatedExecutor executor = ProcessIsolatedExecutor.unisolated(HostSandboxes.settings());

		@Bean
		IsolatedExecutor ownExecutor() {
			return this.executor;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ConventionConfiguration {

		@Bean
		SandboxExecutionObservationConvention appConvention() {
			return new DefaultSandboxExecutionObservationConvention() {

				@Override
				public String getName() {
					return "app.sandbox";
				}

			};
		}

	}

}
