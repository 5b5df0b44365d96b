package dev.cavesandbox.boot3.autoconfigure;

import dev.cavesandbox.autoconfigure.health.SandboxHealthStatus;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Gives the {@link SandboxBoot3HealthIndicator#UNISOLATED UNISOLATED} status its place in
 * the aggregate health status on Spring Boot 3.5, as
 * {@code SandboxHealthStatusEnvironmentPostProcessor} does on Spring Boot 4: unless the
 * application sets {@code management.endpoint.health.status.order}, it becomes
 * {@code DOWN,OUT_OF_SERVICE,UNISOLATED,UP,UNKNOWN}. Spring Boot 4 still loads this
 * (deprecated) kind of post-processor too; there it does nothing, since Boot 3's health
 * types are absent.
 */
class SandboxBoot3HealthStatusEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	private static final String HEALTH_STATUS_CLASS = "org.springframework.boot.actuate.health.Status";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		SandboxHealthStatus.addDefaultOrder(environment, application, HEALTH_STATUS_CLASS);
	}

	/**
	 * Run after the application's configuration files were loaded, so that an order set
	 * there is seen.
	 * @return {@link Ordered#LOWEST_PRECEDENCE}
	 */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
