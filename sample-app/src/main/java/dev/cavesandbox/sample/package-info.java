/**
 * A sample Spring Boot application that uses the cave-sandbox starter: it runs a few jobs
 * in the sandbox (a computation, a file it is given, attempts to reach the network) and
 * prints a report of what each could do, or runs one command given on the command line.
 * Types here are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.sample;

import org.jspecify.annotations.NullMarked;
