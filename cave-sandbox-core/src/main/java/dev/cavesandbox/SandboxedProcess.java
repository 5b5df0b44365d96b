package dev.cavesandbox;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;

import dev.cavesandbox.egress.EgressDecision;

/**
 * A sandboxed process that {@link IsolatedExecutor#start(ExecutionRequest)} started and
 * that is still running, or has ended: a long-running program such as an MCP server
 * speaking over its stdin and stdout. It runs in the same sandbox, with the same
 * environment, limits and lifetime rules as an execution of
 * {@link IsolatedExecutor#execute(ExecutionRequest)}: it dies with the JVM, it holds one
 * of the executor's concurrency slots until its whole process tree has ended, and closing
 * the executor kills it.
 * <p>
 * Its streams are the process's own pipes, not buffered or capped: read stdout and stderr
 * (or close them) as they come, since a process whose pipe is full blocks in its write,
 * as with {@link Process}. When the process ends, its sandbox is torn down: every process
 * it left behind is killed and its private working directory is removed. Unisolated
 * (fallback mode) only the processes still in its tree are: one that detached itself (a
 * double fork, {@code setsid}) is no longer found, as with
 * {@link IsolatedExecutor#execute(ExecutionRequest)}.
 * <p>
 * Where the sandbox could not be set up, the process ends at once with exit code
 * {@code 125} and the launcher's reason as the last line of stderr, and
 * {@link #commandStarted()} is {@code false}: nothing of the command ran. So does a
 * sandbox killed from outside before its command started (its wrapper killed by the OOM
 * killer or an operator during the set-up), with no reason on stderr; a sandbox that
 * {@link #destroy()}, the request's timeout or the executor's close ended keeps the exit
 * code its wrapper gave. A command can end with {@code 125} and a line like the
 * launcher's itself: tell the two apart by {@link #commandStarted()}, never by the exit
 * code or stderr alone.
 */
public interface SandboxedProcess extends AutoCloseable {

	/**
	 * Return the process's stdin; closing it gives the process end of file.
	 * @return the stream that writes to the process's stdin
	 */
	OutputStream stdin();

	/**
	 * Return the process's stdout.
	 * @return the stream that reads the process's stdout
	 */
	InputStream stdout();

	/**
	 * Return the process's stderr.
	 * @return the stream that reads the process's stderr
	 */
	InputStream stderr();

	/**
	 * Return the host's process id of the direct child of the JVM (the sandbox wrapper,
	 * or the command itself unisolated).
	 * @return the process id
	 */
	long pid();

	/**
	 * Return whether the process tree is still running.
	 * @return {@code true} until the process has ended and its sandbox is torn down
	 */
	boolean isAlive();

	/**
	 * Wait for the process to end and its sandbox to be torn down.
	 * @return the exit code; {@code 128 + n} when it was killed by signal {@code n}
	 * @throws InterruptedException if the calling thread was interrupted while waiting;
	 * the process keeps running
	 */
	int waitFor() throws InterruptedException;

	/**
	 * Wait at most the given time for the process to end and its sandbox to be torn down.
	 * @param timeout the longest time to wait
	 * @return whether it ended within the time
	 * @throws InterruptedException if the calling thread was interrupted while waiting;
	 * the process keeps running
	 */
	boolean waitFor(Duration timeout) throws InterruptedException;

	/**
	 * Return a future that completes with this process once it has ended and its sandbox
	 * is torn down.
	 * @return the future; cancelling it does not stop the process
	 */
	CompletableFuture<SandboxedProcess> onExit();

	/**
	 * Return the exit code once the process has ended.
	 * @return the exit code, or empty while it runs
	 */
	OptionalInt exitCode();

	/**
	 * Return whether the command itself was started: the launcher wrote its started
	 * marker right before {@code execve(2)}, after the sandbox was set up. {@code false}
	 * only where that marker is known not to have come (the sandbox could not be set up
	 * or was killed before, exit code {@code 125} unless its timeout, {@link #destroy()}
	 * or the executor's close ended it); {@code true} where it came, where no launcher
	 * sets the command up (unisolated, fallback mode), or where it could not be seen
	 * (stdout closed before its first read, processes of the tree that outlived its
	 * termination).
	 * @return whether the command was started
	 * @throws IllegalStateException while the process runs (wait for it first:
	 * {@link #waitFor()}, {@link #onExit()})
	 */
	boolean commandStarted();

	/**
	 * Return whether the request's timeout ended the process (its tree was killed).
	 * @return whether the timeout struck; always {@code false} without a timeout
	 */
	boolean timedOut();

	/**
	 * Return the pids of the process tree that outlived its termination (the timeout or
	 * {@link #destroy()}: SIGTERM, the kill grace period, SIGKILL, and up to five seconds
	 * more while processes of it are dying), as {@link ProcessTreeSurvivedException}
	 * names them for {@link IsolatedExecutor#execute(ExecutionRequest)}: a process in an
	 * uninterruptible sleep dies when it wakes, one that is dying is freeing its memory
	 * or waiting for its I/O and runs no code of its own.
	 * @return the pids, empty when the whole tree was gone or it was not terminated
	 */
	default List<Long> survivors() {
		return List.of();
	}

	/**
	 * Return the files the request asked back
	 * ({@link ExecutionRequest.Builder#outputFile},
	 * {@link ExecutionRequest.Builder#outputFiles}), read from the private working
	 * directory once the process tree had ended, before the directory was removed; see
	 * {@link OutputFiles} for the cap and what is not read.
	 * @return the files, {@link OutputFiles#NONE} when the request asked for none
	 * @throws IllegalStateException while the process runs (wait for it first:
	 * {@link #waitFor()}, {@link #onExit()})
	 * @throws ProcessTreeSurvivedException where processes of its tree outlived its
	 * termination ({@link #survivors()}): the files were not read while they might still
	 * change them
	 */
	default OutputFiles outputFiles() {
		return OutputFiles.NONE;
	}

	/**
	 * Return the isolation applied to this process.
	 * @return the isolation
	 */
	Isolation isolation();

	/**
	 * Return what the egress proxy decided for each connection the process asked it for,
	 * so far, in order.
	 * @return the decisions; empty without an allow-list
	 */
	List<EgressDecision> egressDecisions();

	/**
	 * Terminate the whole process tree: SIGTERM, the kill grace period, then SIGKILL; and
	 * wait until it has ended and its sandbox is torn down. Does nothing once it has
	 * ended.
	 */
	void destroy();

	/**
	 * Same as {@link #destroy()}.
	 */
	@Override
	void close();

}
