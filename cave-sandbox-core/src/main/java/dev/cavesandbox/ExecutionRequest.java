package dev.cavesandbox;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

/**
 * One command to run in the sandbox. Immutable; create it with {@link #of(String...)} or
 * {@link #builder(List)}. Unset optional values take the executor's defaults
 * ({@link SandboxSettings}).
 * <p>
 * The command is an argv list, never a shell string: {@code argv[0]} is a path (absolute,
 * or relative to the working directory) or a bare name looked up on the child's
 * {@code PATH}. Invalid values are rejected when the request is built, with
 * {@link InvalidExecutionRequestException} ({@code cave_sandbox_invalid_request}).
 */
public final class ExecutionRequest {

	private final List<String> argv;

	private final @Nullable Path workingDirectory;

	private final Map<String, String> environment;

	private final Set<String> passEnvironment;

	private final @Nullable Supplier<InputStream> stdin;

	private final @Nullable Duration timeout;

	private final @Nullable Long maxOutputBytes;

	private final @Nullable OutputStream stdoutSink;

	private final @Nullable OutputStream stderrSink;

	private final @Nullable Boolean loopback;

	private final ResourceLimits limits;

	private final List<Path> readablePaths;

	private final List<Path> writablePaths;

	private final @Nullable List<String> allowedHosts;

	private final Map<String, byte[]> inputFiles;

	private final List<String> outputFiles;

	private final List<String> outputFileGlobs;

	private final @Nullable Long maxOutputFileBytes;

	private final @Nullable Path outputDirectory;

	ExecutionRequest(ExecutionRequestBuilder builder) {
		this.argv = List.copyOf(builder.argv);
		this.workingDirectory = builder.workingDirectory;
		this.environment = Collections.unmodifiableMap(new LinkedHashMap<>(builder.environment));
		this.passEnvironment = Collections.unmodifiableSet(new LinkedHashSet<>(builder.passEnvironment));
		this.stdin = builder.stdin;
		this.timeout = builder.timeout;
		this.maxOutputBytes = builder.maxOutputBytes;
		this.stdoutSink = builder.stdoutSink;
		this.stderrSink = builder.stderrSink;
		this.loopback = builder.loopback;
		this.limits = builder.limits;
		this.readablePaths = List.copyOf(builder.readablePaths);
		this.writablePaths = List.copyOf(builder.writablePaths);
		this.allowedHosts = (builder.allowedHosts != null) ? List.copyOf(builder.allowedHosts) : null;
		this.inputFiles = Collections.unmodifiableMap(new LinkedHashMap<>(builder.inputFiles));
		this.outputFiles = List.copyOf(builder.outputFiles);
		this.outputFileGlobs = List.copyOf(builder.outputFileGlobs);
		this.maxOutputFileBytes = builder.maxOutputFileBytes;
		this.outputDirectory = builder.outputDirectory;
	}

	/**
	 * Create a request for the given argv with every other value at its default.
	 * @param argv the command and its arguments, at least one element
	 * @return the request
	 * @throws InvalidExecutionRequestException if argv is empty or an element contains a
	 * NUL byte
	 */
	public static ExecutionRequest of(String... argv) {
		return builder(Arrays.asList(argv)).build();
	}

	/**
	 * Start building a request for the given argv.
	 * @param argv the command and its arguments, at least one element
	 * @return a builder
	 */
	public static Builder builder(List<String> argv) {
		return new ExecutionRequestBuilder(argv);
	}

	/**
	 * Start building a request for the given argv.
	 * @param argv the command and its arguments, at least one element
	 * @return a builder
	 */
	public static Builder builder(String... argv) {
		return new ExecutionRequestBuilder(Arrays.asList(argv));
	}

	/**
	 * Return the command and its arguments.
	 * @return the argv, never empty
	 */
	public List<String> argv() {
		return this.argv;
	}

	/**
	 * Return the working directory ({@link Builder#workingDirectory(Path)}).
	 * @return the directory, or {@code null} for a private one created for the execution
	 * and removed after it
	 */
	public @Nullable Path workingDirectory() {
		return this.workingDirectory;
	}

	/**
	 * Return the variables set in the child, on top of the baseline environment.
	 * @return the variables, possibly empty
	 */
	public Map<String, String> environment() {
		return this.environment;
	}

	/**
	 * Return the names of parent variables passed to the child, besides the settings'
	 * ({@link SandboxSettings.Env#pass()}).
	 * @return the names, possibly empty
	 */
	public Set<String> passEnvironment() {
		return this.passEnvironment;
	}

