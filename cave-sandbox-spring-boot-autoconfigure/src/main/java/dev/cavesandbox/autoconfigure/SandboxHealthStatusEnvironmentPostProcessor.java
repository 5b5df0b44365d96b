package dev.cavesandbox.autoconfigure;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.DefaultPropertiesPropertySource;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.util.ClassUtils;

/**
 * Gives the {@link SandboxHealthIndicator#UNISOLATED UNISOLATED} status its place in the aggregate
 * health status: Boot's default order ({@code DOWN, OUT_OF_SERVICE, UP, UNKNOWN}) ignores a status
 * it does not list, so an instance running unisolated would report {@code UP} at the top. When
 * {@value #ORDER_PROPERTY} is not set, this sets it, as a default property that any other source
 * overrides, to {@value #ORDER}. An application that sets its own order should list
 * {@code UNISOLATED} in it.
 */
class SandboxHealthStatusEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	static final String ORDER_PROPERTY = "management.endpoint.health.status.order";

	static final String ORDER = "DOWN,OUT_OF_SERVICE,UNISOLATED,UP,UNKNOWN";

	private static final String HEALTH_STATUS_CLASS = "org.springframework.boot.health.contributor.Status";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!ClassUtils.isPresent(HEALTH_STATUS_CLASS, application.getClassLoader())) {
			return;
		}
		if (Binder.get(environment).bind(ORDER_PROPERTY, Bindable.listOf(String.class)).isBound()) {
			return;
		}
		DefaultPropertiesPropertySource.addOrMerge(Map.of(ORDER_PROPERTY, ORDER), environment.getPropertySources());
	}

	/**
	 * Run after the application's configuration files were loaded, so that an order set there is
	 * seen.
	 * @return {@link Ordered#LOWEST_PRECEDENCE}
	 */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
