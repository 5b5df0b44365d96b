package dev.cavesandbox.compat;

import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter in an application with less than the compat module's class path: a surefire
 * execution of its own removes jars from it ({@code classpathDependencyExcludes} in the
 * module's pom), and a subclass per shape says what is left. Spring Framework always brings
 * {@code micrometer-observation}; {@code micrometer-core} and Spring AI are gone in every
 * shape. The application starts and runs a real isolated execution.
 */
abstract class ReducedClassPathChecks {

	static final String MICROMETER_CORE = "io.micrometer.core.instrument.binder.MeterBinder";

	static final String MICROMETER_OBSERVATION = "io.micrometer.observation.ObservationRegistry";

	static final String ACTUATOR = "org.springframework.boot.actuate.endpoint.annotation.Endpoint";

	static final String SPRING_AI = "org.springframework.ai.tool.ToolCallback";

	static final String MCP_SDK = "io.modelcontextprotocol.client.McpClient";

	static final String CAVE_SANDBOX_SPRING_AI = "dev.cavesandbox.ai.autoconfigure.CaveSandboxAiAutoConfiguration";

	@Autowired
	private IsolatedExecutor executor;

	@Autowired
	private ApplicationContext context;

	/**
	 * Return the Spring Boot line the subclass's application runs on.
	 * @return the version prefix, for example {@code "3.5."}
	 */
	abstract String springBootLine();

	/**
	 * Return whether Actuator is on this shape's class path.
	 * @return {@code true} if it is
	 */
	abstract boolean actuatorPresent();

	@Test
	void runsOnItsSpringBootLine() {
		assertThat(SpringBootVersion.getVersion()).startsWith(springBootLine());
	}

	@Test
	void classPathHasTheShapeUnderTest() {
		assertThat(present(MICROMETER_OBSERVATION)).as("micrometer-observation, from Spring Framework").isTrue();
		assertThat(present(MICROMETER_CORE)).as("micrometer-core").isFalse();
		assertThat(present(SPRING_AI)).as("Spring AI").isFalse();
		assertThat(present(MCP_SDK)).as("the MCP SDK").isFalse();
		assertThat(present(CAVE_SANDBOX_SPRING_AI)).as("cave-sandbox-spring-ai").isFalse();
		assertThat(present(ACTUATOR)).as("Actuator").isEqualTo(actuatorPresent());
	}

	@Test
	void isolatedExecutionRuns() {
		ExecutionResult result = this.executor.execute("id", "-u");
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.stdoutText().trim()).matches("[0-9]+");
		assertThat(result.isolation().networkIsolated()).isTrue();
	}

	/**
	 * With Actuator, Boot's observation auto-configuration gives the context an
	 * {@link ObservationRegistry} and cave-sandbox observes every execution, without
	 * {@code micrometer-core}'s meters; without Actuator the executor is left alone.
	 */
	@Test
	void executorIsObservedOnlyWithActuatorsObservationRegistry() {
		assertThat(this.context.getBeanNamesForType(ObservationRegistry.class)).hasSize(actuatorPresent() ? 1 : 0);
		assertThat(this.executor.getClass().getSimpleName().equals("ObservedIsolatedExecutor"))
			.isEqualTo(actuatorPresent());
	}

	@Test
	void sandboxHealthIndicatorExistsOnlyWithActuator() {
		assertThat(this.context.containsBean("sandboxHealthIndicator")).isEqualTo(actuatorPresent());
	}

	private static boolean present(String className) {
		return ClassUtils.isPresent(className, ReducedClassPathChecks.class.getClassLoader());
	}

}
