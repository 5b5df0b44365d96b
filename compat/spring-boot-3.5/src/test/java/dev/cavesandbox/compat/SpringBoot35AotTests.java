package dev.cavesandbox.compat;

import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * The Spring Boot 3.5 application processed ahead of time ({@code process-aot}) and
 * started from its jar with {@code -Dspring.aot.enabled=true}:
 * {@link AotApplicationChecks}. Run by failsafe, after the jar is built.
 */
@EnabledOnOs(OS.LINUX)
class SpringBoot35AotTests extends AotApplicationChecks {

}
