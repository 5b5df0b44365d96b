package dev.cavesandbox.autoconfigure.health;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.DefaultPropertiesPropertySource;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.DefaultResourceLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@link SandboxHealthStatusEnvironmentPostProcessor} places {@code UNISOLATED} in
 * the health status order.
 */
class SandboxHealthStatusEnvironmentPostProcessorTests {

	private final SandboxHealthStatusEnvironmentPostProcessor postProcessor = new SandboxHealthStatusEnvironmentPostProcessor();

	private final StandardEnvironment environment = new StandardEnvironment();

	@Test
	void ranksUnisolatedBetweenOutOfServiceAndUpWhenNoOrderIsSet() {
		this.postProcessor.postProcessEnvironment(this.environment, new SpringApplication());
		assertThat(order()).containsExactly("DOWN", "OUT_OF_SERVICE", "UNISOLATED", "UP", "UNKNOWN");
		assertThat(this.environment.getPropertySources().get(DefaultPropertiesPropertySource.NAME)).isNotNull();
	}

	@Test
	void keepsEveryBuiltInStatus() {
		this.postProcessor.postProcessEnvironment(this.environment, new SpringApplication());
		assertThat(order()).containsAll(Status.DEFAULT_ORDER.stream().map(Status::getCode).toList())
			.contains(SandboxHealthIndicator.UNISOLATED.getCode());
	}

	@Test
	void leavesAnOrderOfTheApplicationAlone() {
		this.environment.getPropertySources()
			.addFirst(new MapPropertySource("application", Map.of("management.endpoint.health.status.order[0]", "FATAL",
					"management.endpoint.health.status.order[1]", "UP")));
		this.postProcessor.postProcessEnvironment(this.environment, new SpringApplication());
		assertThat(order()).containsExactly("FATAL", "UP");
		assertThat(this.environment.getPropertySources().get(DefaultPropertiesPropertySource.NAME)).isNull();
	}

	@Test
	void isOverriddenByAnyOtherSource() {
		this.postProcessor.postProcessEnvironment(this.environment, new SpringApplication());
		this.environment.getPropertySources()
			.addFirst(new MapPropertySource("later", Map.of("management.endpoint.health.status.order", "DOWN,UP")));
		assertThat(order()).containsExactly("DOWN", "UP");
	}

	@Test
	void doesNothingWithoutSpringBootHealth() {
		SpringApplication application = new SpringApplication();
		application.setResourceLoader(new DefaultResourceLoader(new FilteredClassLoader(Status.class)));
		this.postProcessor.postProcessEnvironment(this.environment, application);
		assertThat(this.environment.containsProperty(SandboxHealthStatusEnvironmentPostProcessor.ORDER_PROPERTY))
			.isFalse();
	}

	private List<String> order() {
		return Binder.get(this.environment)
			.bind(SandboxHealthStatusEnvironmentPostProcessor.ORDER_PROPERTY, Bindable.listOf(String.class))
			.orElse(List.of());
	}

}
