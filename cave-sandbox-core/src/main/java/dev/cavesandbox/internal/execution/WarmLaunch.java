package dev.cavesandbox.internal.execution;

import dev.cavesandbox.internal.workspace.ViewFingerprint;

/**
 * A warm sandbox: a {@link PreparedLaunch} whose launcher was spawned with
 * {@code --handover} and has written its ready marker, waiting for one request's frame.
 *
 * @param launch what the sandbox took (working and shared-memory directories, command
 * user, grant), given back once it has served or been discarded
 * @param process the spawned wrapper, counted as running by the runner
 * @param preparedAt when it was ready ({@link System#nanoTime()})
 * @param fingerprint what its view rested on when it was prepared
 */
record WarmLaunch(PreparedLaunch launch, Process process, long preparedAt, ViewFingerprint fingerprint) {

}
