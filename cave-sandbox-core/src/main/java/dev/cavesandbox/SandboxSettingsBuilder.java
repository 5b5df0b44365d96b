package dev.cavesandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The {@link SandboxSettings.Builder}: the default of every setting (the same as the
 * Spring Boot starter's properties) and the assembly of the nested records, whose
 * constructors check the values.
 */
final class SandboxSettingsBuilder implements SandboxSettings.Builder {

	private SandboxMode mode = SandboxMode.STRICT;

	private Duration timeout = Duration.ofSeconds(30);

	private long maxOutputBytes = 1024 * 1024;

	private Duration killGracePeriod = Duration.ofSeconds(1);

	private Duration probeTimeout = Duration.ofSeconds(10);

	private int maxConcurrent = 16;

	private Duration queueTimeout = Duration.ofSeconds(30);

	private Path workDirectory = Path.of(System.getProperty("java.io.tmpdir"));

	private final Set<String> passEnvironment = new LinkedHashSet<>();

	private final Map<String, String> environment = new LinkedHashMap<>();

	private Path unsharePath = Path.of("/usr/bin/unshare");

	private Path setprivPath = Path.of("/usr/bin/setpriv");

	private MechanismChoice mechanism = MechanismChoice.AUTO;

	private boolean loopback;

	private boolean readOnlyRoot = true;

	private List<Path> hiddenDirectories = new ArrayList<>(SandboxSettings.DEFAULT_HIDDEN_DIRECTORIES);

	private Path bwrapPath = Path.of("/usr/bin/bwrap");

	private @Nullable Path launcherPath;

	private boolean userNamespaces;

	private int commandUser = SandboxSettings.Linux.DEFAULT_COMMAND_USER;

	private SandboxSettings.CommandUserRange commandUserRange = SandboxSettings.CommandUserRange.DEFAULT;

	private Path sandboxExecPath = Path.of("/usr/bin/sandbox-exec");

	private ResourceLimits limits = ResourceLimits.defaults();

	private SandboxSettings.Filesystem.View filesystemView = SandboxSettings.Filesystem.View.SYSTEM;

	private List<Path> readablePaths = new ArrayList<>();

	private List<Path> writablePaths = new ArrayList<>();

	private List<String> allowedHosts = new ArrayList<>();

	private boolean allowPrivateDestinations;

	private long maxOutputFileBytes = SandboxSettings.DEFAULT_MAX_OUTPUT_FILE_BYTES;

	/** Set explicitly, or {@code null}: the default pool, fitted to the settings. */
	private @Nullable WarmPoolSettings warm;

	SandboxSettingsBuilder() {
	}

	@Override
	public SandboxSettings.Builder mode(SandboxMode mode) {
		this.mode = mode;
		return this;
	}

	@Override
	public SandboxSettings.Builder timeout(Duration timeout) {
		this.timeout = timeout;
		return this;
	}

	@Override
	public SandboxSettings.Builder maxOutputBytes(long maxOutputBytes) {
		this.maxOutputBytes = maxOutputBytes;
		return this;
	}

	@Override
	public SandboxSettings.Builder killGracePeriod(Duration killGracePeriod) {
		this.killGracePeriod = killGracePeriod;
		return this;
	}

	@Override
	public SandboxSettings.Builder probeTimeout(Duration probeTimeout) {
		this.probeTimeout = probeTimeout;
		return this;
	}

	@Override
	public SandboxSettings.Builder maxConcurrent(int maxConcurrent) {
		this.maxConcurrent = maxConcurrent;
		return this;
	}

	@Override
	public SandboxSettings.Builder queueTimeout(Duration queueTimeout) {
		this.queueTimeout = queueTimeout;
		return this;
	}

	@Override
	public SandboxSettings.Builder workDirectory(Path workDirectory) {
		this.workDirectory = workDirectory;
		return this;
	}

	@Override
	public SandboxSettings.Builder passEnvironment(Iterable<String> names) {
		names.forEach(this.passEnvironment::add);
		return this;
	}

	@Override
	public SandboxSettings.Builder environment(Map<String, String> variables) {
		this.environment.putAll(variables);
		return this;
	}

	@Override
	public SandboxSettings.Builder unsharePath(Path unsharePath) {
		this.unsharePath = unsharePath;
		return this;
	}

	@Override
	public SandboxSettings.Builder setprivPath(Path setprivPath) {
		this.setprivPath = setprivPath;
		return this;
	}

	@Override
	public SandboxSettings.Builder mechanism(MechanismChoice mechanism) {
		this.mechanism = mechanism;
		return this;
	}

	@Override
	public SandboxSettings.Builder loopback(boolean loopback) {
		this.loopback = loopback;
		return this;
	}

	@Override
	public SandboxSettings.Builder readOnlyRoot(boolean readOnlyRoot) {
		this.readOnlyRoot = readOnlyRoot;
		return this;
	}

	@Override
	public SandboxSettings.Builder hiddenDirectories(Iterable<Path> directories) {
		this.hiddenDirectories = new ArrayList<>();
		directories.forEach(this.hiddenDirectories::add);
		return this;
	}

	@Override
	public SandboxSettings.Builder bwrapPath(Path bwrapPath) {
		this.bwrapPath = bwrapPath;
		return this;
	}

	@Override
	public SandboxSettings.Builder launcherPath(@Nullable Path launcherPath) {
		this.launcherPath = launcherPath;
		return this;
	}

	@Override
	public SandboxSettings.Builder userNamespaces(boolean userNamespaces) {
		this.userNamespaces = userNamespaces;
		return this;
	}

	@Override
	public SandboxSettings.Builder commandUser(int commandUser) {
		this.commandUser = commandUser;
		return this;
	}

	@Override
	public SandboxSettings.Builder commandUserRange(SandboxSettings.CommandUserRange commandUserRange) {
		this.commandUserRange = Objects.requireNonNull(commandUserRange, "commandUserRange must not be null");
		return this;
	}

	@Override
	public SandboxSettings.Builder sandboxExecPath(Path sandboxExecPath) {
		this.sandboxExecPath = sandboxExecPath;
		return this;
	}

	@Override
	public SandboxSettings.Builder limits(ResourceLimits limits) {
		this.limits = Objects.requireNonNull(limits, "limits must not be null");
		return this;
	}

	@Override
	public SandboxSettings.Builder filesystemView(SandboxSettings.Filesystem.View view) {
		this.filesystemView = Objects.requireNonNull(view, "view must not be null");
		return this;
	}

	@Override
	public SandboxSettings.Builder readablePaths(Iterable<Path> paths) {
		this.readablePaths = new ArrayList<>();
		paths.forEach(this.readablePaths::add);
		return this;
	}

	@Override
	public SandboxSettings.Builder writablePaths(Iterable<Path> paths) {
		this.writablePaths = new ArrayList<>();
		paths.forEach(this.writablePaths::add);
		return this;
	}

	@Override
	public SandboxSettings.Builder allowedHosts(Iterable<String> entries) {
		this.allowedHosts = new ArrayList<>();
		entries.forEach(this.allowedHosts::add);
		return this;
	}

	@Override
	public SandboxSettings.Builder allowPrivateDestinations(boolean allow) {
		this.allowPrivateDestinations = allow;
		return this;
	}

	@Override
	public SandboxSettings.Builder maxOutputFileBytes(long maxOutputFileBytes) {
		this.maxOutputFileBytes = maxOutputFileBytes;
		return this;
	}

	@Override
	public SandboxSettings.Builder warm(WarmPoolSettings warm) {
		this.warm = Objects.requireNonNull(warm, "warm must not be null");
		return this;
	}

	@Override
	public SandboxSettings build() {
		return new SandboxSettings(this.mode, this.timeout, this.maxOutputBytes, this.killGracePeriod,
				this.probeTimeout, this.maxConcurrent, this.queueTimeout, this.workDirectory,
				new SandboxSettings.Env(this.passEnvironment, this.environment),
				new SandboxSettings.Linux(this.unsharePath, this.setprivPath, this.bwrapPath, this.launcherPath,
						this.userNamespaces, this.commandUser, this.commandUserRange),
				this.mechanism, this.loopback, this.readOnlyRoot, this.hiddenDirectories,
				new SandboxSettings.Macos(this.sandboxExecPath), this.limits,
				new SandboxSettings.Filesystem(this.filesystemView, this.readablePaths, this.writablePaths),
				new SandboxSettings.Egress(this.allowedHosts, this.allowPrivateDestinations), this.maxOutputFileBytes,
				(this.warm != null) ? this.warm
						: WarmPoolSettings.DEFAULT.fitting(this.maxConcurrent, this.commandUserRange.size()));
	}

}
