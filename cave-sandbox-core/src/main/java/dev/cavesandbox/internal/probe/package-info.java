/**
 * The probe: runs each mechanism's real command line on this host and judges what its
 * child reports into an {@code IsolationCapability}. Not API: public only for the other
 * packages of this module and the benchmarks; it may change in any release. Types here
 * are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.probe;

import org.jspecify.annotations.NullMarked;
