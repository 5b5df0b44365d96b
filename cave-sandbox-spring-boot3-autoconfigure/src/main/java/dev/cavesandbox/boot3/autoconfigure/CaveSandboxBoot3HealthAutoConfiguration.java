package dev.cavesandbox.boot3.autoconfigure;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.autoconfigure.CaveSandboxProperties;
import dev.cavesandbox.autoconfigure.SandboxFacts;

import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the {@code sandbox} {@link SandboxBoot3HealthIndicator health
 * indicator} on Spring Boot 3.5, active when {@code spring-boot-actuator} has its Boot 3
 * health types (Boot 4 moved them to {@code spring-boot-health}, where
 * {@code CaveSandboxHealthAutoConfiguration} takes over);
 * {@code management.health.sandbox.enabled=false} switches it off.
 */
@AutoConfiguration(afterName = "dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration",
		beforeName = "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("sandbox")
@ConditionalOnBean({ IsolatedExecutor.class, IsolationCapability.class })
public final class CaveSandboxBoot3HealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "sandboxHealthIndicator")
	SandboxBoot3HealthIndicator sandboxHealthIndicator(IsolatedExecutor executor, IsolationCapability capability,
			CaveSandboxProperties properties) {
		return new SandboxBoot3HealthIndicator(new SandboxFacts(executor, capability, properties.mode()));
	}

}
