package dev.cavesandbox;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

/**
 * The {@link ExecutionRequest.Builder}: each setter checks its value with the rules of
 * {@link ProcessStrings}, {@link PositiveAmounts}, {@link ListedPaths},
 * {@link InputFilePaths} and {@link OutputFilePaths}; {@link ExecutionRequest}'s
 * constructor copies the fields.
 */
final class ExecutionRequestBuilder implements ExecutionRequest.Builder {

	final List<String> argv;

	@Nullable Path workingDirectory;

	final Map<String, String> environment = new LinkedHashMap<>();

	final Set<String> passEnvironment = new LinkedHashSet<>();

	@Nullable Supplier<InputStream> stdin;

	@Nullable Duration timeout;

	@Nullable Long maxOutputBytes;

	@Nullable OutputStream stdoutSink;

	@Nullable OutputStream stderrSink;

	@Nullable Boolean loopback;

	ResourceLimits limits = ResourceLimits.NONE;

	final List<Path> readablePaths = new ArrayList<>();

	final List<Path> writablePaths = new ArrayList<>();

	@Nullable List<String> allowedHosts;

	final Map<String, byte[]> inputFiles = new LinkedHashMap<>();

	final Set<String> outputFiles = new LinkedHashSet<>();

	final Set<String> outputFileGlobs = new LinkedHashSet<>();

	@Nullable Long maxOutputFileBytes;

	@Nullable Path outputDirectory;

	ExecutionRequestBuilder(List<String> argv) {
		this.argv = new ArrayList<>(ProcessStrings.requireArgv(argv));
	}

	@Override
	public ExecutionRequest.Builder workingDirectory(Path directory) {
		this.workingDirectory = Objects.requireNonNull(directory, "directory must not be null");
		return this;
	}

	@Override
	public ExecutionRequest.Builder environment(String name, String value) {
		ProcessStrings.requireVariableName(name);
		ProcessStrings.requireNoNul("environment value of " + name,
				Objects.requireNonNull(value, "value must not be null"));
		this.environment.put(name, value);
		return this;
	}

	@Override
	public ExecutionRequest.Builder passEnvironment(String... names) {
		for (String name : names) {
			this.passEnvironment.add(ProcessStrings.requireVariableName(name));
		}
		return this;
	}

	@Override
	public ExecutionRequest.Builder stdin(byte[] bytes) {
		byte[] copy = bytes.clone();
		this.stdin = () -> new ByteArrayInputStream(copy);
		return this;
	}

	@Override
	public ExecutionRequest.Builder stdin(Supplier<InputStream> stream) {
		this.stdin = Objects.requireNonNull(stream, "stream must not be null");
		return this;
	}

	@Override
	public ExecutionRequest.Builder timeout(Duration timeout) {
		this.timeout = PositiveAmounts.require("timeout", timeout, InvalidExecutionRequestException::new);
		return this;
	}

	@Override
	public ExecutionRequest.Builder maxOutputBytes(long bytes) {
		this.maxOutputBytes = PositiveAmounts.require("maxOutputBytes", bytes, InvalidExecutionRequestException::new);
		return this;
	}

	@Override
	public ExecutionRequest.Builder stdoutSink(OutputStream sink) {
		this.stdoutSink = Objects.requireNonNull(sink, "sink must not be null");
		return this;
	}

	@Override
	public ExecutionRequest.Builder stderrSink(OutputStream sink) {
		this.stderrSink = Objects.requireNonNull(sink, "sink must not be null");
		return this;
	}

	@Override
	public ExecutionRequest.Builder loopback(boolean loopback) {
		this.loopback = loopback;
		return this;
	}

	@Override
	public ExecutionRequest.Builder limits(ResourceLimits limits) {
		this.limits = Objects.requireNonNull(limits, "limits must not be null");
		return this;
	}

	@Override
	public ExecutionRequest.Builder readablePaths(Path... paths) {
		for (Path path : paths) {
			this.readablePaths.add(checkListed("readable path", path));
		}
		return this;
	}

	@Override
	public ExecutionRequest.Builder writablePaths(Path... paths) {
		for (Path path : paths) {
			this.writablePaths.add(checkListed("writable path", path));
		}
		return this;
	}

	@Override
	public ExecutionRequest.Builder allowedHosts(String... entries) {
		try {
			this.allowedHosts = EgressAllowList.of(Arrays.asList(entries)).entries();
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidExecutionRequestException(ex.getMessage());
		}
		return this;
	}

	@Override
	public ExecutionRequest.Builder inputFile(String relativePath, byte[] content) {
		Objects.requireNonNull(content, "content must not be null");
		InputFilePaths.require(relativePath, this.inputFiles.keySet());
		this.inputFiles.put(relativePath, content.clone());
		return this;
	}

	@Override
	public ExecutionRequest.Builder outputFile(String relativePath) {
		this.outputFiles.add(OutputFilePaths.requirePath(relativePath));
		return this;
	}

	@Override
	public ExecutionRequest.Builder outputFiles(String... globs) {
		for (String glob : globs) {
			this.outputFileGlobs.add(OutputFilePaths.requireGlob(glob));
		}
		return this;
	}

	@Override
	public ExecutionRequest.Builder maxOutputFileBytes(long bytes) {
		this.maxOutputFileBytes = PositiveAmounts.require("maxOutputFileBytes", bytes,
				InvalidExecutionRequestException::new);
		return this;
	}

	@Override
	public ExecutionRequest.Builder outputDirectory(Path directory) {
		// Again once normalized: /srv/.. is /, which has no name to open.
		this.outputDirectory = ListedPaths.require("output directory", checkListed("output directory", directory),
				InvalidExecutionRequestException::new);
		return this;
	}

	private static Path checkListed(String what, @Nullable Path path) {
		Path listed = ListedPaths.require(what, path, InvalidExecutionRequestException::new);
		ProcessStrings.requireNoNul(what, listed.toString());
		return listed.normalize();
	}

	@Override
	public ExecutionRequest build() {
		if (!this.inputFiles.isEmpty() && this.workingDirectory != null) {
			throw new InvalidExecutionRequestException("input files are written into the private working directory, "
					+ "but the request names the working directory " + this.workingDirectory
					+ "; leave the working directory unset, or write the files into it yourself");
		}
		if ((!this.outputFiles.isEmpty() || !this.outputFileGlobs.isEmpty()) && this.workingDirectory != null) {
			throw new InvalidExecutionRequestException("output files are read back from the private working "
					+ "directory, but the request names the working directory " + this.workingDirectory
					+ "; leave the working directory unset, or read the files from it yourself");
		}
		if (this.outputDirectory != null && this.outputFiles.isEmpty() && this.outputFileGlobs.isEmpty()) {
			throw new InvalidExecutionRequestException("the request names the output directory " + this.outputDirectory
					+ " but no output files; name them with outputFile or outputFiles, or leave the output directory "
					+ "unset");
		}
		return new ExecutionRequest(this);
	}

}
