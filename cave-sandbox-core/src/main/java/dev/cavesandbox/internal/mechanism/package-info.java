/**
 * The mechanisms a command runs under: pure, immutable builders that turn a request into
 * the command line that is spawned (bubblewrap, util-linux {@code unshare}, namespaces,
 * seccomp, macOS {@code sandbox-exec}), and the filesystem view they build. Nothing here
 * touches the host. Not API: public only for the other packages of this module and the
 * benchmarks; it may change in any release. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.mechanism;

import org.jspecify.annotations.NullMarked;