	/**
	 * Return the supplier of the child's stdin.
	 * @return the supplier, or {@code null} for an empty stdin
	 */
	public @Nullable Supplier<InputStream> stdin() {
		return this.stdin;
	}

	/**
	 * Return the timeout.
	 * @return the timeout, or {@code null} for the settings'
	 * {@link SandboxSettings#timeout()}
	 */
	public @Nullable Duration timeout() {
		return this.timeout;
	}

	/**
	 * Return the cap of each output stream in bytes.
	 * @return the cap, or {@code null} for the settings'
	 * {@link SandboxSettings#maxOutputBytes()}
	 */
	public @Nullable Long maxOutputBytes() {
		return this.maxOutputBytes;
	}

	/**
	 * Return where stdout is streamed to instead of being buffered.
	 * @return the sink, or {@code null} to buffer it
	 */
	public @Nullable OutputStream stdoutSink() {
		return this.stdoutSink;
	}

	/**
	 * Return where stderr is streamed to instead of being buffered.
	 * @return the sink, or {@code null} to buffer it
	 */
	public @Nullable OutputStream stderrSink() {
		return this.stderrSink;
	}

	/**
	 * Return whether the command gets a private loopback that is up
	 * ({@link Builder#loopback(boolean)}).
	 * @return whether it does, or {@code null} for the settings'
	 * {@link SandboxSettings#loopback()}
	 */
	public @Nullable Boolean loopback() {
		return this.loopback;
	}

	/**
	 * Return the resource limits of this request; each one set overrides the settings'
	 * ({@link SandboxSettings#limits()}).
	 * @return the limits, {@link ResourceLimits#NONE} when none is set
	 */
	public ResourceLimits limits() {
		return this.limits;
	}

	/**
	 * Return the host paths the command sees read-only, besides the settings'
	 * ({@link SandboxSettings.Filesystem#readablePaths()}).
	 * @return absolute paths, none by default
	 */
	public List<Path> readablePaths() {
		return this.readablePaths;
	}

	/**
	 * Return the host paths the command sees and may write, besides the settings'
	 * ({@link SandboxSettings.Filesystem#writablePaths()}).
	 * @return absolute paths, none by default
	 */
	public List<Path> writablePaths() {
		return this.writablePaths;
	}

	/**
	 * Return the hosts the command may reach through the egress proxy, in place of the
	 * settings' ({@link SandboxSettings.Egress#allowedHosts()}).
	 * @return normalized entries ({@link EgressAllowList}), empty for no egress at all,
	 * or {@code null} for the settings'
	 */
	public @Nullable List<String> allowedHosts() {
		return this.allowedHosts;
	}

	/**
	 * Return the files written into the private working directory before the command runs
	 * ({@link Builder#inputFile(String, byte[])}).
	 * @return copies of their content by relative path, in the order given; empty by
	 * default
	 */
	public Map<String, byte[]> inputFiles() {
		Map<String, byte[]> copies = new LinkedHashMap<>();
		this.inputFiles.forEach((path, content) -> copies.put(path, content.clone()));
		return Collections.unmodifiableMap(copies);
	}

	/**
	 * Return the paths of the files read back from the private working directory after
	 * the command ran ({@link Builder#outputFile(String)}).
	 * @return relative paths, in the order given, without repeats; empty by default
	 */
	public List<String> outputFiles() {
		return this.outputFiles;
	}

	/**
	 * Return the globs of the files read back from the private working directory after
	 * the command ran ({@link Builder#outputFiles(String...)}).
	 * @return globs relative to the working directory, in the order given, without
	 * repeats; empty by default
	 */
	public List<String> outputFileGlobs() {
		return this.outputFileGlobs;
	}

	/**
	 * Return the cap of the output files, all together, in bytes
	 * ({@link Builder#maxOutputFileBytes(long)}).
	 * @return the cap, or {@code null} for the settings'
	 * {@link SandboxSettings#maxOutputFileBytes()}
	 */
	public @Nullable Long maxOutputFileBytes() {
		return this.maxOutputFileBytes;
	}

	/**
	 * Return the directory the output files are written into
	 * ({@link Builder#outputDirectory(Path)}).
	 * @return the absolute path, or {@code null} (the default) for files returned in the
	 * result
	 */
	public @Nullable Path outputDirectory() {
		return this.outputDirectory;
	}

	@Override
	public String toString() {
		return "ExecutionRequest" + this.argv;
	}

	/**
	 * Builder of {@link ExecutionRequest}. Each setter validates its value and throws
	 * {@link InvalidExecutionRequestException} when it is invalid.
	 */
	public interface Builder {

