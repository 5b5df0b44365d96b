package dev.cavesandbox.compat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthComponent;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter in a Spring Boot 3.5 application with actuator: a real isolated execution
 * and its timer ({@link IsolatedApplicationChecks}), and the {@code sandbox} health
 * component through Boot 3's health endpoint.
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class SpringBoot35CompatibilityTests extends IsolatedApplicationChecks {

	@Autowired
	private HealthEndpoint healthEndpoint;

	@Override
	String springBootLine() {
		return "3.5.";
	}

	@Test
	void sandboxHealthComponentIsUp() {
		HealthComponent sandbox = this.healthEndpoint.healthForPath("sandbox");
		assertThat(sandbox).isInstanceOf(Health.class);
		assertThat(sandbox.getStatus()).isEqualTo(Status.UP);
		assertThat(((Health) sandbox).getDetails()).containsEntry("isolated", true).containsEntry("mode", "strict");
	}

}
