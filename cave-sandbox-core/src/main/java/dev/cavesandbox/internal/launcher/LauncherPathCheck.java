package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.launcher.LauncherInstallation.UnavailableException;

/**
 * The checks of a configured {@link SandboxSettings.Linux#launcherPath()}: absolute, a
 * regular file, executable, neither it nor any directory on its real path writable by
 * group or others (unless sticky) or owned by anyone but root or the JVM's user, and the
 * build's SHA-256.
 */
final class LauncherPathCheck {

	private static final Set<PosixFilePermission> ANY_EXECUTE = EnumSet.of(PosixFilePermission.OWNER_EXECUTE,
			PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);

	private LauncherPathCheck() {
	}

	/**
	 * Check a configured launcher.
	 * @param launcher the {@code launcherPath}
	 * @param build the build it must be
	 * @return its real path, which is what runs: a symbolic link on the way, swapped
	 * after this check, changes nothing
	 * @throws UnavailableException if a check fails; its message names it
	 */
	static Path check(Path launcher, LauncherBuild build) throws UnavailableException {
		if (!launcher.isAbsolute()) {
			// A relative name would be checked here but looked up on PATH when spawned.
			throw new UnavailableException("launcherPath " + launcher + " is not an absolute path");
		}
		if (!Files.exists(launcher)) {
			throw new UnavailableException("launcherPath " + launcher + " does not exist");
		}
		if (!Files.isRegularFile(launcher)) {
			throw new UnavailableException("launcherPath " + launcher + " is not a regular file");
		}
		if (!Files.isExecutable(launcher)) {
			Path noexec = ExecutionCheck.noexecMount(launcher);
			if (noexec != null) {
				throw new UnavailableException(ExecutionCheck.noexec(launcher, noexec, build, true));
			}
			throw new UnavailableException("launcherPath " + launcher + " is not executable (mode "
					+ permissions(launcher) + ") for the user that runs the JVM");
		}
		Path real;
		try {
			real = launcher.toRealPath();
		}
		catch (IOException ex) {
			throw new UnavailableException("cannot resolve launcherPath " + launcher + ": " + ex);
		}
		checkNotWritableByOthers(real, "launcherPath " + launcher);
		for (Path directory = real.getParent(); directory != null; directory = directory.getParent()) {
			checkNotWritableByOthers(directory, "the directory " + directory + " of launcherPath " + launcher);
		}
		String actual = LauncherInstallation.sha256(real);
		if (!actual.equals(build.sha256())) {
			throw new UnavailableException("launcherPath " + launcher + ": SHA-256 mismatch: expected " + build.sha256()
					+ " (this jar's " + build.platform() + " build), got " + actual);
		}
		// The real path is what runs: a symbolic link on the way, swapped after this
		// check, changes nothing.
		return real;
	}

	/**
	 * The copy is verified once per JVM: whoever else may write it, or replace it or a
	 * directory on its path, could swap in another program afterwards, which would then
	 * run before every wrapper (sshd's StrictModes applies the same rule to its files). A
	 * sticky directory ({@code /tmp}) is writable by others, but they cannot rename or
	 * remove what is not theirs there (inode(7)).
	 */
	private static void checkNotWritableByOthers(Path path, String what) throws UnavailableException {
		Set<PosixFilePermission> permissions;
		int mode;
		int owner;
		int self;
		try {
			permissions = Files.getPosixFilePermissions(path);
			mode = (Integer) Files.getAttribute(path, "unix:mode");
			owner = (Integer) Files.getAttribute(path, "unix:uid");
			self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
		}
		catch (IOException | UnsupportedOperationException ex) {
			throw new UnavailableException("cannot read the permissions of " + what + ": " + ex);
		}
		if (owner != 0 && owner != self) {
			throw new UnavailableException(what + " is owned by uid " + owner + ", who could replace the launcher "
					+ "after its check: install it where only root or the JVM's user owns the path, e.g. a root-owned "
					+ "/usr/local/lib/cave-sandbox/");
		}
		boolean sticky = Files.isDirectory(path) && (mode & 01000) != 0;
		if (!sticky && (permissions.contains(PosixFilePermission.GROUP_WRITE)
				|| permissions.contains(PosixFilePermission.OTHERS_WRITE))) {
			throw new UnavailableException(what + " is writable by group or others ("
					+ PosixFilePermissions.toString(permissions) + "), who could replace the launcher after its check: "
					+ "install it where only root or the JVM's user can write, e.g. a root-owned /usr/local/lib/"
					+ "cave-sandbox/");
		}
	}

	private static String permissions(Path file) {
		try {
			Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
			String mode = PosixFilePermissions.toString(permissions);
			return permissions.stream().anyMatch(ANY_EXECUTE::contains) ? mode + ", but not for this user" : mode;
		}
		catch (IOException ex) {
			return "unreadable: " + ex.getMessage();
		}
	}

}
