/**
 * The application that the compatibility modules process ahead of time and start from
 * their jars.
 */
@NullMarked
package dev.cavesandbox.compataot;

import org.jspecify.annotations.NullMarked;
