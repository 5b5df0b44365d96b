package dev.cavesandbox.internal.launcher;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.cavesandbox.internal.launcher.LauncherInstallation.UnavailableException;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
import org.jspecify.annotations.Nullable;

/**
 * Whether a verified launcher executes here: it must answer {@code --version} with
 * {@code cave-sandbox-launcher <version>} of its build within the probe timeout. This is
 * where a filesystem mounted {@code noexec} shows up (the kernel refuses the execution
 * with EACCES), named from {@code /proc/self/mountinfo}.
 */
final class ExecutionCheck {

	/** How often an execution refused with ETXTBSY is tried again. */
	private static final int TEXT_BUSY_ATTEMPTS = 5;

	private ExecutionCheck() {
	}

	/**
	 * Run {@code launcher --version} and check its answer.
	 * @param launcher the launcher
	 * @param build its build, whose version it must print
	 * @param configured whether it is the settings' {@code launcherPath} (rather than the
	 * extracted copy), for the messages
	 * @param timeout how long it may take (the probe timeout)
	 * @throws UnavailableException if it cannot be executed, does not answer in time, or
	 * answers anything else
	 */
	static void checkExecutes(Path launcher, LauncherBuild build, boolean configured, Duration timeout)
			throws UnavailableException {
		String expected = LauncherInstallation.BINARY + " " + build.version();
		Process started = start(launcher, build, configured);
		// A thread of its own, not the common pool: with two CPUs that pool has one
		// worker on Java 25, which an application's blocking task may hold.
		CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> {
			try (InputStream in = started.getInputStream()) {
				return in.readNBytes(4096);
			}
			catch (IOException ex) {
				return new byte[0];
			}
		}, (task) -> {
			Thread reader = new Thread(task, "cave-sandbox-launcher-version");
			reader.setDaemon(true);
			reader.start();
		});
		try {
			if (!started.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				started.destroyForcibly();
				throw new UnavailableException(
						launcher + " --version did not answer within " + timeout + " (probeTimeout)");
			}
			String answer = new String(output.get(timeout.toMillis(), TimeUnit.MILLISECONDS), StandardCharsets.UTF_8)
				.strip();
			if (started.exitValue() != 0 || !answer.equals(expected)) {
				throw new UnavailableException(launcher + " --version answered '" + answer + "' (exit "
						+ started.exitValue() + "), expected '" + expected + "'");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			started.destroyForcibly();
			throw new UnavailableException("interrupted while " + launcher + " --version ran");
		}
		catch (ExecutionException | TimeoutException ex) {
			started.destroyForcibly();
			throw new UnavailableException("cannot read what " + launcher + " --version answered: " + ex);
		}
	}

	/**
	 * Start {@code launcher --version} with an empty environment, stdin from
	 * {@code /dev/null} and stderr into stdout, trying again on ETXTBSY.
	 */
	private static Process start(Path launcher, LauncherBuild build, boolean configured) throws UnavailableException {
		ProcessBuilder builder = new ProcessBuilder(launcher.toString(), "--version").redirectErrorStream(true)
			.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
		builder.environment().clear();
		Process process = null;
		for (int attempt = 1; process == null; attempt++) {
			try {
				process = builder.start();
			}
			catch (IOException ex) {
				String message = String.valueOf(ex.getMessage());
				String errno = WrapperFailureClassifier.errno(message);
				if (errno.equals("26") && attempt < TEXT_BUSY_ATTEMPTS) {
					// ETXTBSY: a child that another thread spawned at the moment the copy
					// was still open for writing holds that descriptor until its exec.
					pause();
					continue;
				}
				Path noexec = errno.equals("13") ? noexecMount(launcher) : null;
				if (noexec != null) {
					throw new UnavailableException(noexec(launcher, noexec, build, configured));
				}
				String refused = errno.equals("13") ? " (EACCES: a noexec mount or a security module refuses it)" : "";
				throw new UnavailableException((configured ? "launcherPath " : "the launcher ") + launcher
						+ " cannot be executed: " + message + refused + (configured ? "" : "; " + build.installHint()));
			}
		}
		return process;
	}

	private static void pause() {
		try {
			Thread.sleep(20);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * The message for a launcher on a {@code noexec} mount.
	 * @param launcher the launcher
	 * @param mount the mount point
	 * @param build its build
	 * @param configured whether it is the settings' {@code launcherPath}
	 * @return the message
	 */
	static String noexec(Path launcher, Path mount, LauncherBuild build, boolean configured) {
		return (configured ? "launcherPath " : "the launcher ") + launcher + " cannot be executed: its filesystem "
				+ mount + " is mounted noexec (EACCES); " + (configured
						? "point launcherPath at a copy on a filesystem that allows execution" : build.installHint());
	}

	/**
	 * Return the mount point of the filesystem of a file if it is mounted {@code noexec},
	 * from {@code /proc/self/mountinfo}.
	 * @param file the file
	 * @return the mount point, or {@code null} if it allows execution or is unknown
	 */
	static @Nullable Path noexecMount(Path file) {
		List<String> lines;
		Path real;
		try {
			real = file.toRealPath();
			lines = Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8);
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
		Path mountPoint = null;
		boolean noexec = false;
		for (String line : lines) {
			String[] fields = line.split(" ");
			if (fields.length < 6) {
				continue;
			}
			Path point = Path.of(LauncherInstallation.unescape(fields[4]));
			// A later mount on the same or a deeper point covers the earlier ones.
			if (real.startsWith(point) && (mountPoint == null || point.startsWith(mountPoint))) {
				mountPoint = point;
				noexec = List.of(fields[5].split(",")).contains("noexec");
			}
		}
		return noexec ? mountPoint : null;
	}

}
