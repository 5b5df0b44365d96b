package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.mechanism.BubblewrapMechanism;
import dev.cavesandbox.internal.mechanism.NamespacesMechanism;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.mechanism.UnshareMechanism;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The verified command line of a mechanism, run by an unprivileged user (nobody, uid
 * 65534) through {@code setpriv}, as a JVM of that user would run it: the probe's
 * mechanism rebuilt with nobody's uid and with a copy of the launcher that nobody can
 * execute (the one the probe uses may live in a directory only its owner reaches). Needs
 * root.
 */
final class NobodyCommandLines {

	static final long NOBODY = 65534;

	private static final List<String> SETPRIV = List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
			"--clear-groups", "--");

	private NobodyCommandLines() {
	}

	/**
	 * Return the mechanism the probe verified for the choice, rebuilt for nobody with a
	 * copy of its launcher in {@code launcherDirectory} (made reachable by everyone).
	 */
	static SandboxMechanism mechanism(MechanismChoice choice, Path launcherDirectory) throws IOException {
		return mechanism(choice, launcherDirectory, NOBODY);
	}

	/**
	 * Return the mechanism the probe verified for the choice, rebuilt for another
	 * unprivileged uid (its gid the same number), with a copy of its launcher in
	 * {@code launcherDirectory}.
	 */
	static SandboxMechanism mechanism(MechanismChoice choice, Path launcherDirectory, long uid) throws IOException {
		SandboxMechanism verified = LinuxMechanisms.verified(SandboxSettings.builder().mechanism(choice).build())
			.mechanism();
		Files.setPosixFilePermissions(launcherDirectory, PosixFilePermissions.fromString("rwxr-xr-x"));
		if (verified instanceof BubblewrapMechanism bwrap) {
			return new BubblewrapMechanism(bwrap.bwrap(), copy(bwrap.launcher(), launcherDirectory),
					bwrap.filesystem());
		}
		if (verified instanceof NamespacesMechanism namespaces) {
			return new NamespacesMechanism(namespaces.setpriv(), namespaces.unshare(),
					copy(namespaces.launcher(), launcherDirectory), namespaces.filesystem(), uid, uid, true);
		}
		if (verified instanceof SeccompMechanism seccomp) {
			return new SeccompMechanism(copy(seccomp.launcher(), launcherDirectory), seccomp.filesystem());
		}
		UnshareMechanism unshare = (UnshareMechanism) verified;
		return new UnshareMechanism(unshare.setpriv(), unshare.unshare(), copy(unshare.launcher(), launcherDirectory),
				unshare.filesystem(), uid, uid, true);
	}

	private static Launcher copy(Launcher launcher, Path directory) throws IOException {
		Path copy = Files.copy(launcher.path(), directory.resolve("cave-sandbox-launcher"),
				StandardCopyOption.REPLACE_EXISTING);
		Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
		awaitExecutable(copy);
		return new Launcher(copy, launcher.userNamespaces());
	}

	/**
	 * Wait until the copy runs: a child that another thread spawned (a warm pool's
	 * preparation) while the copy was open for writing holds that descriptor until it
	 * executes, and until then executing the copy fails with ETXTBSY (execve(2)), as the
	 * product's ExecutionCheck allows for. Once it ran, no descriptor writes it anymore.
	 */
	private static void awaitExecutable(Path copy) throws IOException {
		try {
			for (int attempt = 0;; attempt++) {
				try {
					Process version = new ProcessBuilder(copy.toString(), "--version").redirectErrorStream(true)
						.start();
					version.getInputStream().readAllBytes();
					version.waitFor(60, TimeUnit.SECONDS);
					return;
				}
				catch (IOException ex) {
					if (attempt >= 50 || !String.valueOf(ex.getMessage()).contains("error=26")) {
						throw ex;
					}
				}
				Thread.sleep(20);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException(ex);
		}
	}

	/** Give a directory (a command's working directory) to nobody. */
	static void giveToNobody(Path directory) throws IOException {
		UserPrincipal nobody = directory.getFileSystem()
			.getUserPrincipalLookupService()
			.lookupPrincipalByName("nobody");
		Files.setOwner(directory, nobody);
	}

	/** Return {@code argv} prefixed by the switch to nobody. */
	static List<String> asNobody(List<String> argv) {
		List<String> command = new ArrayList<>(SETPRIV);
		command.addAll(argv);
		return command;
	}

	/**
	 * Return {@code argv} prefixed by the switch to an unprivileged uid (gid the same).
	 */
	static List<String> asUser(long uid, List<String> argv) {
		List<String> command = new ArrayList<>(
				List.of("/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "--"));
		command.addAll(argv);
		return command;
	}

	/**
	 * Run a command line in a directory and return its exit code and its output (stdout
	 * and stderr merged).
	 */
	static Run run(List<String> command, Path directory) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
		process.getOutputStream().close();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("did not hang: %s", output).isTrue();
		return new Run(process.exitValue(), output);
	}

	record Run(int exitCode, String output) {
	}

}
