/**
 * The opt-in {@code sandbox} contributor to {@code /actuator/info} and its
 * auto-configuration.
 */
@NullMarked
package dev.cavesandbox.autoconfigure.info;

import org.jspecify.annotations.NullMarked;
