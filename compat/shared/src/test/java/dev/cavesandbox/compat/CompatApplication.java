package dev.cavesandbox.compat;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The application of the compatibility tests: nothing but auto-configuration, so that everything
 * the tests see comes from the starter and Spring Boot.
 */
@SpringBootApplication
public class CompatApplication {

}
