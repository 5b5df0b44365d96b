package dev.cavesandbox.internal.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.LauncherFailure;

/**
 * Tells apart why a wrapper (bwrap, unshare, setpriv, sandbox-exec) failed, from what it
 * wrote on stderr or why it could not be started, and turns that into an unavailable
 * {@link IsolationCapability} whose detail keeps what the wrapper said. A bare exit code
 * would be ambiguous, since the command itself could return it.
 */
public final class WrapperFailureClassifier {

	/**
	 * The errno of a failed spawn, in the JDK's message: {@code error=N} or
	 * {@code error: N}.
	 */
	private static final Pattern ERRNO = Pattern.compile("\\berror(?:=|: )(\\d+)\\b");

	private WrapperFailureClassifier() {
	}

	/**
	 * Judge a wrapper run that timed out or exited with another status than 0.
	 * @param outcome what the wrapper produced
	 * @param took how long the probe took so far
	 * @return {@link UnavailabilityCause#PROBE_TIMEOUT} if it timed out, else the cause
	 * its stderr names, with its exit code and stderr as the detail
	 */
	public static IsolationCapability failure(ProcessRunner.Outcome outcome, Duration took) {
		if (outcome.timedOut()) {
			return IsolationCapability.unavailable(UnavailabilityCause.PROBE_TIMEOUT,
					"no answer within " + took.toMillis() + " ms", took);
		}
		String stderr = new String(outcome.stderr(), StandardCharsets.UTF_8).trim();
		return IsolationCapability.unavailable(classify(stderr), "exit " + outcome.exitCode() + ": " + stderr, took);
	}

	/**
	 * Judge a wrapper that could not be started: Java reports the errno as
	 * {@code error=N} (JDK 17: {@code error=2, No such file or directory}) or
	 * {@code error: N} (JDK 25:
	 * {@code Exec failed, error: 2 (No such file or directory)}).
	 * @param ex what starting it threw
	 * @param took how long the probe took so far
	 * @return {@link UnavailabilityCause#BINARY_NOT_EXECUTABLE} for EACCES,
	 * {@link UnavailabilityCause#BINARY_MISSING} for ENOENT, else
	 * {@link UnavailabilityCause#UNKNOWN}, with the exception's message as the detail
	 */
	public static IsolationCapability launchFailure(IOException ex, Duration took) {
		String message = String.valueOf(ex.getMessage());
		String number = errno(message);
		UnavailabilityCause cause = switch (number) {
			case "13" -> UnavailabilityCause.BINARY_NOT_EXECUTABLE;
			case "2" -> UnavailabilityCause.BINARY_MISSING;
			default -> UnavailabilityCause.UNKNOWN;
		};
		return IsolationCapability.unavailable(cause, message, took);
	}

	/**
	 * Return the errno in the message of a program the JDK could not start, as JDK 17
	 * ({@code error=13, Permission denied}) and JDK 25
	 * ({@code Exec failed, error: 13 (Permission denied)}) word it.
	 * @param message the exception's message
	 * @return the number, or an empty string if there is none
	 */
	public static String errno(String message) {
		Matcher errno = ERRNO.matcher(message);
		return errno.find() ? errno.group(1) : "";
	}

	/**
	 * Tell the causes apart from what a wrapper wrote on stderr: util-linux reports
	 * {@code unshare failed: <strerror>} and {@code write failed /proc/self/uid_map},
	 * bubblewrap {@code Creating new namespace failed},
	 * {@code No permissions to create new namespace} and {@code setting up uid map},
	 * mount(8) {@code mount: ...}, sandbox-exec {@code sandbox_apply}; the launcher's own
	 * refusals start with {@code cave-sandbox-launcher:} and mean that the sandbox it
	 * found is not the one it must confine.
	 * @param stderr the wrapper's stderr
	 * @return the cause, {@link UnavailabilityCause#UNKNOWN} if none matches
	 */
	static UnavailabilityCause classify(String stderr) {
		LauncherFailure failure = LauncherFailure.of(stderr);
		if (failure.says("cannot load the seccomp filter") || failure.says("cannot set no_new_privs")) {
			return UnavailabilityCause.SECCOMP_UNAVAILABLE;
		}
		if (failure.says("cannot create the command user's namespace")) {
			// The launcher creates the user namespace of a root JVM's command user: the
			// kernel's answer names the cause as it would for a wrapper.
			return classifyWrapper(failure.causes());
		}
		if (failure.fromLauncher()) {
			return UnavailabilityCause.NOT_VERIFIED;
		}
		return classifyWrapper(failure.causes());
	}

	private static UnavailabilityCause classifyWrapper(String stderr) {
		if (stderr.contains("sandbox_apply")) {
			return UnavailabilityCause.NESTED_SANDBOX_REFUSED;
		}
		if (stderr.contains("uid_map") || stderr.contains("gid_map") || stderr.contains("setgroups")
				|| stderr.contains("uid map") || stderr.contains("gid map") || stderr.contains("RTM_NEWADDR")) {
			return UnavailabilityCause.UID_MAP_REFUSED;
		}
		if (stderr.contains("No space left on device") || stderr.contains("(ENOSPC)")) {
			return UnavailabilityCause.NAMESPACE_LIMIT;
		}
		if (stderr.contains("unshare failed: Invalid argument")
				|| stderr.contains("Creating new namespace failed: Invalid argument")) {
			return UnavailabilityCause.USER_NAMESPACES_UNSUPPORTED;
		}
		if (stderr.contains("unshare failed: Operation not permitted")
				|| stderr.contains("No permissions to create new namespace")
				|| stderr.contains("Creating new namespace failed: Operation not permitted")) {
			return UnavailabilityCause.KERNEL_REFUSED;
		}
		if (stderr.contains("Failed to make / slave") || stderr.contains("cannot change root filesystem propagation")
				|| stderr.startsWith("mount:") || stderr.contains("\nmount:") || stderr.contains("bwrap: Can't mount")
				|| stderr.contains("bwrap: Can't bind mount") || stderr.contains("bwrap: Can't find source path")) {
			return UnavailabilityCause.MOUNT_REFUSED;
		}
		return UnavailabilityCause.UNKNOWN;
	}

}
