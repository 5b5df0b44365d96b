package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.cavesandbox.ResourceLimits;

/**
 * Builds the command line of the macOS mechanism: {@code sandbox-exec(1)} with a Seatbelt
 * profile (SBPL) that allows everything except the network. A pure function of its
 * inputs; nothing here touches the host, so it is unit-tested on any operating system.
 * <ul>
 * <li>{@code (deny network*)} covers {@code network-outbound}, {@code network-inbound}
 * and {@code network-bind}; Seatbelt counts a {@code connect()} to a unix-domain socket
 * as {@code network-outbound} with a {@code (remote unix-socket)} filter. That is why
 * Bazel's darwin sandbox has to add {@code (allow network* (remote unix-socket))} back
 * after its {@code (deny network*)} (bazelbuild/bazel,
 * {@code src/main/java/com/google/devtools/build/lib/sandbox/DarwinSandboxedSpawnRunner.java}),
 * and why Codex's and Chromium's profiles allow single sockets such as
 * {@code /private/var/run/mDNSResponder} by name (openai/codex,
 * {@code codex-rs/core/src/seatbelt_network_policy.sbpl}, after Chromium's
 * {@code sandbox/policy/mac/network.sb}). So the host's unix sockets, including
 * mDNSResponder's (DNS), are denied, with no mount tricks.</li>
 * <li>With a read-only root, {@code (deny file-write*)} then allows writes below the
 * working directory (passed as the {@code WORKDIR} parameter, {@code -D}) and
 * {@code /dev} only, as Bazel's profile does for its writable directories; Seatbelt
 * matches canonical paths ({@code /private/var}, not {@code /var}).</li>
 * <li>The command line is {@code sandbox-exec -p PROFILE -DWORKDIR=... -- argv}, the form
 * Codex uses ({@code codex-rs/core/src/seatbelt.rs}).</li>
 * </ul>
 * There are no network namespaces on macOS: a private loopback is not possible (allowing
 * {@code localhost} would open the host's loopback services too), and a process that
 * already runs in a Seatbelt sandbox cannot apply another one
 * ({@code sandbox-exec: sandbox_apply: Operation
 * not permitted}, exit 71). {@code sandbox-exec} is marked deprecated in its man page but
 * still ships with macOS.
 *
 * @param sandboxExec the {@code sandbox-exec} binary
 * @param readOnlyRoot whether the command may write only below its working directory and
 * {@code /dev}
 */
public record SandboxExecMechanism(Path sandboxExec, boolean readOnlyRoot) implements SandboxMechanism {

	/** The name of this mechanism. */
	public static final String NAME = "sandbox-exec";

	public SandboxExecMechanism {
		Objects.requireNonNull(sandboxExec, "sandboxExec must not be null");
	}

	@Override
	public String name() {
		return NAME;
	}

	/**
	 * Return the Seatbelt profile. The last matching rule wins.
	 * @return the profile, in SBPL
	 */
	public String profile() {
		StringBuilder profile = new StringBuilder("(version 1)\n(allow default)\n(deny network*)\n");
		if (this.readOnlyRoot) {
			profile.append("(deny file-write*)\n")
				.append("(allow file-write* (subpath (param \"WORKDIR\")) (subpath \"/dev\"))\n");
		}
		return profile.toString();
	}

	@Override
	public List<String> commandLine(List<String> argv, Path workingDirectory, boolean loopback, boolean check,
			ResourceLimits limits) {
		if (loopback) {
			throw new IllegalArgumentException("sandbox-exec cannot give a private loopback: macOS has no network "
					+ "namespaces, and allowing localhost would open the host's loopback services");
		}
		List<String> command = new ArrayList<>(
				List.of(this.sandboxExec.toString(), "-p", profile(), "-DWORKDIR=" + workingDirectory, "--"));
		command.addAll(argv);
		return command;
	}

	@Override
	public List<Path> binaries() {
		return List.of(this.sandboxExec);
	}

	@Override
	public boolean supportsPrivateLoopback() {
		return false;
	}

}
