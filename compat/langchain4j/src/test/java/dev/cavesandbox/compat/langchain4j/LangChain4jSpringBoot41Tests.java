package dev.cavesandbox.compat.langchain4j;

import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@code cave-sandbox-langchain4j} in a LangChain4j application on Spring Boot 4.1 with
 * Actuator ({@link LangChain4jApplicationChecks}).
 */
@EnabledOnOs(OS.LINUX)
@SpringBootTest
class LangChain4jSpringBoot41Tests extends LangChain4jApplicationChecks {

	@Override
	String springBootLine() {
		return "4.1.";
	}

}
