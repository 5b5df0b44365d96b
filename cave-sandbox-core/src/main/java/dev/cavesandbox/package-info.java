/**
 * The sandbox itself, without any framework: {@link dev.cavesandbox.IsolatedExecutor}
 * runs child processes in an OS-level network-isolated sandbox,
 * {@link dev.cavesandbox.IsolatedExecutors} creates one from
 * {@link dev.cavesandbox.SandboxSettings} under the strict or fallback policy, and
 * {@link dev.cavesandbox.NetworkIsolationProbe} verifies on the host, by running the real
 * command line, whether a mechanism isolates. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox;

import org.jspecify.annotations.NullMarked;
