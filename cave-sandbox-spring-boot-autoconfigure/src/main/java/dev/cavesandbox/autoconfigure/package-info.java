/**
 * Spring Boot auto-configuration of the {@link dev.cavesandbox.IsolatedExecutor}: the
 * {@code cave.sandbox.*} properties and their rules, the probe run once per context (when
 * the beans are created, so also at run time in an application processed ahead of time),
 * {@link dev.cavesandbox.autoconfigure.ConditionalOnNetworkIsolation}, the settings
 * customizers, the failure analysis, the AOT runtime hints, and the facts that the
 * health, info and observation packages report.
 */
@NullMarked
package dev.cavesandbox.autoconfigure;

import org.jspecify.annotations.NullMarked;
