package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.mechanism.SandboxExecMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;

/**
 * Verifies sandbox-exec on macOS: it runs {@code /usr/bin/true} under the deny-network
 * profile (Seatbelt refuses to nest: {@code sandbox_apply}), then checks that a TCP
 * connect from inside to a listener of its own on {@code 127.0.0.1} fails and nothing
 * arrives. macOS has no network namespaces, so a private loopback is never available.
 */
public final class MacosProbe {

	private final SandboxSettings settings;

	/**
	 * Create a probe of sandbox-exec.
	 * @param settings the settings that name the binary and what is required (read-only
	 * root, private loopback)
	 */
	public MacosProbe(SandboxSettings settings) {
		this.settings = settings;
	}

	/**
	 * Run the probe.
	 * @return the verdict, never {@code null}
	 * @throws InterruptedException if the thread was interrupted while the probe ran
	 */
	public IsolationCapability probe() throws InterruptedException {
		long start = System.nanoTime();
		SandboxExecMechanism mechanism = new SandboxExecMechanism(this.settings.macos().sandboxExecPath(),
				this.settings.readOnlyRoot());
		IsolationCapability missing = ProbeSession.missingBinary(mechanism, start);
		if (missing != null) {
			return missing;
		}
		if (this.settings.loopback()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PRIVATE_LOOPBACK_UNAVAILABLE,
					"sandbox-exec: macOS has no network namespaces", ProbeSession.since(start));
		}
		return ProbeSession.verify(this.settings, start, (session) -> check(session, mechanism,
				this.settings.filesystem().view() == SandboxSettings.Filesystem.View.SYSTEM));
	}

	private static IsolationCapability check(ProbeSession session, SandboxExecMechanism mechanism, boolean systemView)
			throws IOException, InterruptedException {
		try (ServerSocket listener = new ServerSocket()) {
			ProcessRunner.Outcome applied = session.run(mechanism, List.of("/usr/bin/true"), false, false);
			if (applied.timedOut() || applied.exitCode() != 0) {
				return WrapperFailureClassifier.failure(applied, session.took());
			}
			listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			String script = "echo " + ProbeSession.MARKER + "; exec 3<>/dev/tcp/127.0.0.1/" + listener.getLocalPort()
					+ " && echo connected >&3";
			ProcessRunner.Outcome connect = session.run(mechanism, List.of("/bin/bash", "-c", script), false, false);
			return verdict(mechanism, connect, accepted(listener), systemView, session.took());
		}
	}

	private static IsolationCapability verdict(SandboxExecMechanism mechanism, ProcessRunner.Outcome connect,
			boolean arrived, boolean systemView, Duration took) {
		if (connect.timedOut()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT,
					"the connect test did not finish within " + took.toMillis() + " ms", took);
		}
		if (!ProbeSession.text(connect.stdout()).contains(ProbeSession.MARKER)) {
			return ProbeSession.notVerified("the connect test did not run inside the profile (exit "
					+ connect.exitCode() + ": " + ProbeSession.text(connect.stderr()).trim() + ")", took);
		}
		if (arrived || connect.exitCode() == 0) {
			return ProbeSession.notVerified("a TCP connect from inside the sandbox-exec profile reached a listener of "
					+ "the probe on 127.0.0.1 (exit " + connect.exitCode() + ")", took);
		}
		String stderr = ProbeSession.text(connect.stderr()).trim();
		List<String> verified = List.of("sandbox-exec applied the deny-network profile (sandbox_apply succeeded)",
				"a TCP connect from inside to a listener of the probe on 127.0.0.1 failed and nothing arrived ("
						+ (stderr.isEmpty() ? "exit " + connect.exitCode() : stderr) + ")",
				"host unix sockets: denied by (deny network*), which covers unix-socket connects",
				mechanism.readOnlyRoot() ? "root filesystem: writes denied except the working directory and /dev"
						: "root filesystem: writable (readOnlyRoot=false)",
				systemView
						? LinuxProbe.NOT_GIVEN + "the system filesystem view (cave.sandbox.filesystem.view=system): "
								+ "the sandbox-exec profile lets the command read every file the JVM's user can read"
						: "filesystem view: host (cave.sandbox.filesystem.view=host)");
		return IsolationCapability.available(mechanism, verified, false, took);
	}

	private static boolean accepted(ServerSocket listener) throws IOException {
		// The child has exited: a connection it made is already queued.
		listener.setSoTimeout(200);
		try (Socket socket = listener.accept()) {
			return true;
		}
		catch (SocketTimeoutException ex) {
			return false;
		}
	}

}
