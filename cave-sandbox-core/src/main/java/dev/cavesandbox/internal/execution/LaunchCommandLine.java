package dev.cavesandbox.internal.execution;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.InvalidExecutionRequestException;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.process.ChildEnvironment;
import dev.cavesandbox.internal.process.ProcessRunner;
import org.jspecify.annotations.Nullable;

/**
 * What a launch spawns, in its two parts: the {@linkplain #sandbox sandbox}'s command
 * line of the hand-over ({@code --handover}: the same for every request of its shape, so
 * it may be spawned ahead of one), and the request's {@linkplain #spec spec} around it.
 */
final class LaunchCommandLine {

	private LaunchCommandLine() {
	}

	/**
	 * The sandbox: where the mechanism has a launcher, its command line with
	 * {@code --handover} and the wrappers' environment (a baseline {@code PATH} and the
	 * launch token); else the command line is the request's ({@link #spec}).
	 * @param capability the verified capability, or {@code null} unisolated
	 * @param launch the launch (its token and egress)
	 * @param request the request whose sandbox it is (loopback, limits)
	 * @param mechanism the launch's mechanism, {@code null} unisolated
	 * @param directory the working directory as the command sees it
	 * @param real its real path, which the mechanism binds
	 * @return the sandbox
	 * @throws InvalidExecutionRequestException if a loopback was asked for that the
	 * capability cannot give
	 */
	static PreparedLaunch.Sandbox sandbox(@Nullable IsolationCapability capability, PreparedLaunch launch,
			EffectiveRequest request, @Nullable SandboxMechanism mechanism, Path directory, Path real) {
		if (capability == null || mechanism == null || mechanism.launcher() == null) {
			return new PreparedLaunch.Sandbox(mechanism, directory, real, null, Map.of());
		}
		List<String> commandLine = mechanism.commandLine(Launcher.HANDOVER, real, loopback(capability, launch, request),
				false, request.limits());
		return new PreparedLaunch.Sandbox(mechanism, directory, real, commandLine,
				ChildEnvironment.ofWrappers(LauncherContract.TOKEN_VARIABLE, launch.token));
	}

	/**
	 * Whether the command gets a private loopback: the request's wish, and always with an
	 * egress bridge, which listens there.
	 * @throws InvalidExecutionRequestException if the capability cannot give one
	 */
	private static boolean loopback(IsolationCapability capability, PreparedLaunch launch, EffectiveRequest request) {
		boolean loopback = launch.egress() != null || request.loopback();
		String refusal = loopback ? capability.loopbackRefusal() : null;
		if (refusal != null) {
			throw new InvalidExecutionRequestException(
					"loopback was requested, but " + refusal + "; leave loopback unset or false");
		}
		return loopback;
	}

	/**
	 * What is spawned: the sandbox's command line of the hand-over with the wrappers'
	 * environment; unisolated the argv, and on a mechanism without a launcher its command
	 * line around the argv, with the command's environment.
	 * @param capability the verified capability, or {@code null} unisolated
	 * @param request the request (its stdin, sinks, cap and timeout)
	 * @param sandbox the launch's sandbox
	 * @param environment the command's environment
	 * @return the spec
	 */
	static ProcessRunner.Spec spec(@Nullable IsolationCapability capability, EffectiveRequest request,
			PreparedLaunch.Sandbox sandbox, Map<String, String> environment) {
		List<String> commandLine = sandbox.commandLine();
		Map<String, String> spawned = sandbox.wrappers();
		if (commandLine == null) {
			commandLine = request.request().argv();
			spawned = environment;
			SandboxMechanism mechanism = sandbox.mechanism();
			if (mechanism != null) {
				commandLine = mechanism.commandLine(commandLine, sandbox.real(), request.loopback(), false,
						request.limits());
			}
		}
		ExecutionRequest original = request.request();
		boolean isolated = capability != null;
		return request.started()
				? new ProcessRunner.Spec(commandLine, sandbox.directory(), spawned, null, request.timeout(), 0, null,
						null, isolated)
				: new ProcessRunner.Spec(commandLine, sandbox.directory(), spawned, original.stdin(), request.timeout(),
						request.maxOutputBytes(), original.stdoutSink(), original.stderrSink(), isolated);
	}

}
