package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileStore;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import org.jspecify.annotations.Nullable;

/**
 * Finds why a work directory ({@link SandboxSettings#workDirectory()}) cannot hold the
 * private directories of the probe and of executions, before any wrapper runs: it is
 * missing, not a directory, not writable, on a read-only file system, out of space, out
 * of inodes, or mounted {@code noexec} while the launcher is extracted to it and executed
 * from it. It tries for real: it creates a directory with a small file in it there and
 * deletes both again. The same classification explains a failure that happened later, at
 * run time ({@link #reason(Path, IOException)}).
 * <p>
 * A full file system and one without free inodes both fail with ENOSPC; they are told
 * apart by the usable space that is left. The mount (from {@code /proc/self/mountinfo},
 * the longest mount point that holds the directory's real path) tells a read-only or
 * {@code noexec} file system, also where the JDK's error text is not the English one.
 */
public final class WorkDirectoryCheck {

	private static final String TRIAL_PREFIX = "cave-sandbox-check-";

	private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

	private WorkDirectoryCheck() {
	}

	/**
	 * Why a work directory is unusable.
	 */
	enum Reason {

		/** It does not exist. */
		MISSING("does not exist"),

		/** It exists but is not a directory. */
		NOT_A_DIRECTORY("is not a directory"),

		/** The JVM's user may not create anything in it. */
		NOT_WRITABLE(
				"is not writable for the user that runs the JVM (EACCES, or a file system such as proc that holds no files)"),

		/** Its file system is mounted read-only. */
		READ_ONLY("is on a read-only file system (EROFS)"),

		/** Its file system has no space left. */
		NO_SPACE("has no space left (ENOSPC, no usable space)"),

		/** Its file system has space left but no inodes. */
		NO_INODES("has no inodes left (ENOSPC while space is left)"),

		/** The launcher would be extracted to a {@code noexec} file system. */
		NOEXEC("is mounted noexec, and the launcher is extracted to it and executed from it (launcherPath is not set)");

		private final String text;

		Reason(String text) {
			this.text = text;
		}

		/**
		 * Return what is wrong with the directory, as a predicate of a sentence.
		 * @return the text
		 */
		String text() {
			return this.text;
		}

	}

	/**
	 * Check a work directory the way the probe and the executions will use it.
	 * @param settings the settings that name the work directory and the launcher
	 * @return the detail that names the directory and its problem, or {@code null} when
	 * it is usable
	 */
	public static @Nullable String problem(SandboxSettings settings) {
		Path directory = settings.workDirectory();
		if (!Files.exists(directory)) {
			return detail(directory, Reason.MISSING, null, null);
		}
		if (!Files.isDirectory(directory)) {
			return detail(directory, Reason.NOT_A_DIRECTORY, null, null);
		}
		Path real;
		try {
			real = directory.toRealPath();
		}
		catch (IOException ex) {
			return explain(directory, ex);
		}
		Mount mount = mount(real);
		if (mount != null && mount.readOnly()) {
			return detail(directory, Reason.READ_ONLY, mount, null);
		}
		try {
			trial(real);
		}
		catch (IOException ex) {
			return explain(directory, ex);
		}
		if (settings.linux().launcherPath() == null && mount != null && mount.noexec()) {
			return detail(directory, Reason.NOEXEC, mount, null);
		}
		return null;
	}

	/**
	 * Explain a failure to create something in a work directory.
	 * @param workDirectory the work directory
	 * @param failure the failure
	 * @return the detail that names the directory and its problem, or what the failure
	 * said where it is none of the known ones
	 */
	public static String explain(Path workDirectory, IOException failure) {
		Reason reason = reason(workDirectory, failure);
		if (reason == null) {
			return "the work directory " + workDirectory + " (workDirectory) cannot be written: " + message(failure);
		}
		return detail(workDirectory, reason, mount(realPath(workDirectory)), failure);
	}

	/**
	 * Classify a failure to create something in a work directory.
	 * @param workDirectory the work directory
	 * @param failure the failure
	 * @return why the directory is unusable, or {@code null} if the failure is not one of
	 * the known reasons (for example a home of private directories that was refused)
	 */
	static @Nullable Reason reason(Path workDirectory, IOException failure) {
		if (!Files.exists(workDirectory)) {
			return Reason.MISSING;
		}
		if (!Files.isDirectory(workDirectory)) {
			return Reason.NOT_A_DIRECTORY;
		}
		String text = message(failure);
		Mount mount = mount(realPath(workDirectory));
		if (text.contains("Read-only file system") || (mount != null && mount.readOnly())) {
			return Reason.READ_ONLY;
		}
		if (text.contains("No space left on device")) {
			return (usableSpace(workDirectory) > 0) ? Reason.NO_INODES : Reason.NO_SPACE;
		}
		if (failure instanceof AccessDeniedException || text.contains("Permission denied")) {
			return Reason.NOT_WRITABLE;
		}
		// A file system without any block (proc, sysfs) holds no file at all: it is not
		// full, it is not writable.
		if (totalSpace(workDirectory) == 0) {
			return Reason.NOT_WRITABLE;
		}
		// A missing entry below an existing work directory (its home removed by a
		// cleaner of /tmp, say) is not the work directory's problem.
		return (usableSpace(workDirectory) == 0) ? Reason.NO_SPACE : null;
	}