		/**
		 * Run in the given directory, which must exist when the request is executed. It
		 * is not removed afterwards.
		 * @param directory the working directory
		 * @return this builder
		 */
		Builder workingDirectory(Path directory);

		/**
		 * Set a variable in the child's environment.
		 * @param name the variable name
		 * @param value the value
		 * @return this builder
		 */
		Builder environment(String name, String value);

		/**
		 * Pass the named variables of the parent (this JVM) to the child, where they are
		 * set.
		 * @param names the variable names
		 * @return this builder
		 */
		Builder passEnvironment(String... names);

		/**
		 * Feed the given bytes to the child's stdin, then close it.
		 * @param bytes the bytes (copied)
		 * @return this builder
		 */
		Builder stdin(byte[] bytes);

		/**
		 * Feed the stream returned by the supplier to the child's stdin, then close both.
		 * The supplier is called once per execution; the stream is read on a sandbox I/O
		 * thread.
		 * @param stream the supplier of the stream
		 * @return this builder
		 */
		Builder stdin(Supplier<InputStream> stream);

		/**
		 * Set the timeout after which the whole process tree is terminated.
		 * @param timeout a positive duration
		 * @return this builder
		 */
		Builder timeout(Duration timeout);

		/**
		 * Set the cap of each output stream (stdout and stderr separately); bytes beyond
		 * it are discarded and the result reports truncation.
		 * @param bytes a positive number of bytes
		 * @return this builder
		 */
		Builder maxOutputBytes(long bytes);

		/**
		 * Stream stdout to the given sink as it arrives instead of buffering it; the cap
		 * still applies. The sink is flushed but not closed.
		 * @param sink the sink
		 * @return this builder
		 */
		Builder stdoutSink(OutputStream sink);

		/**
		 * Stream stderr to the given sink as it arrives instead of buffering it; the cap
		 * still applies. The sink is flushed but not closed.
		 * @param sink the sink
		 * @return this builder
		 */
		Builder stderrSink(OutputStream sink);

		/**
		 * Give the command a private loopback interface that is up ({@code true}: a
		 * server it starts on {@code 127.0.0.1} is reachable inside), or leave it as the
		 * mechanism has it ({@code false}: down with unshare, up with bubblewrap). The
		 * host's loopback stays unreachable either way. A mechanism without a private
		 * loopback rejects {@code true} ({@link InvalidExecutionRequestException}).
		 * @param loopback whether to bring up a private loopback
		 * @return this builder
		 */
		Builder loopback(boolean loopback);

		/**
		 * Set resource limits of this execution: each value that is set overrides the
		 * executor's, the others keep the executor's. For example
		 * {@code limits(ResourceLimits.builder().cpuTime(Duration.ofSeconds(5)).build())}.
		 * @param limits the limits
		 * @return this builder
		 */
		Builder limits(ResourceLimits limits);

		/**
		 * Show the command these host paths read-only, besides the executor's view. Each
		 * must exist and be an absolute path without symbolic links in any component
		 * (checked when the request is executed: {@code cave_sandbox_invalid_request}
		 * otherwise), and must not hold the sandbox's private directories.
		 * @param paths directories or files
		 * @return this builder
		 * @throws InvalidExecutionRequestException if a path is not absolute or is
		 * {@code /}
		 */
		Builder readablePaths(Path... paths);

		/**
		 * Show the command these host paths and let it write them, besides the executor's
		 * view; the same rules as {@link #readablePaths(Path...)}.
		 * @param paths directories or files
		 * @return this builder
		 * @throws InvalidExecutionRequestException if a path is not absolute or is
		 * {@code /}
		 */
		Builder writablePaths(Path... paths);

		/**
		 * Let the command reach these hosts, and only these, through the egress proxy, in
		 * place of the executor's allowed hosts (none: no egress at all). Only the
		 * mechanisms with a network namespace of their own can offer it; elsewhere the
		 * execution fails with {@link EgressUnavailableException}.
		 * @param entries {@code host} (ports 80 and 443), {@code *.domain} (its
		 * subdomains, ports 80 and 443) or {@code host:port}
		 * @return this builder
		 * @throws InvalidExecutionRequestException if an entry has none of those forms
		 */
		Builder allowedHosts(String... entries);

