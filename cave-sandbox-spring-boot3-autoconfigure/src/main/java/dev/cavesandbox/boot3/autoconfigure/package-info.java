/**
 * The Spring Boot 3.5 counterparts of the Boot 4 only health pieces: the {@code sandbox}
 * and {@code caveSandboxMcp} health indicators in {@code spring-boot-actuator}'s types,
 * their auto-configuration and the place of the {@code UNISOLATED} status.
 */
@NullMarked
package dev.cavesandbox.boot3.autoconfigure;

import org.jspecify.annotations.NullMarked;
