package dev.cavesandbox.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.SandboxMode;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.egress.EgressAllowList;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.util.unit.DataSize;

/**
 * The rules of {@code cave.sandbox.*} values, checked as each value is bound: a value
 * that breaks one fails the binding of that property, so Boot's failure report names the
 * property, shows the value as typed and says where it came from.
 * {@code ProbedCapability} binds with it before anything is probed.
 */
final class CaveSandboxBindHandler extends AbstractBindHandler {

	private static final String PREFIX = "cave.sandbox.";

	/**
	 * The mode bound so far; the record binds {@code mode} first, so it is known at
	 * {@code mechanism}.
	 */
	private SandboxMode mode = SandboxSettings.defaults().mode();

	/**
	 * The concurrency bound so far; the record binds {@code max-concurrent} before
	 * {@code linux}, so it is known at {@code linux.command-user-range}.
	 */
	private int maxConcurrent = SandboxSettings.defaults().maxConcurrent();

	CaveSandboxBindHandler(BindHandler parent) {
		super(parent);
	}

	@Override
	public @Nullable Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
			Object result) {
		String violation = violation(name.toString(), result);
		if (violation != null) {
			throw new IllegalArgumentException(violation);
		}
		return super.onSuccess(name, target, context, result);
	}

	private @Nullable String violation(String name, Object value) {
		if (!name.startsWith(PREFIX)) {
			return null;
		}
		switch (name.substring(PREFIX.length())) {
			case "mode" -> this.mode = (SandboxMode) value;
			case "mechanism" -> {
				if (value == MechanismChoice.NONE && this.mode != SandboxMode.FALLBACK) {
					return "none runs commands without isolation and is only allowed with cave.sandbox.mode=fallback; "
							+ "set cave.sandbox.mechanism=auto to isolate";
				}
			}
			case "timeout", "kill-grace-period", "probe-timeout", "queue-timeout", "limits.cpu-time" -> {
				Duration duration = (Duration) value;
				return (duration.isZero() || duration.isNegative()) ? "must be positive" : null;
			}
			case "max-output", "limits.memory", "limits.file-size", "limits.tmpfs-size" -> {
				return (((DataSize) value).toBytes() <= 0) ? "must be positive" : null;
			}
			case "max-concurrent", "limits.processes", "limits.open-files" -> {
				if (name.endsWith("max-concurrent")) {
					this.maxConcurrent = (Integer) value;
				}
				return (((Integer) value) <= 0) ? "must be positive" : null;
			}
			case "linux.command-user-range" -> {
				SandboxSettings.CommandUserRange range;
				try {
					range = SandboxSettings.CommandUserRange.parse((String) value);
				}
				catch (IllegalArgumentException ex) {
					return ex.getMessage();
				}
				return (range.size() < this.maxConcurrent)
						? "holds " + range.size() + " uids, fewer than cave.sandbox.max-concurrent ("
								+ this.maxConcurrent + "): each execution of "
								+ "a root JVM on the seccomp rung runs as a uid of its own; widen the range or lower "
								+ "cave.sandbox.max-concurrent"
						: null;
			}
			case "linux.command-user" -> {
				return (((Integer) value) < 0) ? "must be a uid (0 keeps a root JVM's commands root)" : null;
			}
			case "filesystem.readable-paths", "filesystem.writable-paths" -> {
				for (Object listed : (List<?>) value) {
					Path path = Path.of((String) listed);
					if (!path.isAbsolute() || path.getParent() == null) {
						return "must list absolute paths other than /, but has " + listed;
					}
				}
			}
			case "egress.allowed-hosts" -> {
				try {
					EgressAllowList.of(((List<?>) value).stream().map(String::valueOf).toList());
				}
				catch (IllegalArgumentException ex) {
					return ex.getMessage();
				}
			}
			case "hidden-directories" -> {
				// Strings, not Paths: Boot would resolve "/" against the class path.
				for (Object directory : (List<?>) value) {
					Path path = Path.of((String) directory);
					if (!path.isAbsolute() || path.getParent() == null) {
						return "must list absolute paths other than /, but has " + directory;
					}
				}
			}
			case "env.set" -> {
				for (Map.Entry<?, ?> variable : ((Map<?, ?>) value).entrySet()) {
					String variableName = (String) variable.getKey();
					if (!SandboxSettings.isValidVariableName(variableName)
							|| ((String) variable.getValue()).indexOf('\0') >= 0) {
						return "variable '" + variableName.replace('\0', '?')
								+ "' must have a non-empty name without '=' and no NUL byte in its name or value";
					}
				}
			}
			case "env.pass" -> {
				for (Object variableName : (List<?>) value) {
					if (!SandboxSettings.isValidVariableName((String) variableName)) {
						return "variable name '" + ((String) variableName).replace('\0', '?')
								+ "' must be non-empty, without '=' and without NUL byte";
					}
				}
			}
			default -> {
			}
		}
		return null;
	}

}
