package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.cavesandbox.OutputFiles;
import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.internal.egress.EgressSession;
import dev.cavesandbox.internal.launcher.CommandUsers;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherContract;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.process.ProcessRunner;
import dev.cavesandbox.internal.workspace.OutputDirectory;
import dev.cavesandbox.internal.workspace.OutputFileReader;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import dev.cavesandbox.internal.workspace.WorkingDirectoryGrant;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one execution took before its spawn ({@link LaunchPreparation}) and gives back
 * after its end, once, by {@link #close()}: the egress session, the working directory's
 * group, the private working directory and the shared-memory directory, the output
 * directory held open, the command user, the slot.
 */
final class PreparedLaunch implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(PreparedLaunch.class);

	/** This execution's launch token ({@link LauncherContract#TOKEN_VARIABLE}). */
	final String token = UUID.randomUUID().toString();

	private final AtomicBoolean closed = new AtomicBoolean();

	private final Semaphore slots;

	private final PrivateDirectories privateDirectories;

	private final @Nullable CommandUsers commandUsers;

	private ProcessRunner.@Nullable Spec spec;

	private @Nullable Sandbox sandbox;

	private byte @Nullable [] frame;

	/**
	 * Whether this launch holds a slot (from its claim on), which its close gives back.
	 */
	private boolean holdsSlot;

	/** The shared-memory library and directory, for the command's environment. */
	private @Nullable Path sharedMemoryLibrary;

	private @Nullable Path sharedMemoryReal;

	private @Nullable Path privateDirectory;

	/** The directory of the shared-memory objects ({@link SharedMemoryDirectory}). */
	private @Nullable Path sharedMemoryDirectory;

	private @Nullable EgressSession egress;

	private @Nullable WorkingDirectoryGrant grant;

	private @Nullable OutputDirectory outputDirectory;

	/**
	 * The uid the command runs as on the seccomp mechanism (a root JVM's; its gid is the
	 * command user's), or {@link Launcher#CALLER}.
	 */
	private long commandUser = Launcher.CALLER;

	/**
	 * A launch, which holds a slot once {@link #holdSlot()} says so.
	 * @param slots where the slot goes back
	 * @param privateDirectories where private working directories go back
	 * @param commandUsers where the command user goes back, if any
	 */
	PreparedLaunch(Semaphore slots, PrivateDirectories privateDirectories, @Nullable CommandUsers commandUsers) {
		this.slots = slots;
		this.privateDirectories = privateDirectories;
		this.commandUsers = commandUsers;
	}

	/** From now on this launch holds a slot already taken. */
	void holdSlot() {
		this.holdsSlot = true;
	}

	void commandUser(long uid) {
		this.commandUser = uid;
	}

	long commandUser() {
		return this.commandUser;
	}

	void privateDirectory(Path directory) {
		this.privateDirectory = directory;
	}

	@Nullable Path privateDirectory() {
		return this.privateDirectory;
	}

	void sharedMemoryDirectory(Path directory) {
		this.sharedMemoryDirectory = directory;
	}

	/**
	 * Record the shared-memory library and the real path of the directory, which the
	 * command's environment names.
	 */
	void sharedMemory(Path library, Path real) {
		this.sharedMemoryLibrary = library;
		this.sharedMemoryReal = real;
	}

	@Nullable Path sharedMemoryLibrary() {
		return this.sharedMemoryLibrary;
	}

	@Nullable Path sharedMemoryReal() {
		return this.sharedMemoryReal;
	}

	void sandbox(Sandbox prepared) {
		this.sandbox = prepared;
	}

	Sandbox sandbox() {
		return Objects.requireNonNull(this.sandbox, "no sandbox prepared");
	}

	void frame(byte[] encoded) {
		this.frame = encoded;
	}

	/**
	 * Return the command's hand-over frame.
	 * @return the frame, or {@code null} where the command line holds the command
	 */
	byte @Nullable [] frame() {
		return this.frame;
	}

	void outputDirectory(OutputDirectory directory) {
		this.outputDirectory = directory;
	}

	void egress(EgressSession session) {
		this.egress = session;
	}

	@Nullable EgressSession egress() {
		return this.egress;
	}

	void grant(@Nullable WorkingDirectoryGrant granted) {
		this.grant = granted;
	}

	void spec(ProcessRunner.Spec prepared) {
		this.spec = prepared;
	}

	ProcessRunner.Spec spec() {
		return Objects.requireNonNull(this.spec, "not prepared");
	}

	/**
	 * Read the request's output files from the private working directory, which is still
	 * there: call it once the process tree has ended, before {@link #close()}.
	 * @param request the request
	 * @return the files (written into the request's output directory, if it has one),
	 * {@link OutputFiles#NONE} where it asked for none or has a working directory of its
	 * own
	 */
	OutputFiles readOutputFiles(EffectiveRequest request) {
		Path directory = this.privateDirectory;
		if (directory == null) {
			return OutputFiles.NONE;
		}
		return OutputFileReader.read(directory, request.request().outputFiles(), request.request().outputFileGlobs(),
				request.maxOutputFileBytes(), this.outputDirectory);
	}

	/**
	 * Stop the egress proxy, if any (its decisions stay readable).
	 * @return what it decided, complete
	 */
	List<EgressDecision> closeEgress() {
		EgressSession session = this.egress;
		if (session == null) {
			return List.of();
		}
		session.close();
		return session.decisions();
	}

	/**
	 * Take the working directory's group back from the command user, once.
	 * @throws SandboxLaunchException if it could not be taken back
	 */
	void takeBackGrant() {
		WorkingDirectoryGrant granted = this.grant;
		this.grant = null;
		if (granted == null) {
			return;
		}
		try {
			granted.close();
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("the command ran, but the working directory's group could not be taken "
					+ "back from the command user: " + ex, ex);
		}
	}

	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		try {
			closeEgress();
		}
		finally {
			try {
				takeBackGrant();
			}
			finally {
				try {
					if (this.outputDirectory != null) {
						this.outputDirectory.close(); // never throws
					}
					if (this.privateDirectory != null) {
						this.privateDirectories.release(this.privateDirectory);
					}
					if (this.sharedMemoryDirectory != null) {
						this.privateDirectories.release(this.sharedMemoryDirectory);
					}
				}
				finally {
					// After the tree has ended: for execute() the runner returns once it
					// is torn down, for start() this runs when it has ended.
					if (this.commandUsers != null && this.commandUser != Launcher.CALLER) {
						this.commandUsers.release(this.commandUser);
					}
					if (this.holdsSlot) {
						this.slots.release();
					}
				}
			}
		}
	}

	/**
	 * The sandbox of a launch, made before its request's part.
	 *
	 * @param mechanism the mechanism with the launch's listed paths, egress and command
	 * user; {@code null} unisolated
	 * @param directory the working directory as the command sees it
	 * @param real its real path, which the mechanism binds (the path that was checked,
	 * not resolved again: a component swapped for a symbolic link in between would
	 * otherwise be followed)
	 * @param commandLine the launcher's command line of {@code --handover}; {@code null}
	 * without a launcher (unisolated, macOS), where the request's argv makes it
	 * @param wrappers the environment of that command line: a baseline {@code PATH} and
	 * the launch token
	 */
	record Sandbox(@Nullable SandboxMechanism mechanism, Path directory, Path real, @Nullable List<String> commandLine,
			Map<String, String> wrappers) {

		boolean handover() {
			return this.commandLine != null;
		}

	}

	/**
	 * {@link #close()} where nobody is left to tell of a failure: the teardown of a
	 * started process, or after another failure.
	 */
	void closeQuietly() {
		try {
			close();
		}
		catch (RuntimeException ex) {
			logger.warn("the sandbox of a process could not be torn down completely: {}", ex.getMessage());
		}
	}

}