	/**
	 * The cheap check before each execution: whether the home of the private directories
	 * is still writable and its file system has space left. A directory can still be
	 * created on a full tmpfs (it takes no block), but the command could write nothing in
	 * it.
	 * @param workDirectory the work directory
	 * @param home this user's home of the private directories in it
	 * @param store the file store of the home, or {@code null} if unknown
	 * @return why the work directory is unusable, or {@code null} if it looks usable
	 */
	static @Nullable Reason beforeExecution(Path workDirectory, Path home, @Nullable FileStore store) {
		if (!Files.isWritable(home)) {
			if (!Files.exists(workDirectory)) {
				return Reason.MISSING;
			}
			if (!Files.exists(home)) {
				return null; // creating the directory fails and says so
			}
			Mount mount = mount(realPath(workDirectory));
			return (mount != null && mount.readOnly()) ? Reason.READ_ONLY : Reason.NOT_WRITABLE;
		}
		try {
			return (store != null && store.getUsableSpace() == 0) ? Reason.NO_SPACE : null;
		}
		catch (IOException ex) {
			return null;
		}
	}

	/**
	 * Describe a work directory's problem.
	 * @param workDirectory the work directory
	 * @param reason its problem
	 * @return the detail that names the directory and its problem
	 */
	static String describe(Path workDirectory, Reason reason) {
		return detail(workDirectory, reason, mount(realPath(workDirectory)), null);
	}

	/**
	 * Create a directory with a one-byte file in it, and delete both again.
	 */
	private static void trial(Path directory) throws IOException {
		Path trial = Files.createTempDirectory(directory, TRIAL_PREFIX);
		try {
			Files.write(trial.resolve("file"), new byte[] { 1 });
		}
		finally {
			Files.deleteIfExists(trial.resolve("file"));
			Files.deleteIfExists(trial);
		}
	}

	private static String detail(Path directory, Reason reason, @Nullable Mount mount, @Nullable IOException failure) {
		StringBuilder detail = new StringBuilder("the work directory ").append(directory)
			.append(" (workDirectory) ")
			.append(reason.text());
		if (mount != null && (reason == Reason.READ_ONLY || reason == Reason.NOEXEC)) {
			detail.append("; its mount ").append(mount.point()).append(" has the options ").append(mount.options());
		}
		if (reason == Reason.NO_INODES) {
			detail.append("; ").append(usableSpace(directory)).append(" bytes are free");
		}
		if (failure != null) {
			detail.append(": ").append(message(failure));
		}
		return detail.toString();
	}

	private static String message(IOException failure) {
		if (failure instanceof FileSystemException fileSystem && fileSystem.getReason() != null) {
			return fileSystem.getFile() + ": " + fileSystem.getReason();
		}
		return String.valueOf(failure.getMessage());
	}

	private static long totalSpace(Path directory) {
		try {
			return Files.getFileStore(directory).getTotalSpace();
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

	private static long usableSpace(Path directory) {
		try {
			return Files.getFileStore(directory).getUsableSpace();
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

	private static Path realPath(Path directory) {
		try {
			return directory.toRealPath();
		}
		catch (IOException ex) {
			return directory.toAbsolutePath().normalize();
		}
	}

	/**
	 * Return the mount that holds a path: the one with the longest mount point that is a
	 * prefix of it; of several on the same point, the last (it covers the others).
	 * @param real a real path
	 * @return the mount, or {@code null} where {@code /proc/self/mountinfo} cannot be
	 * read
	 */
	static @Nullable Mount mount(Path real) {
		List<String> lines;
		try {
			lines = Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8);
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
		Mount found = null;
		for (String line : lines) {
			String[] fields = line.split(" ");
			int separator = List.of(fields).indexOf("-");
			if (fields.length < 6 || separator < 6 || fields.length < separator + 4) {
				continue;
			}
			Path point = Path.of(LauncherInstallation.unescape(fields[4]));
			if (real.startsWith(point) && (found == null || point.startsWith(found.point()))) {
				found = new Mount(point, fields[5], fields[separator + 3]);
			}
		}
		return found;
	}

	/**
	 * A mount from {@code /proc/self/mountinfo}.
	 *
	 * @param point its mount point
	 * @param options the options of the mount ({@code ro}, {@code noexec}, ...)
	 * @param superOptions the options of its file system ({@code ro} after a remount)
	 */
	record Mount(Path point, String options, String superOptions) {

		boolean readOnly() {
			return List.of(this.options.split(",")).contains("ro")
					|| List.of(this.superOptions.split(",")).contains("ro");
		}

		boolean noexec() {
			return List.of(this.options.split(",")).contains("noexec");
		}

	}

}
