package dev.cavesandbox.compat;

import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * The starter in a Spring Boot 4.1 application with Actuator but without
 * {@code micrometer-core} and without Spring AI (the pom's
 * {@code actuator-without-micrometer} surefire execution removes them from the class
 * path).
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class SpringBoot41ActuatorWithoutMicrometerTests extends ReducedClassPathChecks {

	@Override
	String springBootLine() {
		return "4.1.";
	}

	@Override
	boolean actuatorPresent() {
		return true;
	}

}
