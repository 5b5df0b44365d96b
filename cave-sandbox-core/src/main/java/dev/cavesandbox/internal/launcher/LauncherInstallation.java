package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.PrivateHome;

/**
 * Where cave-sandbox's native launcher ({@code cave-sandbox-launcher}) is, verified: with
 * {@link SandboxSettings.Linux#launcherPath()} set, that file
 * ({@link LauncherPathCheck}); otherwise a copy of the jar's {@link LauncherBuild}
 * extracted into this user's home in the work directory ({@link PrivateHome#of(Path)}),
 * as {@code launcher-<first 16 hex digits of the SHA-256>/cave-sandbox-launcher}, mode
 * {@code r-x------}, in a directory of mode {@code rwx------}. Either must have the
 * build's SHA-256 and answer {@code --version} ({@link ExecutionCheck}). A verified path
 * is remembered per launcher path or work directory for the life of the instance;
 * {@link #shared()} is the instance of the whole JVM.
 */
public final class LauncherInstallation {

	public static final String BINARY = "cave-sandbox-launcher";

	private static final LauncherInstallation SHARED = new LauncherInstallation();

	private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	private static final Set<PosixFilePermission> OWNER_READ_EXECUTE = PosixFilePermissions.fromString("r-x------");

	private final String platform;

	/** The verified launcher per launcher path or work directory. */
	private final Map<String, Path> verified = new ConcurrentHashMap<>();

	/** What each verified copy was when it was verified, checked before each spawn. */
	private final Map<Path, FileIdentity> identities = new ConcurrentHashMap<>();

	/**
	 * Create an installation for this JVM's architecture that remembers only what it
	 * verified itself (tests); production code uses {@link #shared()}.
	 */
	public LauncherInstallation() {
		this(LauncherBuild.platform(System.getProperty("os.arch", "")));
	}

	/**
	 * Create an installation that uses the build of another platform.
	 * @param platform the directory of the build in the jar, for example
	 * {@code linux-x86_64}
	 */
	public LauncherInstallation(String platform) {
		this.platform = platform;
	}

	/**
	 * Return the installation of this JVM, which verifies each launcher path and work
	 * directory once.
	 * @return the installation
	 */
	public static LauncherInstallation shared() {
		return SHARED;
	}

	/**
	 * Return the verified launcher for the settings: their
	 * {@link SandboxSettings.Linux#launcherPath()}, or the copy extracted into their work
	 * directory.
	 * @param settings the settings
	 * @return the path of the launcher, verified and executable
	 * @throws UnavailableException if there is no build of the launcher for this
	 * architecture, or the launcher is missing, not a regular file, not executable, has
	 * another SHA-256 than the build's, cannot be extracted, or does not execute (for
	 * example on a {@code noexec} mount); its message names the check that failed
	 */
	public Path resolve(SandboxSettings settings) throws UnavailableException {
		Path configured = settings.linux().launcherPath();
		String key = (configured != null) ? "launcherPath:" + configured.toAbsolutePath().normalize()
				: "workDirectory:" + realPath(settings.workDirectory());
		Path known = this.verified.get(key);
		if (known != null) {
			return known;
		}
		synchronized (this) {
			known = this.verified.get(key);
			if (known != null) {
				return known;
			}
			LauncherBuild build = build();
			Path launcher = (configured != null) ? LauncherPathCheck.check(configured, build)
					: extract(settings.workDirectory(), build);
			ExecutionCheck.checkExecutes(launcher, build, configured != null, settings.probeTimeout());
			this.identities.put(launcher, FileIdentity.of(launcher));
			this.verified.put(key, launcher);
			return launcher;
		}
	}

	/**
	 * Return the launcher's build for this platform, as recorded in the jar.
	 * @return the build
	 * @throws UnavailableException if the jar has none
	 */
	LauncherBuild build() throws UnavailableException {
		return LauncherBuild.of(this.platform);
	}

	/**
	 * Check, before a spawn, that a verified launcher is still the file that was
	 * verified: the same device, inode, size, modification and change times. Renaming
	 * another file over it, or writing it, changes one of them; then it is hashed again,
	 * and refused unless it is still this jar's build.
	 * @param launcher a path that {@link #resolve} returned
	 * @throws UnavailableException if it changed into something else, or cannot be read
	 */
	public void checkUnchanged(Path launcher) throws UnavailableException {
		FileIdentity known = this.identities.get(launcher);
		FileIdentity now = FileIdentity.of(launcher);
		if (now.equals(known)) {
			return;
		}
		String actual = sha256(launcher);
		String expected = build().sha256();
		if (!actual.equals(expected)) {
			throw new UnavailableException("the launcher " + launcher + " changed after it was verified: SHA-256 "
					+ actual + ", expected " + expected + "; something that can write it replaced it");
		}
		this.identities.put(launcher, now);
	}

