/**
 * Spring Boot auto-configuration of the {@link dev.cavesandbox.IsolatedExecutor}: the
 * {@code cave.sandbox.*} properties and their rules, the probe run once per context
 * behind {@link dev.cavesandbox.autoconfigure.ConditionalOnNetworkIsolation}, the
 * settings customizers, the failure analysis, and the facts that the health, info and
 * observation packages report.
 */
@NullMarked
package dev.cavesandbox.autoconfigure;

import org.jspecify.annotations.NullMarked;
