/**
 * Running a prepared command line: the spawn, bounded output, the timeout and teardown of
 * the process tree, started processes, the child's environment and command resolution,
 * and reading what a failed launch printed. Not API: public only for the other packages
 * of this module and the benchmarks; it may change in any release. Types here are
 * non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.process;

import org.jspecify.annotations.NullMarked;