	/**
	 * Extract the build into the launcher's directory in the work directory: written
	 * under a temporary name there, verified, then renamed over the final name in one
	 * step, so that no other process ever executes a partly written copy. A copy that is
	 * already there is used only if it is {@linkplain #isIntact intact}; otherwise it is
	 * replaced. The private-directory cleanup of {@link PrivateDirectories} touches only
	 * names of its own, never this directory.
	 */
	private static Path extract(Path workDirectory, LauncherBuild build) throws UnavailableException {
		Path directory = launcherDirectory(workDirectory, build);
		Path launcher = directory.resolve(BINARY);
		if (isIntact(launcher, build)) {
			return launcher;
		}
		Path temporary = null;
		try {
			temporary = Files.createTempFile(directory, "." + BINARY + "-", ".tmp",
					PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
			try (InputStream in = LauncherInstallation.class.getResourceAsStream(build.resource());
					OutputStream out = Files.newOutputStream(temporary, StandardOpenOption.WRITE,
							StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.SYNC)) {
				if (in == null) {
					throw new IOException("the jar has no " + build.resource().substring(1));
				}
				in.transferTo(out);
			}
			Files.setPosixFilePermissions(temporary, OWNER_READ_EXECUTE);
			String written = sha256(temporary);
			if (!written.equals(build.sha256())) {
				throw new UnavailableException("the launcher extracted from the jar to " + temporary + " has SHA-256 "
						+ written + ", but launcher.properties records " + build.sha256() + ": the jar is damaged");
			}
			Files.move(temporary, launcher, StandardCopyOption.ATOMIC_MOVE);
			return launcher;
		}
		catch (IOException ex) {
			throw new UnavailableException("cannot extract the launcher to " + launcher + " in the work directory "
					+ workDirectory + " (workDirectory): " + ex + "; " + build.installHint());
		}
		finally {
			if (temporary != null) {
				try {
					Files.deleteIfExists(temporary);
				}
				catch (IOException ex) {
					// the next extraction writes another temporary file
				}
			}
		}
	}

	/**
	 * The directory of the build's copy in this user's home in the work directory,
	 * created owner-only unless it is there.
	 */
	private static Path launcherDirectory(Path workDirectory, LauncherBuild build) throws UnavailableException {
		try {
			Path home = PrivateHome.of(workDirectory);
			Path directory = home.resolve("launcher-" + build.sha256().substring(0, 16));
			try {
				Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
			}
			catch (FileAlreadyExistsException ex) {
				// checked below, like a new one
			}
			if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
				throw new IOException(directory + " is not a directory");
			}
			return directory;
		}
		catch (IOException ex) {
			throw new UnavailableException("cannot create the launcher's directory in the work directory "
					+ workDirectory + " (workDirectory): " + ex.getMessage() + "; " + build.installHint());
		}
	}

	/**
	 * Whether an extracted copy is there, a regular file of mode r-x------ with the
	 * build's SHA-256.
	 */
	private static boolean isIntact(Path launcher, LauncherBuild build) {
		try {
			return Files.isRegularFile(launcher, LinkOption.NOFOLLOW_LINKS)
					&& Files.getPosixFilePermissions(launcher, LinkOption.NOFOLLOW_LINKS).equals(OWNER_READ_EXECUTE)
					&& sha256(launcher).equals(build.sha256());
		}
		catch (IOException | UnavailableException ex) {
			return false;
		}
	}

	/**
	 * Return a field of {@code /proc/self/mountinfo} with its octal escapes ({@code \040}
	 * for a space, proc(5)) undone.
	 * @param field the field
	 * @return the text
	 */
	public static String unescape(String field) {
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < field.length(); i++) {
			char c = field.charAt(i);
			if (c == '\\' && i + 3 < field.length()) {
				text.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
				i += 3;
			}
			else {
				text.append(c);
			}
		}
		return text.toString();
	}

	/**
	 * Return the SHA-256 of a file.
	 * @param file the file
	 * @return the digest, 64 lower-case hexadecimal digits
	 * @throws UnavailableException if the file cannot be read
	 */
	public static String sha256(Path file) throws UnavailableException {
		try (InputStream in = Files.newInputStream(file)) {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			byte[] buffer = new byte[64 * 1024];
			for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
				digest.update(buffer, 0, read);
			}
			return HexFormat.of().formatHex(digest.digest());
		}
		catch (IOException ex) {
			throw new UnavailableException("cannot read " + file + " to compute its SHA-256: " + ex);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("every Java platform has SHA-256", ex);
		}
	}

	private static String realPath(Path directory) {
		try {
			return directory.toRealPath().toString();
		}
		catch (IOException ex) {
			return directory.toAbsolutePath().normalize().toString();
		}
	}

	/**
	 * The launcher is not available; the message says which check failed.
	 */
	public static final class UnavailableException extends Exception {

		private static final long serialVersionUID = 1L;

		UnavailableException(String detail) {
			super(detail);
		}

	}

}
