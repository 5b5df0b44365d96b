package dev.cavesandbox.autoconfigure.health;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.autoconfigure.CaveSandboxProperties;
import dev.cavesandbox.autoconfigure.SandboxFacts;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the {@code sandbox} {@link SandboxHealthIndicator health
 * indicator}, active when {@code spring-boot-health} is on the class path;
 * {@code management.health.sandbox.enabled=false} switches it off.
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class,
		beforeName = "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration")
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("sandbox")
@ConditionalOnBean({ IsolatedExecutor.class, IsolationCapability.class })
public final class CaveSandboxHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "sandboxHealthIndicator")
	SandboxHealthIndicator sandboxHealthIndicator(IsolatedExecutor executor, IsolationCapability capability,
			CaveSandboxProperties properties) {
		return new SandboxHealthIndicator(new SandboxFacts(executor, capability, properties.mode()));
	}

}
