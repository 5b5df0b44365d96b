package dev.cavesandbox;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import dev.cavesandbox.egress.EgressAllowList;

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

	private ExecutionRequest(Builder builder) {
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
		return new Builder(argv);
	}

	/**
	 * Start building a request for the given argv.
	 * @param argv the command and its arguments, at least one element
	 * @return a builder
	 */
	public static Builder builder(String... argv) {
		return new Builder(Arrays.asList(argv));
	}

	/**
	 * Return the command and its arguments.
	 * @return the argv, never empty
	 */
	public List<String> argv() {
		return this.argv;
	}

	/**
	 * Return the working directory, or {@code null} for a fresh private directory that is
	 * created for the execution and removed after it.
	 * @return the working directory or {@code null}
	 */
	public @Nullable Path workingDirectory() {
		return this.workingDirectory;
	}

	/**
	 * Return the variables to set in the child, on top of the baseline environment.
	 * @return the variables, possibly empty
	 */
	public Map<String, String> environment() {
		return this.environment;
	}

	/**
	 * Return the names of parent variables to pass to the child, in addition to
	 * {@link SandboxSettings#passEnvironment()}.
	 * @return the names, possibly empty
	 */
	public Set<String> passEnvironment() {
		return this.passEnvironment;
	}

	/**
	 * Return the supplier of the child's stdin, or {@code null} for an empty stdin.
	 * @return the stdin supplier or {@code null}
	 */
	public @Nullable Supplier<InputStream> stdin() {
		return this.stdin;
	}

	/**
	 * Return the timeout, or {@code null} for the executor's default
	 * ({@link SandboxSettings#timeout()}).
	 * @return the timeout or {@code null}
	 */
	public @Nullable Duration timeout() {
		return this.timeout;
	}

	/**
	 * Return the cap of each output stream in bytes, or {@code null} for the executor's
	 * default ({@link SandboxSettings#maxOutputBytes()}).
	 * @return the cap in bytes or {@code null}
	 */
	public @Nullable Long maxOutputBytes() {
		return this.maxOutputBytes;
	}

	/**
	 * Return where stdout is streamed to instead of being buffered, or {@code null}.
	 * @return the sink or {@code null}
	 */
	public @Nullable OutputStream stdoutSink() {
		return this.stdoutSink;
	}

	/**
	 * Return where stderr is streamed to instead of being buffered, or {@code null}.
	 * @return the sink or {@code null}
	 */
	public @Nullable OutputStream stderrSink() {
		return this.stderrSink;
	}

	/**
	 * Return whether the command gets a private loopback interface that is up (a server
	 * it starts on {@code 127.0.0.1} is reachable from inside the sandbox, the host's
	 * loopback still is not), or {@code null} for the executor's default
	 * ({@link SandboxSettings#loopback()}).
	 * @return whether to bring up a private loopback, or {@code null}
	 */
	public @Nullable Boolean loopback() {
		return this.loopback;
	}

	/**
	 * Return the resource limits set for this request; each value that is set overrides
	 * the executor's ({@link SandboxSettings#limits()}).
	 * @return the limits, {@link ResourceLimits#NONE} when none is set
	 */
	public ResourceLimits limits() {
		return this.limits;
	}

	/**
	 * Return the host paths this command sees read-only, besides the executor's view and
	 * its {@linkplain SandboxSettings.Filesystem#readablePaths() readable paths}.
	 * @return absolute paths, none by default
	 */
	public List<Path> readablePaths() {
		return this.readablePaths;
	}

	/**
	 * Return the host paths this command sees and may write, besides the executor's
	 * {@linkplain SandboxSettings.Filesystem#writablePaths() writable paths}.
	 * @return absolute paths, none by default
	 */
	public List<Path> writablePaths() {
		return this.writablePaths;
	}

	/**
	 * Return the hosts this command may reach through the egress proxy, in place of the
	 * executor's {@linkplain SandboxSettings.Egress#allowedHosts() allowed hosts}.
	 * @return normalized entries ({@link EgressAllowList}), empty for no egress at all,
	 * or {@code null} for the executor's
	 */
	public @Nullable List<String> allowedHosts() {
		return this.allowedHosts;
	}

	/**
	 * Return the files written into the private working directory before the command
	 * runs.
	 * @return their content (copies) by path relative to the working directory, in the
	 * order given; empty by default
	 */
	public Map<String, byte[]> inputFiles() {
		Map<String, byte[]> copies = new LinkedHashMap<>();
		this.inputFiles.forEach((path, content) -> copies.put(path, content.clone()));
		return Collections.unmodifiableMap(copies);
	}

	@Override
	public String toString() {
		return "ExecutionRequest" + this.argv;
	}

	/**
	 * Builder of {@link ExecutionRequest}. Each setter validates its value and throws
	 * {@link InvalidExecutionRequestException} when it is invalid.
	 */
	public static final class Builder {

		/** The longest name of a file that Linux file systems store (NAME_MAX). */
		private static final int MAX_NAME_BYTES = 255;

		private final List<String> argv;

		private @Nullable Path workingDirectory;

		private final Map<String, String> environment = new LinkedHashMap<>();

		private final Set<String> passEnvironment = new LinkedHashSet<>();

		private @Nullable Supplier<InputStream> stdin;

		private @Nullable Duration timeout;

		private @Nullable Long maxOutputBytes;

		private @Nullable OutputStream stdoutSink;

		private @Nullable OutputStream stderrSink;

		private @Nullable Boolean loopback;

		private ResourceLimits limits = ResourceLimits.NONE;

		private final List<Path> readablePaths = new ArrayList<>();

		private final List<Path> writablePaths = new ArrayList<>();

		private @Nullable List<String> allowedHosts;

		private final Map<String, byte[]> inputFiles = new LinkedHashMap<>();

		private Builder(List<String> argv) {
			if (argv == null || argv.isEmpty()) {
				throw new InvalidExecutionRequestException("argv must name a command: it is empty");
			}
			for (int i = 0; i < argv.size(); i++) {
				String arg = argv.get(i);
				if (arg == null) {
					throw new InvalidExecutionRequestException("argv[" + i + "] is null");
				}
				checkNoNul("argv[" + i + "]", arg);
			}
			if (argv.get(0).isEmpty()) {
				throw new InvalidExecutionRequestException("argv[0] must name a command: it is an empty string");
			}
			this.argv = new ArrayList<>(argv);
		}

		/**
		 * Run in the given directory, which must exist when the request is executed. It
		 * is not removed afterwards.
		 * @param directory the working directory
		 * @return this builder
		 */
		public Builder workingDirectory(Path directory) {
			this.workingDirectory = Objects.requireNonNull(directory, "directory must not be null");
			return this;
		}

		/**
		 * Set a variable in the child's environment.
		 * @param name the variable name
		 * @param value the value
		 * @return this builder
		 */
		public Builder environment(String name, String value) {
			checkVariableName(name);
			checkNoNul("environment value of " + name, Objects.requireNonNull(value, "value must not be null"));
			this.environment.put(name, value);
			return this;
		}

		/**
		 * Pass the named variables of the parent (this JVM) to the child, where they are
		 * set.
		 * @param names the variable names
		 * @return this builder
		 */
		public Builder passEnvironment(String... names) {
			for (String name : names) {
				checkVariableName(name);
				this.passEnvironment.add(name);
			}
			return this;
		}

		/**
		 * Feed the given bytes to the child's stdin, then close it.
		 * @param bytes the bytes (copied)
		 * @return this builder
		 */
		public Builder stdin(byte[] bytes) {
			byte[] copy = bytes.clone();
			this.stdin = () -> new ByteArrayInputStream(copy);
			return this;
		}

		/**
		 * Feed the stream returned by the supplier to the child's stdin, then close both.
		 * The supplier is called once per execution; the stream is read on a sandbox I/O
		 * thread.
		 * @param stream the supplier of the stream
		 * @return this builder
		 */
		public Builder stdin(Supplier<InputStream> stream) {
			this.stdin = Objects.requireNonNull(stream, "stream must not be null");
			return this;
		}

		/**
		 * Set the timeout after which the whole process tree is terminated.
		 * @param timeout a positive duration
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			if (timeout == null || timeout.isZero() || timeout.isNegative()) {
				throw new InvalidExecutionRequestException("timeout must be positive, but was " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * Set the cap of each output stream (stdout and stderr separately); bytes beyond
		 * it are discarded and the result reports truncation.
		 * @param bytes a positive number of bytes
		 * @return this builder
		 */
		public Builder maxOutputBytes(long bytes) {
			if (bytes <= 0) {
				throw new InvalidExecutionRequestException("maxOutputBytes must be positive, but was " + bytes);
			}
			this.maxOutputBytes = bytes;
			return this;
		}

		/**
		 * Stream stdout to the given sink as it arrives instead of buffering it; the cap
		 * still applies. The sink is flushed but not closed.
		 * @param sink the sink
		 * @return this builder
		 */
		public Builder stdoutSink(OutputStream sink) {
			this.stdoutSink = Objects.requireNonNull(sink, "sink must not be null");
			return this;
		}

		/**
		 * Stream stderr to the given sink as it arrives instead of buffering it; the cap
		 * still applies. The sink is flushed but not closed.
		 * @param sink the sink
		 * @return this builder
		 */
		public Builder stderrSink(OutputStream sink) {
			this.stderrSink = Objects.requireNonNull(sink, "sink must not be null");
			return this;
		}

		/**
		 * Give the command a private loopback interface that is up ({@code true}), or
		 * leave loopback as the mechanism has it ({@code false}: down with unshare;
		 * bubblewrap always brings it up, private either way). The host's loopback stays
		 * unreachable in both cases. An executor whose mechanism cannot provide a private
		 * loopback rejects {@code true} with {@link InvalidExecutionRequestException}.
		 * @param loopback whether to bring up a private loopback
		 * @return this builder
		 */
		public Builder loopback(boolean loopback) {
			this.loopback = loopback;
			return this;
		}

		/**
		 * Set resource limits of this execution: each value that is set overrides the
		 * executor's, the others keep the executor's. For example
		 * {@code limits(ResourceLimits.builder().cpuTime(Duration.ofSeconds(5)).build())}.
		 * @param limits the limits
		 * @return this builder
		 */
		public Builder limits(ResourceLimits limits) {
			this.limits = Objects.requireNonNull(limits, "limits must not be null");
			return this;
		}

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
		public Builder readablePaths(Path... paths) {
			for (Path path : paths) {
				this.readablePaths.add(checkListed("readable path", path));
			}
			return this;
		}

		/**
		 * Show the command these host paths and let it write them, besides the executor's
		 * view; the same rules as {@link #readablePaths(Path...)}.
		 * @param paths directories or files
		 * @return this builder
		 * @throws InvalidExecutionRequestException if a path is not absolute or is
		 * {@code /}
		 */
		public Builder writablePaths(Path... paths) {
			for (Path path : paths) {
				this.writablePaths.add(checkListed("writable path", path));
			}
			return this;
		}

		/**
		 * Let the command reach these hosts, and only these, through the egress proxy, in
		 * place of the executor's allowed hosts (none: no egress at all). Only the rungs
		 * with a network namespace of their own can offer it; elsewhere the execution
		 * fails with {@link EgressUnavailableException}.
		 * @param entries {@code host} (ports 80 and 443), {@code *.domain} (its
		 * subdomains, ports 80 and 443) or {@code host:port}
		 * @return this builder
		 * @throws InvalidExecutionRequestException if an entry has none of those forms
		 */
		public Builder allowedHosts(String... entries) {
			try {
				this.allowedHosts = EgressAllowList.of(Arrays.asList(entries)).entries();
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidExecutionRequestException(ex.getMessage());
			}
			return this;
		}

		/**
		 * Write a file into the private working directory before the command runs (for
		 * {@link IsolatedExecutor#execute(ExecutionRequest)} and
		 * {@link IsolatedExecutor#start(ExecutionRequest)} alike): a script, a source
		 * file or data the command reads, for example
		 * {@code inputFile("src/main.py", code.getBytes(UTF_8))} with the argv
		 * {@code python3 src/main.py}. Directories on the path are created. The command
		 * may read and write them (a root JVM's command user too, on every rung); they
		 * are removed with the private directory afterwards. Only with a private working
		 * directory: {@link #build()} refuses input files together with
		 * {@link #workingDirectory(Path)}.
		 * @param relativePath a path relative to the working directory, with {@code /}
		 * between its names: not empty, not absolute, without empty, {@code .} or
		 * {@code ..} names, without NUL, valid Unicode, and neither the same path as
		 * another input file nor one of its directories
		 * @param content the bytes of the file (copied)
		 * @return this builder
		 * @throws InvalidExecutionRequestException if the path breaks one of these rules
		 */
		public Builder inputFile(String relativePath, byte[] content) {
			Objects.requireNonNull(content, "content must not be null");
			if (relativePath == null || relativePath.isEmpty()) {
				throw new InvalidExecutionRequestException(
						"input file path must name a file relative to the working directory, but was '" + relativePath
								+ "'");
			}
			checkNoNul("input file path", relativePath);
			if (!java.nio.charset.StandardCharsets.UTF_8.newEncoder().canEncode(relativePath)) {
				throw new InvalidExecutionRequestException("input file path " + relativePath.replaceAll("\\p{Cs}", "?")
						+ " is not valid Unicode (it holds a lone surrogate, shown as ?), so it names no file; give a "
						+ "name of whole characters");
			}
			if (relativePath.startsWith("/")) {
				throw new InvalidExecutionRequestException("input file path " + relativePath
						+ " is absolute; give it relative to the working directory, for example "
						+ relativePath.replaceFirst("^/+", ""));
			}
			for (String name : relativePath.split("/", -1)) {
				if (name.isEmpty() || name.equals(".") || name.equals("..")) {
					throw new InvalidExecutionRequestException("input file path " + relativePath
							+ " has an empty, '.' or '..' name; give the plain path below the working directory, "
							+ "such as dir/file.txt");
				}
				if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
					throw new InvalidExecutionRequestException("input file path " + relativePath + " has a name of "
							+ "more than " + MAX_NAME_BYTES + " bytes, which no Linux file system stores; shorten it");
				}
			}
			for (String other : this.inputFiles.keySet()) {
				if (other.equals(relativePath) || other.startsWith(relativePath + "/")
						|| relativePath.startsWith(other + "/")) {
					throw new InvalidExecutionRequestException("input file path " + relativePath + " collides with "
							+ other + ", given before: each path may name one file, and no file may be another's "
							+ "directory; give each file once");
				}
			}
			this.inputFiles.put(relativePath, content.clone());
			return this;
		}

		private static Path checkListed(String what, @Nullable Path path) {
			if (path == null || !path.isAbsolute() || path.getParent() == null) {
				throw new InvalidExecutionRequestException(
						what + " must be an absolute path other than /, but was " + path);
			}
			checkNoNul(what, path.toString());
			return path.normalize();
		}

		/**
		 * Build the request.
		 * @return the immutable request
		 * @throws InvalidExecutionRequestException if it has input files and a working
		 * directory
		 */
		public ExecutionRequest build() {
			if (!this.inputFiles.isEmpty() && this.workingDirectory != null) {
				throw new InvalidExecutionRequestException(
						"input files are written into the private working directory, "
								+ "but the request names the working directory " + this.workingDirectory
								+ "; leave the working directory unset, or write the files into it yourself");
			}
			return new ExecutionRequest(this);
		}

		private static void checkVariableName(@Nullable String name) {
			if (name == null || name.isEmpty() || name.indexOf('=') >= 0) {
				throw new InvalidExecutionRequestException(
						"environment variable name must be non-empty and contain no '=', but was '" + name + "'");
			}
			checkNoNul("environment variable name", name);
		}

		private static void checkNoNul(String what, String value) {
			if (value.indexOf('\0') >= 0) {
				throw new InvalidExecutionRequestException(
						what + " contains a NUL byte, which cannot be passed to a process (execve(2))");
			}
		}

	}

}
