package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.ReadyMarker;
import dev.cavesandbox.internal.workspace.ViewFingerprint;

/**
 * How an executor's warm sandboxes are made and ended, for its {@link WarmPool}: the
 * sandbox part of a launch ({@link LaunchPreparation#prepareSandbox(EffectiveRequest)}),
 * its launcher of {@code --handover} spawned from the runner's spawn threads (the
 * parent-death signal ties it to the JVM) and counted as running, its ready marker read
 * within the probe timeout; ended by SIGKILL to the wrapper, the tree awaited, then the
 * launch closed (directories renewed, command user and slot given back).
 */
final class WarmSandboxes {

	private final LaunchPreparation preparation;

	private final ProcessRunner runner;

	private final WarmShape shape;

	private final List<Path> viewPaths;

	private final Duration readyTimeout;

	/** The thread that kills sandboxes not ready by their deadline. */
	private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "cave-sandbox-warm-deadline");
		thread.setDaemon(true);
		return thread;
	});

	/**
	 * Create the sandboxes of one executor.
	 * @param preparation the executor's preparation
	 * @param runner the executor's runner
	 * @param shape the pool's shape
	 * @param viewPaths the paths of the view's fingerprint
	 * @param readyTimeout how long a sandbox may take to report ready (the probe timeout)
	 */
	WarmSandboxes(LaunchPreparation preparation, ProcessRunner runner, WarmShape shape, List<Path> viewPaths,
			Duration readyTimeout) {
		this.preparation = preparation;
		this.runner = runner;
		this.shape = shape;
		this.viewPaths = viewPaths;
		this.readyTimeout = readyTimeout;
	}

	ViewFingerprint fingerprint() {
		return ViewFingerprint.of(this.viewPaths);
	}

	/**
	 * Prepare one sandbox and wait for its ready marker.
	 * @return the sandbox
	 * @throws Exception if it could not be prepared ({@link NotReadyException} where it
	 * did not report ready in time); nothing of it is left then
	 */
	WarmLaunch prepare() throws Exception {
		PreparedLaunch launch = this.preparation.prepareSandbox(this.shape.request());
		Process process = null;
		try {
			// Before the spawn: a change after it shows at the claim.
			ViewFingerprint fingerprint = fingerprint();
			PreparedLaunch.Sandbox sandbox = launch.sandbox();
			List<String> commandLine = sandbox.commandLine();
			if (commandLine == null) {
				throw new IllegalStateException("a warm sandbox needs the launcher's hand-over");
			}
			// From before the spawn: a spawn handed over late under load must not let a
			// marker already in the pipe count as in time.
			long start = System.nanoTime();
			process = this.runner.spawnPrepared(new ProcessRunner.Spec(commandLine, sandbox.directory(),
					sandbox.wrappers(), null, null, 0, null, null, true));
			if (!awaitReady(process, start)) {
				throw new NotReadyException("the sandbox did not report ready within " + this.readyTimeout.toMillis()
						+ " ms (cave.sandbox.probe-timeout), or ended before: exit "
						+ (process.isAlive() ? "none" : String.valueOf(process.exitValue())));
			}
			return new WarmLaunch(launch, process, System.nanoTime(), fingerprint);
		}
		catch (Exception | Error ex) {
			if (process != null) {
				this.runner.discard(process);
			}
			launch.closeQuietly();
			throw ex;
		}
	}

	/**
	 * Read the marker; a sandbox that has not written it by the deadline (the ready
	 * timeout after {@code start}, taken before the spawn) is killed (on a thread of this
	 * class's own: a shared pool such as the common fork-join pool, one thread on two
	 * cores, may run the kill late or never), and one whose marker came after the
	 * deadline does not count as ready.
	 */
	private boolean awaitReady(Process process, long start) throws IOException {
		long left = this.readyTimeout.toNanos() - (System.nanoTime() - start);
		ScheduledFuture<?> kill = DEADLINES.schedule(() -> process.toHandle().destroyForcibly(), Math.max(0, left),
				TimeUnit.NANOSECONDS);
		boolean ready;
		try {
			ready = ReadyMarker.await(process.getInputStream());
		}
		finally {
			kill.cancel(false);
		}
		boolean inTime = System.nanoTime() - start < this.readyTimeout.toNanos();
		return ready && inTime && process.isAlive();
	}

	/**
	 * Kill a sandbox that will not serve, wait for its tree's end, and give back what it
	 * took. Never throws.
	 * @param launch the sandbox
	 */
	void discard(WarmLaunch launch) {
		try {
			this.runner.discard(launch.process());
		}
		finally {
			launch.launch().closeQuietly();
		}
	}

	/**
	 * A sandbox that did not report ready within the probe timeout.
	 */
	static final class NotReadyException extends Exception {

		private static final long serialVersionUID = 1L;

		NotReadyException(String message) {
			super(message);
		}

	}

}
