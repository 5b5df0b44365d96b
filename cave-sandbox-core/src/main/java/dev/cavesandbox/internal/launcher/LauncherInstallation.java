package dev.cavesandbox.internal.launcher;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.PrivateHome;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
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
import java.time.Duration;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Where cave-sandbox's native launcher ({@code cave-sandbox-launcher}) is, verified. The
 * build puts the launcher for its architecture into the jar under
 * {@code dev/cavesandbox/launcher/linux-<arch>/}, with {@code launcher.properties} beside
 * it: its interface version and its SHA-256. Every copy that is used has that SHA-256:
 * <ul>
 * <li>with {@link SandboxSettings.Linux#launcherPath()} set, that file: it must exist, be
 * a regular file and executable, and have the recorded SHA-256;</li>
 * <li>otherwise a copy extracted into this user's home in the work directory
 * ({@link PrivateHome#of(Path)}, owner-only), as
 * {@code launcher-<first 16 hex digits of the SHA-256>/cave-sandbox-launcher}, mode
 * {@code r-x------}: written under a temporary name in that directory, verified, then
 * renamed over the final name in one step, so that no other process ever executes a
 * partly written copy. A copy that is already there is used only if its SHA-256 is the
 * recorded one; otherwise it is replaced. The private-directory cleanup of
 * {@link PrivateDirectories} touches only names of its own, never this directory.</li>
 * </ul>
 * Then the launcher must answer {@code --version} with {@code cave-sandbox-launcher
 * <version>}: this is where a work directory on a {@code noexec} mount shows up (the
 * kernel refuses the execution with EACCES). A verified path is remembered per launcher
 * path or work directory for the life of the instance, so the SHA-256 is computed once,
 * not per execution; {@link #shared()} is the instance of the whole JVM.
 */
public final class LauncherInstallation {

	static final String RESOURCE_ROOT = "/dev/cavesandbox/launcher/";

	public static final String BINARY = "cave-sandbox-launcher";

	static final String PROPERTIES = "launcher.properties";

	private static final LauncherInstallation SHARED = new LauncherInstallation();

	private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

	private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	private static final Set<PosixFilePermission> OWNER_READ_EXECUTE = PosixFilePermissions.fromString("r-x------");

	private static final Set<PosixFilePermission> ANY_EXECUTE = EnumSet.of(PosixFilePermission.OWNER_EXECUTE,
			PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);

	/** How often an execution refused with ETXTBSY is tried again. */
	private static final int TEXT_BUSY_ATTEMPTS = 5;

	private final String platform;

	/** The verified launcher per launcher path or work directory. */
	private final Map<String, Path> verified = new ConcurrentHashMap<>();

	/** What each verified copy was when it was verified, checked before each spawn. */
	private final Map<Path, Identity> identities = new ConcurrentHashMap<>();

	/**
	 * Create an installation for this JVM's architecture that remembers only what it
	 * verified itself (tests); production code uses {@link #shared()}.
	 */
	public LauncherInstallation() {
		this(platform(System.getProperty("os.arch", "")));
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
	 * Return the directory of the launcher's build in the jar for a Java {@code os.arch}.
	 * @param osArch the architecture as Java names it
	 * @return {@code linux-x86_64}, {@code linux-aarch64}, or {@code linux-<osArch>} for
	 * an architecture without a build
	 */
	static String platform(String osArch) {
		return switch (osArch) {
			case "amd64", "x86_64" -> "linux-x86_64";
			case "aarch64", "arm64" -> "linux-aarch64";
			default -> "linux-" + osArch;
		};
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
			Build build = build();
			Path launcher = (configured != null) ? checkConfigured(configured, build)
					: extract(settings.workDirectory(), build);
			checkExecutes(launcher, build, configured != null, settings.probeTimeout());
			this.identities.put(launcher, identity(launcher));
			this.verified.put(key, launcher);
			return launcher;
		}
	}

	/**
	 * Return the launcher's build for this platform, as recorded in the jar.
	 * @return the build
	 * @throws UnavailableException if the jar has none
	 */
	Build build() throws UnavailableException {
		String directory = RESOURCE_ROOT + this.platform + "/";
		Properties properties = new Properties();
		try (InputStream in = LauncherInstallation.class.getResourceAsStream(directory + PROPERTIES)) {
			if (in == null || LauncherInstallation.class.getResource(directory + BINARY) == null) {
				throw new UnavailableException("no build of the launcher for architecture " + this.platform
						+ " (os.arch " + System.getProperty("os.arch") + "): the jar has no " + directory.substring(1)
						+ BINARY + "; build cave-sandbox-core on that architecture");
			}
			properties.load(in);
		}
		catch (IOException ex) {
			throw new UnavailableException(
					"cannot read " + directory.substring(1) + PROPERTIES + " from the jar: " + ex);
		}
		String version = properties.getProperty("version", "");
		String sha256 = properties.getProperty("sha256", "");
		if (version.isBlank() || !SHA256.matcher(sha256).matches()) {
			throw new UnavailableException(directory.substring(1) + PROPERTIES
					+ " in the jar records no version or no SHA-256 of the launcher: " + properties);
		}
		return new Build(this.platform, version, sha256, directory + BINARY);
	}

	private static Path checkConfigured(Path launcher, Build build) throws UnavailableException {
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
			Path noexec = noexecMount(launcher);
			if (noexec != null) {
				throw new UnavailableException(noexec(launcher, noexec, build, true));
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
		String actual = sha256(real);
		if (!actual.equals(build.sha256())) {
			throw new UnavailableException("launcherPath " + launcher + ": SHA-256 mismatch: expected " + build.sha256()
					+ " (this jar's " + build.platform() + " build), got " + actual);
		}
		// The real path is what runs: a symbolic link on the way, swapped after this
		// check, changes nothing.
		return real;
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
		Identity known = this.identities.get(launcher);
		Identity now = identity(launcher);
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

	private static Identity identity(Path launcher) throws UnavailableException {
		try {
			Map<String, Object> attributes = Files.readAttributes(launcher, "unix:dev,ino,size,lastModifiedTime,ctime",
					LinkOption.NOFOLLOW_LINKS);
			return new Identity(String.valueOf(attributes.get("dev")), String.valueOf(attributes.get("ino")),
					String.valueOf(attributes.get("size")), String.valueOf(attributes.get("lastModifiedTime")),
					String.valueOf(attributes.get("ctime")));
		}
		catch (IOException | UnsupportedOperationException ex) {
			throw new UnavailableException("cannot read the launcher " + launcher + ": " + ex);
		}
	}

	/** A file's identity as far as replacing or writing it goes. */
	private record Identity(String device, String inode, String size, String modified, String changed) {
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

	private static Path extract(Path workDirectory, Build build) throws UnavailableException {
		Path directory;
		try {
			Path home = PrivateHome.of(workDirectory);
			directory = home.resolve("launcher-" + build.sha256().substring(0, 16));
			try {
				Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
			}
			catch (FileAlreadyExistsException ex) {
				// checked below, like a new one
			}
			if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
				throw new IOException(directory + " is not a directory");
			}
		}
		catch (IOException ex) {
			throw new UnavailableException("cannot create the launcher's directory in the work directory "
					+ workDirectory + " (workDirectory): " + ex.getMessage() + "; " + installHint(build));
		}
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
					+ workDirectory + " (workDirectory): " + ex + "; " + installHint(build));
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
	 * Whether an extracted copy is there, a regular file of mode r-x------ with the
	 * build's SHA-256.
	 */
	private static boolean isIntact(Path launcher, Build build) {
		try {
			return Files.isRegularFile(launcher, LinkOption.NOFOLLOW_LINKS)
					&& Files.getPosixFilePermissions(launcher, LinkOption.NOFOLLOW_LINKS).equals(OWNER_READ_EXECUTE)
					&& sha256(launcher).equals(build.sha256());
		}
		catch (IOException | UnavailableException ex) {
			return false;
		}
	}

	private static void checkExecutes(Path launcher, Build build, boolean configured, Duration timeout)
			throws UnavailableException {
		String expected = BINARY + " " + build.version();
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
						+ " cannot be executed: " + message + refused + (configured ? "" : "; " + installHint(build)));
			}
		}
		Process started = process;
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

	private static void pause() {
		try {
			Thread.sleep(20);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static String noexec(Path launcher, Path mount, Build build, boolean configured) {
		return (configured ? "launcherPath " : "the launcher ") + launcher + " cannot be executed: its filesystem "
				+ mount + " is mounted noexec (EACCES); " + (configured
						? "point launcherPath at a copy on a filesystem that allows execution" : installHint(build));
	}

	private static String installHint(Build build) {
		return "point launcherPath at an executable copy of the launcher on a filesystem that allows execution "
				+ "(copied from the jar's " + build.resource().substring(1) + "), with SHA-256 " + build.sha256()
				+ ", or choose a work directory (workDirectory) that is writable and allows execution";
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
			Path point = Path.of(unescape(fields[4]));
			// A later mount on the same or a deeper point covers the earlier ones.
			if (real.startsWith(point) && (mountPoint == null || point.startsWith(mountPoint))) {
				mountPoint = point;
				noexec = List.of(fields[5].split(",")).contains("noexec");
			}
		}
		return noexec ? mountPoint : null;
	}

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
	 * The launcher's build in the jar.
	 *
	 * @param platform its directory, for example {@code linux-x86_64}
	 * @param version its interface version, what it prints for {@code --version} after
	 * its name
	 * @param sha256 its SHA-256 recorded at build time
	 * @param resource the class-path resource of the binary
	 */
	record Build(String platform, String version, String sha256, String resource) {

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
