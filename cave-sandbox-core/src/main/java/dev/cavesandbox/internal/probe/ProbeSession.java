package dev.cavesandbox.internal.probe;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import dev.cavesandbox.internal.workspace.WorkDirectoryCheck;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
import org.jspecify.annotations.Nullable;

/**
 * What the probe of every platform shares: the check that a mechanism's binaries exist, a
 * working directory created where production ones are (holding a marker file that the
 * child reads), and running a mechanism's command line there the way an execution does,
 * with a fixed {@code PATH} and the probe timeout. Closing the session stops what still
 * runs and deletes the directory.
 * <p>
 * The working directory ({@value #WORKING_DIRECTORY}) and the names beside it (the
 * planted file, the shared-memory directory, the target of the write outside) lie in a
 * directory of the session's own, created new with a random name in the work directory,
 * mode 0700: no other user of a shared work directory ({@code /tmp}) can take one of
 * those names first or put an entry in them while the probe runs. For a command user of
 * the seccomp mechanism (a uid of the host without capabilities) that directory is handed
 * to the command's uid for the run, so that only the sandbox, never the file modes, keeps
 * the command from writing beside its working directory.
 */
public final class ProbeSession implements AutoCloseable {

	/** The name of the working directory in the session's own directory. */
	static final String WORKING_DIRECTORY = "work";

	/** The file in the probe's working directory that the child reads. */
	static final String MARKER_FILE = "cave-sandbox-probe-marker";

	/** The content of {@link #MARKER_FILE}. */
	static final String MARKER = "cave-sandbox-probe";

	/** The file that the Linux probe's child writes in its working directory. */
	static final String WRITE_FILE = "cave-sandbox-probe-write";

	/**
	 * The variable that gives the Linux probe's child the JVM's pid, so that it can try
	 * to reach the JVM's memory, environment and signals ({@code probe.sh} reads it by
	 * this name).
	 */
	static final String JVM_VARIABLE = "CAVE_SANDBOX_PROBE_JVM";

	/**
	 * The variable that gives the child the absolute path of its working directory, which
	 * a command user of the seccomp mechanism must reach by that path ({@code TMPDIR};
	 * {@code probe.sh} reads it by this name).
	 */
	static final String DIRECTORY_VARIABLE = "CAVE_SANDBOX_PROBE_DIRECTORY";

	/**
	 * The suffix of the file that the Linux probe's child tries to write beside its
	 * working directory (a write outside it); the session deletes it.
	 */
	static final String OUTSIDE_SUFFIX = ".outside";

	/**
	 * The suffix of the file that the probe plants beside its working directory, readable
	 * by everyone, which the command must not be able to read in a system view.
	 */
	static final String PLANTED_SUFFIX = ".planted";

	/**
	 * The suffix of the directory beside the working directory that stands in for an
	 * execution's shared-memory directory on the mechanisms without a mount namespace;
	 * the session deletes it.
	 */
	static final String SHARED_MEMORY_SUFFIX = ".shm";

	private static final int OUTPUT_LIMIT = 64 * 1024;

	private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY = PosixFilePermissions
		.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

	private final SandboxSettings settings;

	/**
	 * The session's own directory, which holds the working directory and its siblings.
	 */
	private final Path own;

	/** The session's own directory, open, through which it is handed over. */
	private final SecureDirectoryStream<Path> opened;

	/** Its owner, the JVM's user, given back after a run that handed it over. */
	private final UserPrincipal owner;

	private final Path directory;

	private final long start;

	private final ProcessRunner runner;

	private @Nullable Path preload;

	/** The shared-memory directory this session created, once it has. */
	private @Nullable Path createdSharedMemory;

	private ProbeSession(SandboxSettings settings, Path own, SecureDirectoryStream<Path> opened, UserPrincipal owner,
			long start) {
		this.settings = settings;
		this.own = own;
		this.opened = opened;
		this.owner = owner;
		this.directory = own.resolve(WORKING_DIRECTORY);
		this.start = start;
		this.runner = new ProcessRunner(settings.killGracePeriod());
	}

