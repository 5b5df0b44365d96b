/**
 * The executor: merges a request over the settings, prepares a launch in named phases,
 * runs it, and closes what it prepared in reverse order. Not API: public only for the
 * other packages of this module and the benchmarks; it may change in any release. Types
 * here are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.execution;

import org.jspecify.annotations.NullMarked;
