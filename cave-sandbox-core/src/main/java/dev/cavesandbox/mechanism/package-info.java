/**
 * The ways of running a command without network access
 * ({@link dev.cavesandbox.mechanism.SandboxMechanism}: bubblewrap, util-linux
 * {@code unshare} and macOS {@code sandbox-exec}): immutable builders that turn a request
 * into the command line that is actually spawned, together with the
 * {@link dev.cavesandbox.mechanism.FilesystemView} they hide directories by. Nothing here
 * touches the host. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.mechanism;

import org.jspecify.annotations.NullMarked;
