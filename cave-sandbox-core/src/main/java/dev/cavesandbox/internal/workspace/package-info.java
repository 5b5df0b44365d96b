/**
 * The files an execution works in: the pool of private working directories, this user's
 * home in the work directory that holds them, the owner lock and the orphan sweep, the
 * grants that let the command user into a working directory, input files, and the checks
 * of listed paths and of the system-only view. Not API: public only for the other
 * packages of this module and the benchmarks; it may change in any release. Types here
 * are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.workspace;

import org.jspecify.annotations.NullMarked;
