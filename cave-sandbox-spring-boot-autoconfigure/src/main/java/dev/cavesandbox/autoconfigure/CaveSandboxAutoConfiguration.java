package dev.cavesandbox.autoconfigure;

import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of cave-sandbox: probes this host's network-isolation capability
 * once and provides the {@link IsolatedExecutor} that fits it and
 * {@code cave.sandbox.mode}, as the core's policy ({@link IsolatedExecutors}) decides;
 * this class adds fail-fast startup and the decision's entry in the conditions report:
 * <ul>
 * <li>isolation verified: a {@link ProcessIsolatedExecutor} behind the verified
 * mechanism;</li>
 * <li>unavailable, {@code strict} (default): startup fails with a report of the cause and
 * its fixes ({@code cave.sandbox.fail-fast=true}, default), or every execution throws
 * {@link NetworkIsolationUnavailableException} ({@code fail-fast=false});</li>
 * <li>unavailable, {@code fallback}: an unisolated executor, after one warning.</li>
 * </ul>
 * Both the probe and this choice happen when the beans are created, at run time, also in
 * an application processed ahead of time ({@code process-aot}, started with
 * {@code -Dspring.aot.enabled=true}): nothing about the host is decided at build time.
 * {@link SandboxSettingsCustomizer} beans adjust the executor's settings after binding.
 * An {@link IsolatedExecutor} bean of the application's own wins. The verdict itself
 * ({@link IsolationCapability}) cannot be replaced: isolation is never claimed without
 * the probe.
 */
@AutoConfiguration
@EnableConfigurationProperties(CaveSandboxProperties.class)
public final class CaveSandboxAutoConfiguration {

	/** The source under which the conditions report holds the executor's decision. */
	static final String DECISION_SOURCE = "dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration#isolatedExecutor";

	@Bean
	IsolationCapability caveSandboxIsolationCapability(ConfigurableListableBeanFactory beanFactory,
			Environment environment) {
		return ProbedCapability.get(beanFactory, environment);
	}

	/**
	 * The executor, decided when the bean is created, never when the bean definitions
	 * are: under AOT processing ({@code process-aot}) the definitions are fixed at build
	 * time, on another host and with other properties than the run's, so neither the
	 * probe's verdict nor {@code cave.sandbox.mode} may choose between definitions. The
	 * decision is recorded in the conditions report ({@code --debug},
	 * {@code /actuator/conditions}) under {@value #DECISION_SOURCE}.
	 */
	@Bean
	@ConditionalOnMissingBean
	IsolatedExecutor isolatedExecutor(CaveSandboxProperties properties, IsolationCapability capability,
			ObjectProvider<SandboxSettingsCustomizer> customizers, ConfigurableListableBeanFactory beanFactory) {
		boolean failClosed = !capability.available() && properties.mode() == SandboxMode.STRICT
				&& properties.failFast();
		ConditionEvaluationReport.get(beanFactory)
			.recordConditionEvaluation(DECISION_SOURCE, new OnNetworkIsolationCondition(),
					OnNetworkIsolationCondition.decision(capability, properties.mode(), failClosed));
		if (failClosed) {
			throw new NetworkIsolationUnavailableException(capability);
		}
		return IsolatedExecutors.create(executorSettings(properties, customizers), capability);
	}

	/**
	 * The settings of the executor: the bound properties, changed by the customizers in
	 * their order. What the probe verified ({@link SandboxSettings#probed()}, the limits
	 * included) must stay as it was bound: the probe measures the bound properties,
	 * before any customizer is applied.
	 */
	static SandboxSettings executorSettings(CaveSandboxProperties properties,
			ObjectProvider<SandboxSettingsCustomizer> customizers) {
		SandboxSettings.Builder builder = properties.toSettingsBuilder();
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		SandboxSettings settings = builder.build();
		List<String> changed = properties.toSettings()
			.probed()
			.changesTo(settings.probed())
			.stream()
			.map(PropertyFixes::change)
			.toList();
		if (!changed.isEmpty()) {
			throw new IllegalStateException("A SandboxSettingsCustomizer changed what the startup probe verified ("
					+ String.join(", ", changed) + "); set these with their properties instead");
		}
		return settings;
	}

}
