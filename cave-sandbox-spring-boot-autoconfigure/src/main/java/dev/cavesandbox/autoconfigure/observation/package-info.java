/**
 * Micrometer instrumentation of the sandbox: an observation per execution and per started
 * process, the egress counter and the {@code cave.sandbox.unisolated} gauge.
 */
@NullMarked
package dev.cavesandbox.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
