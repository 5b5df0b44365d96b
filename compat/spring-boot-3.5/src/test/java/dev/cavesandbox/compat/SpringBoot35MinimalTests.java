package dev.cavesandbox.compat;

import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * The starter alone in a Spring Boot 3.5 application: no Actuator, no
 * {@code micrometer-core}, no Spring AI (the pom's {@code minimal-application} surefire
 * execution removes them from the class path).
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class SpringBoot35MinimalTests extends ReducedClassPathChecks {

	@Override
	String springBootLine() {
		return "3.5.";
	}

	@Override
	boolean actuatorPresent() {
		return false;
	}

}