		/**
		 * Write a file into the private working directory before the command runs, for
		 * example {@code inputFile("src/main.py", code.getBytes(UTF_8))} with the argv
		 * {@code python3 src/main.py}. Directories on the path are created; the command
		 * may read and write them (a root JVM's command user too); they are removed with
		 * the private directory. {@link #build()} refuses input files together with
		 * {@link #workingDirectory(Path)}.
		 * @param relativePath a path relative to the working directory, with {@code /}
		 * between its names: not empty, not absolute, without empty, {@code .} or
		 * {@code ..} names, without NUL, valid Unicode, and neither the same path as
		 * another input file nor one of its directories
		 * @param content the bytes of the file (copied)
		 * @return this builder
		 * @throws InvalidExecutionRequestException if the path breaks one of these rules
		 */
		Builder inputFile(String relativePath, byte[] content);

		/**
		 * Read this file back from the private working directory once the command's whole
		 * process tree has ended, before the directory is removed; for example
		 * {@code outputFile("in.pdf")} after {@code soffice --convert-to pdf in.odt}. The
		 * result has it in {@link ExecutionResult#outputFiles()} (and
		 * {@link ExecutionResult#outputFile(String)}), or names it as missing (not
		 * there), skipped (not a regular file: a symbolic link, which is never followed,
		 * a FIFO, socket or device, which is never opened) or omitted (past the cap,
		 * {@link #maxOutputFileBytes(long)}); a started process has it in
		 * {@link SandboxedProcess#outputFiles()} once it has ended. {@link #build()}
		 * refuses output files together with {@link #workingDirectory(Path)}, whose files
		 * the caller reads where they are.
		 * @param relativePath a path relative to the working directory, by the rules of
		 * {@link #inputFile(String, byte[])}: not empty, not absolute, without empty,
		 * {@code .} or {@code ..} names, without NUL, valid Unicode
		 * @return this builder
		 * @throws InvalidExecutionRequestException if the path breaks one of these rules
		 */
		Builder outputFile(String relativePath);

		/**
		 * Read the regular files that match these globs back from the private working
		 * directory, as {@link #outputFile(String)} does; a glob that matches nothing
		 * adds nothing (no missing file). The globs are those of
		 * {@link java.nio.file.FileSystem#getPathMatcher(String)}, matched against each
		 * path relative to the working directory: {@code *.pdf} the PDFs directly in it
		 * ({@code *} and {@code ?} do not cross {@code /}, and match names that start
		 * with a dot), {@code out/**.png} those anywhere below {@code out}, {@code **}
		 * every file. Directories are walked without following links, at most 10,000
		 * entries in all (past it, the result is truncated), and for a glob without
		 * {@code **} no deeper than it has names.
		 * @param globs globs relative to the working directory, with the rules of
		 * {@link #outputFile(String)} for their names
		 * @return this builder
		 * @throws InvalidExecutionRequestException if a glob breaks one of these rules or
		 * is not a valid glob
		 */
		Builder outputFiles(String... globs);

		/**
		 * Set the cap of the output files of this execution, all together; a file that
		 * does not fit whole in what is left of it is not read, and the result names it
		 * ({@link OutputFiles#omitted()},
		 * {@link ExecutionResult#outputFilesTruncated()}).
		 * @param bytes a positive number of bytes (default the settings'
		 * {@link SandboxSettings#maxOutputFileBytes()}, 16 MiB unless set,
		 * {@code cave.sandbox.output-files.max-size})
		 * @return this builder
		 */
		Builder maxOutputFileBytes(long bytes);

		/**
		 * Write the output files ({@link #outputFile(String)}, {@link #outputFiles}) into
		 * this directory of the caller's instead of returning their bytes: each one is
		 * copied as it is read, at the same relative path (a missing directory on it is
		 * created, {@code 0700}), as a new file ({@code 0600}, the JVM user's), and the
		 * result names it in {@link OutputFiles#written()}. Nothing is followed: the
		 * directory is opened once, before the command runs, without following a link at
		 * its name, and every file is created relative to it with
		 * {@code O_CREAT|O_EXCL|O_NOFOLLOW}; a name the directory already holds (a file,
		 * a directory, a symbolic link) is not replaced, and the result names the file in
		 * {@link OutputFiles#unwritten()}. The cap ({@link #maxOutputFileBytes(long)})
		 * applies as for files returned. For a started process the files are written when
		 * it has ended.
		 * @param directory an absolute path other than {@code /} of an existing
		 * directory, not a symbolic link, that the JVM's user may write; checked when the
		 * request is executed or started, before the command runs
		 * @return this builder
		 * @throws InvalidExecutionRequestException if the path is not absolute, is
		 * {@code /} or holds a NUL
		 */
		Builder outputDirectory(Path directory);

		/**
		 * Build the request.
		 * @return the immutable request
		 * @throws InvalidExecutionRequestException if it has input or output files and a
		 * working directory, or an output directory without output files
		 */
		ExecutionRequest build();

	}

}
