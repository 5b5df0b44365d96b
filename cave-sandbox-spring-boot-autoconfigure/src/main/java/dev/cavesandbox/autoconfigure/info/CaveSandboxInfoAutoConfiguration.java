package dev.cavesandbox.autoconfigure.info;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.autoconfigure.CaveSandboxProperties;
import dev.cavesandbox.autoconfigure.SandboxFacts;

import org.springframework.boot.actuate.autoconfigure.info.ConditionalOnEnabledInfoContributor;
import org.springframework.boot.actuate.autoconfigure.info.InfoContributorFallback;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the {@code sandbox} {@link SandboxInfoContributor info
 * contributor}. Opt-in, like Boot's {@code java} and {@code os} contributors: only
 * {@code management.info.sandbox.enabled=true} switches it on
 * ({@code management.info.defaults.enabled} does not).
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class)
@ConditionalOnClass(InfoContributor.class)
@ConditionalOnEnabledInfoContributor(value = "sandbox", fallback = InfoContributorFallback.DISABLE)
@ConditionalOnBean({ IsolatedExecutor.class, IsolationCapability.class })
public final class CaveSandboxInfoAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "sandboxInfoContributor")
	SandboxInfoContributor sandboxInfoContributor(IsolatedExecutor executor, IsolationCapability capability,
			CaveSandboxProperties properties) {
		return new SandboxInfoContributor(new SandboxFacts(executor, capability, properties.mode()));
	}

}
