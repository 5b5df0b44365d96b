package dev.cavesandbox.internal.probe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.UnavailabilityCause;
import dev.cavesandbox.internal.launcher.HandoverFrame;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.mechanism.SeccompMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.process.ReadyMarker;
import dev.cavesandbox.internal.process.WrapperFailureClassifier;
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
 * planted file, the shared-memory directory, the directory of the write outside) lie in a
 * directory of the session's own ({@link ProbeDirectory}: created new with a random name
 * in the work directory, mode 0700, reached by the JVM only through its open descriptor):
 * no other user of a shared work directory ({@code /tmp}) can take one of those names
 * first or put an entry in them while the probe runs. The session's directory stays the
 * JVM user's. For a command user of the seccomp mechanism (a uid of the host without
 * capabilities) it is 0701 during the run (passed by path, as the executor's home); the
 * working directory, its marker and the shared-memory directory are handed to the
 * command's uid (mode 0700: not to its group, gid 65534, which the host's {@code nobody}
 * shares); and so is the directory of the write outside ({@value #OUTSIDE_SUFFIX}, mode
 * 0300: write and search, no listing), so that only the sandbox, never the file modes,
 * keeps the command from creating a file there; after each run all of them are the JVM
 * user's again, mode 0700 for the directory of the write outside, and the session notes a
 * file found in it ({@link #writtenOutside()}). A process of the command's uid outside
 * the sandbox cannot change the session's directory or move an entry out of it, and can
 * change no mode that the probe's verdict relies on; what it moves into an entry of its
 * own during the run the session deletes ({@link ProbeDirectory#close()}).
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
	 * The suffix of the directory beside the working directory in which the Linux probe's
	 * child tries to create a file under a name it picks at random (a write outside the
	 * working directory); for a command user of the seccomp mechanism its group may write
	 * it, so that only the sandbox refuses.
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

	/** What the child says when its write beside the working directory was refused. */
	private static final String REFUSED_OUTSIDE = "outside_write=refused";

	private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY = PosixFilePermissions
		.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

	private final SandboxSettings settings;

	/** The session's own directory, open, which holds the working directory. */
	private final ProbeDirectory own;

	private final Path directory;

	/**
	 * The working directory's {@code DEVICE:INODE}, as {@code stat -c %d:%i} prints it.
	 */
	private final String identity;

	private final long start;

	private final ProcessRunner runner;

	private @Nullable Path preload;

	/** Whether this session created the shared-memory directory. */
	private boolean createdSharedMemory;

	/** A file found in the directory of the write outside after a run, or null. */
	private @Nullable Path writtenOutside;

	private ProbeSession(SandboxSettings settings, ProbeDirectory own, String identity, long start) {
		this.settings = settings;
		this.own = own;
		this.identity = identity;
		this.directory = own.path().resolve(WORKING_DIRECTORY);
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
		ProbeDirectory own;
		try {
			own = ProbeDirectory.create(settings.workDirectory());
		}
		catch (ProbeDirectory.ReplacedException ex) {
			return notVerified(ex.getMessage(), since(start));
		}
		catch (IOException ex) {
			return unusable(settings, ex, start);
		}
		String identity;
		try {
			Path through = own.through();
			Path directory = Files.createDirectory(through.resolve(WORKING_DIRECTORY), OWNER_ONLY);
			Map<String, Object> key = Files.readAttributes(directory, "unix:dev,ino", LinkOption.NOFOLLOW_LINKS);
			identity = key.get("dev") + ":" + key.get("ino");
			Files.writeString(directory.resolve(MARKER_FILE), MARKER, StandardOpenOption.CREATE_NEW);
			Path planted = Files.writeString(through.resolve(WORKING_DIRECTORY + PLANTED_SUFFIX), MARKER,
					StandardOpenOption.CREATE_NEW);
			Files.getFileAttributeView(planted, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
				.setPermissions(PosixFilePermissions.fromString("rw-r--r--"));
			Files.createDirectory(through.resolve(WORKING_DIRECTORY + OUTSIDE_SUFFIX), OWNER_ONLY);
		}
		catch (IOException ex) {
			// a full file system can take the directory but not the marker
			own.close();
			return unusable(settings, ex, start);
		}
		try (ProbeSession session = new ProbeSession(settings, own, identity, start)) {
			return checks.run(session);
		}
		catch (ProbeDirectory.ReplacedException ex) {
			return notVerified(ex.getMessage(), since(start));
		}
		catch (IOException ex) {
			return WrapperFailureClassifier.launchFailure(ex, since(start));
		}
	}

	private static IsolationCapability unusable(SandboxSettings settings, IOException ex, long start) {
		return IsolationCapability.unavailable(UnavailabilityCause.WORK_DIRECTORY_UNUSABLE,
				"could not create the probe's working directory: "
						+ WorkDirectoryCheck.explain(settings.workDirectory(), ex),
				since(start));
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
		Map<String, String> environment = new LinkedHashMap<>(
				Map.of("PATH", SandboxSettings.BASELINE_PATH, JVM_VARIABLE,
						String.valueOf(ProcessHandle.current().pid()), DIRECTORY_VARIABLE, this.directory.toString()));
		Path sharedMemory = sharedMemory(mechanism);
		SandboxMechanism effective = mechanism;
		if (sharedMemory != null && this.preload != null) {
			environment.put(SharedMemoryPreload.LAUNCHER_VARIABLE, this.preload.toString());
			environment.put(SharedMemoryPreload.DIRECTORY_VARIABLE, sharedMemory.toString());
			effective = mechanism.withPaths(List.of(this.preload), List.of(sharedMemory));
		}
		// As an execution's: a launcher gets the command in its hand-over frame.
		boolean handover = mechanism.launcher() != null;
		ProcessRunner.Spec spec = new ProcessRunner.Spec(
				effective.commandLine(handover ? Launcher.HANDOVER : argv, this.directory, loopback, check,
						this.settings.limits()),
				this.directory, handover ? Map.of("PATH", SandboxSettings.BASELINE_PATH) : environment, null,
				this.settings.probeTimeout(), OUTPUT_LIMIT, null, null, true);
		byte[] frame = handover ? HandoverFrame.encode(argv, environment) : null;
		// What an earlier run wrote may be another uid's (a command user's), which a
		// later run without capabilities could not write again.
		Files.deleteIfExists(this.own.through().resolve(WORKING_DIRECTORY).resolve(WRITE_FILE));
		long group = (mechanism instanceof SeccompMechanism seccomp) ? seccomp.commandGroup() : Launcher.CALLER;
		this.own.checkName();
		ProcessRunner.Outcome outcome;
		if (group < 0) {
			outcome = runChecked(spec, frame);
		}
		else {
			// As an execution's: the command user of this mechanism has no capability.
			CommandUserGrant.grant(this.own, ((SeccompMechanism) mechanism).launcher().commandUser(),
					sharedMemory != null);
			try {
				outcome = runChecked(spec, frame);
			}
			finally {
				CommandUserGrant.handBack(this.own, sharedMemory != null);
			}
		}
		this.own.checkName();
		// Only where the child says it was refused: a mechanism with a writable root
		// (cave.sandbox.read-only-root=false) lets the write through by design.
		if (text(outcome.stdout()).lines().anyMatch(REFUSED_OUTSIDE::equals)) {
			noteWrittenOutside();
		}
		return outcome;
	}

	/**
	 * Run the spec; where it cannot be started (its working directory gone, say), first
	 * check that the session's directory still has its name, so that a directory renamed
	 * away meanwhile is named as such, not as a launcher missing.
	 */
	private ProcessRunner.Outcome runChecked(ProcessRunner.Spec spec, byte @Nullable [] frame)
			throws IOException, InterruptedException {
		try {
			return withoutReadyMarker(this.runner.run(spec, frame));
		}
		catch (IOException ex) {
			this.own.checkName();
			Path program = Path.of(spec.commandLine().get(0));
			if (WrapperFailureClassifier.errno(String.valueOf(ex.getMessage())).equals("2")
					&& Files.isRegularFile(program) && Files.isExecutable(program)) {
				// The program is there: what was missing at the start (ENOENT) was the
				// working directory, swapped away and back around the launch.
				throw this.own.replaced("its working directory " + this.directory + " was missing when "
						+ program.getFileName() + " was started (" + ex.getMessage() + ") and was back afterwards");
			}
			throw ex;
		}
	}

	/**
	 * The outcome without the launcher's ready and started markers, which come after
	 * {@code --check}'s lines (the runner drops them only at the front).
	 */
	static ProcessRunner.Outcome withoutReadyMarker(ProcessRunner.Outcome outcome) {
		byte[] stdout = ReadyMarker.removedFromALine(outcome.stdout());
		return (stdout == outcome.stdout()) ? outcome
				: new ProcessRunner.Outcome(outcome.exitCode(), stdout, outcome.stderr(), outcome.stdoutTruncated(),
						outcome.stderrTruncated(), outcome.timedOut(), outcome.wallTime(), outcome.survivors(),
						// both markers removed: the command was started
						outcome.commandStarted()
								|| stdout.length == outcome.stdout().length - LauncherContract.HANDOVER_READY.length()
										- LauncherContract.HANDOVER_STARTED.length());
	}

	/**
	 * Check that the probe script's child ran in this session's working directory: the
	 * device and inode it reported ({@code dir=}, {@code stat -c %d:%i .}) are the ones
	 * of the working directory that the JVM reaches through its descriptor. A directory
	 * of another user swapped in under the session's name around the launch and back (a
	 * work directory that others may write without the sticky bit) is another one, though
	 * every check of the name before and after the run holds.
	 * @param outcome what the probe script's run produced; one that failed or timed out
	 * is left to the verdict
	 * @throws ProbeDirectory.ReplacedException if the child reported another directory or
	 * none
	 */
	void checkRanHere(ProcessRunner.Outcome outcome) throws ProbeDirectory.ReplacedException {
		if (outcome.timedOut() || outcome.exitCode() != 0) {
			return;
		}
		String reported = ProbeScript.first(ProbeScript.facts(text(outcome.stdout())), "dir");
		if (!reported.equals(this.identity)) {
			throw this.own.replaced("the command ran in the directory of device:inode "
					+ (reported.isEmpty() ? "(not reported)" : reported) + ", not in its working directory "
					+ this.directory + " (" + this.identity + ")");
		}
	}

	private void noteWrittenOutside() throws IOException {
		if (this.writtenOutside != null) {
			return;
		}
		String outside = WORKING_DIRECTORY + OUTSIDE_SUFFIX;
		try (Stream<Path> entries = Files.list(this.own.through().resolve(outside))) {
			this.writtenOutside = entries.findFirst()
				.map((entry) -> this.own.path().resolve(outside).resolve(entry.getFileName()))
				.orElse(null);
		}
	}

	/**
	 * Return a file found after a run in the directory beside the working directory that
	 * the probe's child must not be able to write ({@value #OUTSIDE_SUFFIX}).
	 * @return its path, or {@code null} while there is none
	 */
	@Nullable Path writtenOutside() {
		return this.writtenOutside;
	}

	/**
	 * Return the working directory's path, as the command reaches it.
	 * @return the path
	 */
	Path directory() {
		return this.directory;
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
		Path sharedMemory = this.own.path().resolve(WORKING_DIRECTORY + SHARED_MEMORY_SUFFIX);
		long group = (mechanism instanceof SeccompMechanism seccomp) ? seccomp.commandGroup() : Launcher.CALLER;
		// the session's own directory is passable for the command's uid during the run
		if (group >= 0 && (WorkingDirectoryGrant.unpassableAncestor(this.own.path(), group) != null
				|| WorkingDirectoryGrant.unpassableAncestor(this.preload, group) != null)) {
			// A work directory the command user cannot pass: the probe runs again without
			// the command user (LinuxProbe), and there the command gets both.
			return null;
		}
		if (!this.createdSharedMemory) {
			// Created here, never taken over.
			Files.createDirectory(this.own.through().resolve(WORKING_DIRECTORY + SHARED_MEMORY_SUFFIX), OWNER_ONLY);
			this.createdSharedMemory = true;
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
		this.own.close();
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
