/**
 * The native launcher: its installation from the jar into a verified location, and its
 * command line (the options, descriptors, exit codes and refusals it shares with
 * {@code src/main/c/launcher.h}). Not API: public only for the other packages of this
 * module and the benchmarks; it may change in any release. Types here are non-null unless
 * marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.launcher;

import org.jspecify.annotations.NullMarked;
