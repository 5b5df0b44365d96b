package dev.cavesandbox;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What of the {@link SandboxSettings} the isolation probe verifies
 * ({@link SandboxSettings#probed()}): the mode and the mechanism with its host paths, and
 * what shapes the sandbox the probe runs (loopback, filesystem view, work directory,
 * limits). An executor must run with what its capability was probed with; the other
 * settings are defaults of each execution and bounds of the executor, used without a
 * probe. The components are those of {@link SandboxSettings} of the same names.
 *
 * @param mode what to do when isolation is unavailable
 * @param mechanism which mechanism isolates the commands
 * @param linux the host paths and users of the Linux mechanisms
 * @param macos the host paths of the macOS mechanism
 * @param loopback whether commands get a private loopback interface that is up
 * @param readOnlyRoot whether the host's filesystem is read-only in the sandbox
 * @param hiddenDirectories the host directories replaced by private tmpfs mounts
 * @param filesystem what of the host's filesystem every command sees
 * @param workDirectory where the private working directories are created
 * @param limits the resource limits of every command
 */
public record ProbedSettings(SandboxMode mode, MechanismChoice mechanism, SandboxSettings.Linux linux,
		SandboxSettings.Macos macos, boolean loopback, boolean readOnlyRoot, List<Path> hiddenDirectories,
		SandboxSettings.Filesystem filesystem, Path workDirectory, ResourceLimits limits) {

	public ProbedSettings {
		Objects.requireNonNull(mode, "mode must not be null");
		Objects.requireNonNull(mechanism, "mechanism must not be null");
		Objects.requireNonNull(linux, "linux must not be null");
		Objects.requireNonNull(macos, "macos must not be null");
		hiddenDirectories = List.copyOf(hiddenDirectories);
		Objects.requireNonNull(filesystem, "filesystem must not be null");
		Objects.requireNonNull(workDirectory, "workDirectory must not be null");
		Objects.requireNonNull(limits, "limits must not be null");
	}

	/**
	 * Name the settings that differ in other probed settings.
	 * @param other the settings to compare these with
	 * @return one {@code "NAME OLD -> NEW"} entry for each setting that differs, OLD this
	 * one's value and NEW the other's (an enum constant as its value in lower case, as in
	 * {@code bwrap}), NAME as in {@code linux.bwrapPath}; in the order {@code mode},
	 * {@code mechanism}, the {@code linux.*} values, {@code macos.sandboxExecPath},
	 * {@code loopback}, {@code readOnlyRoot}, {@code hiddenDirectories}, the
	 * {@code filesystem.*} values, {@code workDirectory}, {@code limits}; empty if none
	 * does
	 */
	public List<String> changesTo(ProbedSettings other) {
		Map<String, @Nullable Object> before = named();
		Map<String, @Nullable Object> after = other.named();
		return before.keySet()
			.stream()
			.filter((name) -> !Objects.equals(before.get(name), after.get(name)))
			.map((name) -> name + " " + value(before.get(name)) + " -> " + value(after.get(name)))
			.toList();
	}

	/**
	 * A value as it is set: an enum constant as its property value ({@code sandbox-exec},
	 * not {@code SANDBOX_EXEC}).
	 */
	private static @Nullable Object value(@Nullable Object value) {
		return (value instanceof Enum<?> constant) ? constant.name().toLowerCase(Locale.ROOT).replace('_', '-') : value;
	}

	private Map<String, @Nullable Object> named() {
		Map<String, @Nullable Object> named = new LinkedHashMap<>();
		named.put("mode", this.mode);
		named.put("mechanism", this.mechanism);
		named.put("linux.unsharePath", this.linux.unsharePath());
		named.put("linux.setprivPath", this.linux.setprivPath());
		named.put("linux.bwrapPath", this.linux.bwrapPath());
		named.put("linux.launcherPath", this.linux.launcherPath());
		named.put("linux.userNamespaces", this.linux.userNamespaces());
		named.put("linux.commandUser", this.linux.commandUser());
		named.put("linux.commandUserRange", this.linux.commandUserRange());
		named.put("macos.sandboxExecPath", this.macos.sandboxExecPath());
		named.put("loopback", this.loopback);
		named.put("readOnlyRoot", this.readOnlyRoot);
		named.put("hiddenDirectories", this.hiddenDirectories);
		named.put("filesystem.view", this.filesystem.view());
		named.put("filesystem.readablePaths", this.filesystem.readablePaths());
		named.put("filesystem.writablePaths", this.filesystem.writablePaths());
		named.put("workDirectory", this.workDirectory);
		named.put("limits", this.limits);
		return named;
	}

}
