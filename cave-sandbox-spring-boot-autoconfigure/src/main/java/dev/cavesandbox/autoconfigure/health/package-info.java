/**
 * The {@code sandbox} health indicator on Spring Boot 4, its auto-configuration and the
 * place of its {@code UNISOLATED} status in the aggregate health status.
 */
@NullMarked
package dev.cavesandbox.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