	/**
	 * Check that every binary of a mechanism exists and is executable.
	 * @param mechanism the mechanism
	 * @param start when the platform's probe started ({@link System#nanoTime()})
	 * @return the verdict that names the first binary missing or not executable, or
	 * {@code null} when all are there
	 */
	static @Nullable IsolationCapability missingBinary(SandboxMechanism mechanism, long start) {
		for (Path binary : mechanism.binaries()) {
			if (!Files.exists(binary)) {
				return IsolationCapability.unavailable(UnavailabilityCause.BINARY_MISSING,
						mechanism.name() + ": " + binary + " does not exist", since(start));
			}
			if (Files.isDirectory(binary) || !Files.isExecutable(binary)) {
				return IsolationCapability.unavailable(UnavailabilityCause.BINARY_NOT_EXECUTABLE,
						mechanism.name() + ": " + binary + " is not executable", since(start));
			}
		}
		return null;
	}

	/**
	 * Run a platform's checks in a new session, then close it.
	 * @param settings the settings that name the work directory, the probe timeout and
	 * the kill grace period
	 * @param start when the platform's probe started ({@link System#nanoTime()})
	 * @param checks the checks, which return the verdict
	 * @return the verdict of the checks;
	 * {@link UnavailabilityCause#WORK_DIRECTORY_UNUSABLE} if the working directory could
	 * not be created, or the cause that a wrapper's launch failure names
	 * @throws InterruptedException if the thread was interrupted while a command ran
	 */
	static IsolationCapability verify(SandboxSettings settings, long start, Checks checks) throws InterruptedException {
		Path own = null;
		SecureDirectoryStream<Path> opened = null;
		UserPrincipal owner;
		try {
			own = Files.createTempDirectory(settings.workDirectory(), "cave-sandbox-probe-").toRealPath();
			opened = open(own);
			owner = attributes(opened).getOwner();
			Path directory = Files.createDirectory(own.resolve(WORKING_DIRECTORY), OWNER_ONLY);
			Files.writeString(directory.resolve(MARKER_FILE), MARKER);
			Path planted = Files.writeString(own.resolve(WORKING_DIRECTORY + PLANTED_SUFFIX), MARKER,
					StandardOpenOption.CREATE_NEW);
			Files.getFileAttributeView(planted, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.setPermissions(PosixFilePermissions.fromString("rw-r--r--"));
		}
		catch (IOException ex) {
			if (own != null) {
				// a full file system can take the directory but not the marker
				close(opened);
				DirectoryTrees.delete(own);
			}
			return IsolationCapability.unavailable(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE,
					"could not create the probe's working directory: "
							+ WorkDirectoryCheck.explain(settings.workDirectory(), ex),
					since(start));
		}
		try (ProbeSession session = new ProbeSession(settings, own, opened, owner, start)) {
			return checks.run(session);
		}
		catch (IOException ex) {
			return WrapperFailureClassifier.launchFailure(ex, since(start));
		}
	}

	/**
	 * Run a mechanism's command line in the probe's working directory.
	 * @param mechanism the mechanism that builds the command line
	 * @param argv the command to run inside
	 * @param loopback whether to ask for a private loopback
	 * @param check whether the launcher reports its refusals before the command runs
	 * @return what the wrapper and the command produced
	 * @throws IOException if the wrapper could not be started
	 * @throws InterruptedException if the thread was interrupted while it ran
	 */
	ProcessRunner.Outcome run(SandboxMechanism mechanism, List<String> argv, boolean loopback, boolean check)
			throws IOException, InterruptedException {
		Map<String, String> environment = new HashMap<>(Map.of("PATH", SandboxSettings.BASELINE_PATH, JVM_VARIABLE,
				String.valueOf(ProcessHandle.current().pid()), DIRECTORY_VARIABLE, this.directory.toString()));
		Path sharedMemory = sharedMemory(mechanism);
		SandboxMechanism effective = mechanism;
		if (sharedMemory != null && this.preload != null) {
			environment.put(SharedMemoryPreload.LAUNCHER_VARIABLE, this.preload.toString());
			environment.put(SharedMemoryPreload.DIRECTORY_VARIABLE, sharedMemory.toString());
			effective = mechanism.withPaths(List.of(this.preload), List.of(sharedMemory));
		}
		ProcessRunner.Spec spec = new ProcessRunner.Spec(
				effective.commandLine(argv, this.directory, loopback, check, this.settings.limits()), this.directory,
				environment, null, this.settings.probeTimeout(), OUTPUT_LIMIT, null, null, true);
		// What an earlier run wrote may be another uid's (a command user's), which a
		// later run without capabilities could not write again.
		Files.deleteIfExists(this.directory.resolve(WRITE_FILE));
		long group = (mechanism instanceof SeccompMechanism seccomp) ? seccomp.commandGroup() : Launcher.CALLER;
		if (group < 0) {
			return this.runner.run(spec);
		}
		// As an execution's: the command user of this mechanism has no capability.
		handOwnDirectory(((SeccompMechanism) mechanism).launcher().commandUser());
		try (WorkingDirectoryGrant grant = WorkingDirectoryGrant.grant(this.directory, group);
				WorkingDirectoryGrant shared = (sharedMemory != null) ? WorkingDirectoryGrant.grant(sharedMemory, group)
						: null) {
			return this.runner.run(spec);
		}
		finally {
			attributes(this.opened).setOwner(this.owner);
		}
	}

	/**
	 * Hand the session's own directory to the command's uid (through its descriptor,
	 * {@code fchown}), so that the command passes it and could write beside its working
	 * directory but for the sandbox; no one else gets in (mode 0700).
	 */
	private void handOwnDirectory(long uid) throws IOException {
		attributes(this.opened).setOwner(
				FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(String.valueOf(uid)));
	}

	/**
	 * Give the command, as an execution's on a mechanism without a mount namespace, the
	 * shared-memory library (see {@link SharedMemoryPreload}) and a directory for its
	 * objects, so that the probe sees both work and {@code /dev/shm} stays refused.
	 * @param library the library, extracted
	 */
	void preload(Path library) {
		this.preload = library;
	}

	private @Nullable Path sharedMemory(SandboxMechanism mechanism) throws IOException {
		if (this.preload == null || !SharedMemoryPreload.neededBy(mechanism)) {
			return null;
		}
		Path sharedMemory = this.own.resolve(WORKING_DIRECTORY + SHARED_MEMORY_SUFFIX);
		long group = (mechanism instanceof SeccompMechanism seccomp) ? seccomp.commandGroup() : Launcher.CALLER;
		// the session's own directory is handed to the command's uid for the run
		if (group >= 0 && (WorkingDirectoryGrant.unpassableAncestor(this.own, group) != null
				|| WorkingDirectoryGrant.unpassableAncestor(this.preload, group) != null)) {
			// A work directory the command user cannot pass: the probe runs again without
			// the command user (LinuxProbe), and there the command gets both.
			return null;
		}
		if (this.createdSharedMemory == null) {
			// Created here, never taken over.
			Files.createDirectory(sharedMemory, OWNER_ONLY);
			this.createdSharedMemory = sharedMemory;
		}
		return sharedMemory;
	}

	/**
	 * Return how long the platform's probe has taken so far.
	 * @return the time since it started
	 */
	Duration took() {
		return since(this.start);
	}

	@Override
	public void close() {
		this.runner.close();
		close(this.opened);
		DirectoryTrees.delete(this.own);
	}

	private static void close(@Nullable Closeable closeable) {
		try {
			if (closeable != null) {
				closeable.close();
			}
		}
		catch (IOException ex) {
			// closing a directory's descriptor frees it whatever close reports
		}
	}

	/** Open a directory that this session created, not through a link. */
	private static SecureDirectoryStream<Path> open(Path directory) throws IOException {
		try (DirectoryStream<Path> parent = Files.newDirectoryStream(directory.getParent())) {
			if (!(parent instanceof SecureDirectoryStream<Path> secure)) {
				throw new IOException("cannot open " + directory + " without following links on this platform");
			}
			return secure.newDirectoryStream(directory.getFileName(), LinkOption.NOFOLLOW_LINKS);
		}
	}

	private static PosixFileAttributeView attributes(SecureDirectoryStream<Path> opened) {
		return opened.getFileAttributeView(PosixFileAttributeView.class);
	}

	static IsolationCapability notVerified(String detail, Duration took) {
		return IsolationCapability.unavailable(UnavailabilityCause.NOT_VERIFIED, detail, took);
	}

	static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	public static Duration since(long start) {
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/**
	 * A platform's checks, run in a session.
	 */
	@FunctionalInterface
	interface Checks {

		IsolationCapability run(ProbeSession session) throws IOException, InterruptedException;

	}

}
