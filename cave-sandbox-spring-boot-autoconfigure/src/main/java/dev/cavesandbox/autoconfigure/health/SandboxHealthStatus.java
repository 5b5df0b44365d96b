package dev.cavesandbox.autoconfigure.health;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.util.ClassUtils;

/**
 * What the {@code sandbox} health indicators of both Spring Boot lines share, without
 * their health types: Spring Boot 4's ({@code spring-boot-health},
 * {@link SandboxHealthIndicator}) and Spring Boot 3.5's ({@code spring-boot-actuator}, in
 * {@code cave-sandbox-spring-boot3-autoconfigure}).
 */
public final class SandboxHealthStatus {

	/**
	 * The code of the status of an instance that runs commands WITHOUT network isolation.
	 */
	public static final String UNISOLATED_CODE = "UNISOLATED";

	/** The description of that status. */
	public static final String UNISOLATED_DESCRIPTION = "commands run WITHOUT network isolation (cave.sandbox.mode=fallback)";

	static final String ORDER_PROPERTY = "management.endpoint.health.status.order";

	static final String ORDER = "DOWN,OUT_OF_SERVICE,UNISOLATED,UP,UNKNOWN";

	/**
	 * The name of Boot's default properties, the source that every other overrides. Its
	 * class moved between the lines
	 * ({@code org.springframework.boot.DefaultPropertiesPropertySource} in 3.5,
	 * {@code org.springframework.boot.env} in 4), its name did not.
	 */
	static final String DEFAULT_PROPERTIES = "defaultProperties";

	private SandboxHealthStatus() {
	}

	/**
	 * Give {@code UNISOLATED} its place in the aggregate health status: Boot's default
	 * order ({@code DOWN, OUT_OF_SERVICE, UP, UNKNOWN}) ignores a status it does not
	 * list, so an instance running unisolated would report {@code UP} at the top. When
	 * {@value #ORDER_PROPERTY} is not set, set it, as a default property that any other
	 * source overrides, to {@value #ORDER}.
	 * @param environment the environment
	 * @param application the application, whose class loader must see the health status
	 * type
	 * @param statusClassName the health status type of the Boot line of the caller;
	 * nothing is set without it
	 */
	public static void addDefaultOrder(ConfigurableEnvironment environment, SpringApplication application,
			String statusClassName) {
		if (!ClassUtils.isPresent(statusClassName, application.getClassLoader())) {
			return;
		}
		if (Binder.get(environment).bind(ORDER_PROPERTY, Bindable.listOf(String.class)).isBound()) {
			return;
		}
		MutablePropertySources sources = environment.getPropertySources();
		PropertySource<?> defaults = sources.get(DEFAULT_PROPERTIES);
		Map<String, Object> merged = new HashMap<>();
		if (defaults instanceof MapPropertySource existing) {
			merged.putAll(existing.getSource());
		}
		merged.put(ORDER_PROPERTY, ORDER);
		MapPropertySource withOrder = new MapPropertySource(DEFAULT_PROPERTIES, merged);
		if (defaults != null) {
			sources.replace(DEFAULT_PROPERTIES, withOrder);
		}
		else {
			sources.addLast(withOrder);
		}
	}

}
