package dev.cavesandbox.compat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter in a Spring Boot 4.1 application with actuator: a real isolated execution
 * and its timer ({@link IsolatedApplicationChecks}), and the {@code sandbox} health
 * component through Boot 4's health endpoint.
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class SpringBoot41CompatibilityTests extends IsolatedApplicationChecks {

	@Autowired
	private HealthEndpoint healthEndpoint;

	@Override
	String springBootLine() {
		return "4.1.";
	}

	@Test
	void sandboxHealthComponentIsUp() {
		HealthDescriptor sandbox = this.healthEndpoint.healthForPath("sandbox");
		assertThat(sandbox).isInstanceOf(IndicatedHealthDescriptor.class);
		assertThat(sandbox.getStatus()).isEqualTo(Status.UP);
		assertThat(((IndicatedHealthDescriptor) sandbox).getDetails()).containsEntry("isolated", true)
			.containsEntry("mode", "strict");
	}

}
