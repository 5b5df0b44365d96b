package dev.cavesandbox.autoconfigure;

import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolatedExecutors;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.NetworkIsolationUnavailableException;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of cave-sandbox: probes this host's network-isolation capability
 * once and provides the {@link IsolatedExecutor} that fits it and
 * {@code cave.sandbox.mode}, as the core's policy ({@link IsolatedExecutors}) decides;
 * this class adds fail-fast startup and the conditions report:
 * <ul>
 * <li>isolation verified: a {@link ProcessIsolatedExecutor} behind the verified
 * mechanism;</li>
 * <li>unavailable, {@code strict} (default): startup fails with a report of the cause and
 * its fixes ({@code cave.sandbox.fail-fast=true}, default), or every execution throws
 * {@link NetworkIsolationUnavailableException} ({@code fail-fast=false});</li>
 * <li>unavailable, {@code fallback}: an unisolated executor, after one warning.</li>
 * </ul>
 * {@link SandboxSettingsCustomizer} beans adjust the executor's settings after binding.
 * An {@link IsolatedExecutor} bean of the application's own wins. The verdict itself
 * ({@link IsolationCapability}) cannot be replaced: isolation is never claimed without
 * the probe.
 */
@AutoConfiguration
@EnableConfigurationProperties(CaveSandboxProperties.class)
public final class CaveSandboxAutoConfiguration {

	@Bean
	IsolationCapability caveSandboxIsolationCapability(ConfigurableListableBeanFactory beanFactory,
			Environment environment) {
		return ProbedCapability.get(beanFactory, environment);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnNetworkIsolation
	static class IsolatedExecutorConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IsolatedExecutor isolatedExecutor(CaveSandboxProperties properties, IsolationCapability capability,
				ObjectProvider<SandboxSettingsCustomizer> customizers) {
			return IsolatedExecutors.create(executorSettings(properties, customizers), capability);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnNetworkIsolation(false)
	@ConditionalOnProperty(name = "cave.sandbox.mode", havingValue = "fallback")
	static class FallbackExecutorConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IsolatedExecutor isolatedExecutor(CaveSandboxProperties properties, IsolationCapability capability,
				ObjectProvider<SandboxSettingsCustomizer> customizers) {
			return IsolatedExecutors.create(executorSettings(properties, customizers), capability);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnNetworkIsolation(false)
	@ConditionalOnProperty(name = "cave.sandbox.mode", havingValue = "strict", matchIfMissing = true)
	static class StrictExecutorConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IsolatedExecutor isolatedExecutor(CaveSandboxProperties properties, IsolationCapability capability,
				ObjectProvider<SandboxSettingsCustomizer> customizers) {
			if (properties.failFast()) {
				throw new NetworkIsolationUnavailableException(capability);
			}
			return IsolatedExecutors.create(executorSettings(properties, customizers), capability);
		}

	}

	/**
	 * The settings of the executor: the bound properties, changed by the customizers in
	 * their order. What the probe verified ({@link SandboxSettings#probed()}, the limits
	 * included) must stay as it was bound: the probe runs while the conditions are
	 * evaluated, before any customizer exists.
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
