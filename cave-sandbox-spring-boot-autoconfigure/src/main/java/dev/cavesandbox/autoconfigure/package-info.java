/**
 * Spring Boot auto-configuration for cave-sandbox: binds the {@code cave.sandbox.*}
 * properties ({@link dev.cavesandbox.autoconfigure.CaveSandboxProperties}), probes the
 * host once and exposes an {@link dev.cavesandbox.IsolatedExecutor} bean, with the
 * sandbox's health indicator, info contributor, metrics, observations, failure analyzer
 * and the {@link dev.cavesandbox.autoconfigure.ConditionalOnNetworkIsolation} condition.
 * Types here are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.autoconfigure;

import org.jspecify.annotations.NullMarked;
