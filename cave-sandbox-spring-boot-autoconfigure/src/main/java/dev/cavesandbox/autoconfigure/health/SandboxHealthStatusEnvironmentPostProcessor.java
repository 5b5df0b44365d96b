package dev.cavesandbox.autoconfigure.health;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Gives the {@link SandboxHealthIndicator#UNISOLATED UNISOLATED} status its place in the
 * aggregate health status: Boot's default order
 * ({@code DOWN, OUT_OF_SERVICE, UP, UNKNOWN}) ignores a status it does not list, so an
 * instance running unisolated would report {@code UP} at the top. When
 * {@value #ORDER_PROPERTY} is not set, this sets it, as a default property that any other
 * source overrides, to {@value #ORDER}. An application that sets its own order should
 * list {@code UNISOLATED} in it. Spring Boot 4 only (its {@code EnvironmentPostProcessor}
 * and health types); {@code SandboxBoot3HealthStatusEnvironmentPostProcessor} does the
 * same on Spring Boot 3.5.
 */
class SandboxHealthStatusEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	static final String ORDER_PROPERTY = SandboxHealthStatus.ORDER_PROPERTY;

	static final String ORDER = SandboxHealthStatus.ORDER;

	private static final String HEALTH_STATUS_CLASS = "org.springframework.boot.health.contributor.Status";

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
