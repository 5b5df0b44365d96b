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

	/**
	 * The uids of the command user range bound so far; the record binds {@code linux}
	 * before {@code warm}, so it is known at {@code warm.size}.
	 */
	private long commandUsers = SandboxSettings.CommandUserRange.DEFAULT.size();

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
		return switch (name.substring(PREFIX.length())) {
			case "mode" -> {
				this.mode = (SandboxMode) value;
				yield null;
			}
			case "mechanism" -> mechanismViolation((MechanismChoice) value);
			case "timeout", "kill-grace-period", "probe-timeout", "queue-timeout", "limits.cpu-time", "warm.max-age" ->
				positive(!((Duration) value).isZero() && !((Duration) value).isNegative());
			case "max-output", "output-files.max-size", "limits.memory", "limits.file-size", "limits.tmpfs-size" ->
				positive(((DataSize) value).toBytes() > 0);
			case "max-concurrent" -> {
				this.maxConcurrent = (Integer) value;
				yield positive(this.maxConcurrent > 0);
			}
			case "limits.processes", "limits.open-files" -> positive(((Integer) value) > 0);
			case "linux.command-user-range" -> commandUserRangeViolation((String) value);
			case "warm.size" -> warmSizeViolation((Integer) value);
			case "linux.command-user" ->
				(((Integer) value) < 0) ? "must be a uid (0 keeps a root JVM's commands root)" : null;
			// Strings, not Paths: Boot would resolve "/" against the class path.
			case "filesystem.readable-paths", "filesystem.writable-paths", "hidden-directories" ->
				pathsViolation((List<?>) value);
			case "egress.allowed-hosts" -> allowListViolation((List<?>) value);
			case "env.set" -> variablesViolation((Map<?, ?>) value);
			case "env.pass" -> namesToPassViolation((List<?>) value);
			default -> null;
		};
	}

	private @Nullable String mechanismViolation(MechanismChoice mechanism) {
		if (mechanism == MechanismChoice.NONE && this.mode != SandboxMode.FALLBACK) {
			return "none runs commands without isolation and is only allowed with cave.sandbox.mode=fallback; "
					+ "set cave.sandbox.mechanism=auto to isolate";
		}
		return null;
	}

	private static @Nullable String positive(boolean positive) {
		return positive ? null : "must be positive";
	}

	private @Nullable String commandUserRangeViolation(String value) {
		SandboxSettings.CommandUserRange range;
		try {
			range = SandboxSettings.CommandUserRange.parse(value);
		}
		catch (IllegalArgumentException ex) {
			return ex.getMessage();
		}
		this.commandUsers = range.size();
		return (range.size() < this.maxConcurrent) ? "holds " + range.size()
				+ " uids, fewer than cave.sandbox.max-concurrent (" + this.maxConcurrent + "): each execution of "
				+ "a root JVM on the seccomp mechanism runs as a uid of its own; widen the range or lower "
				+ "cave.sandbox.max-concurrent" : null;
	}

	private @Nullable String warmSizeViolation(int size) {
		if (size < 0) {
			return "must not be negative (0 turns the pool of warm sandboxes off)";
		}
		if (size > this.maxConcurrent) {
			return "must not exceed cave.sandbox.max-concurrent (" + this.maxConcurrent + ")";
		}
		return (this.commandUsers < (long) this.maxConcurrent + size) ? "and cave.sandbox.max-concurrent ("
				+ this.maxConcurrent + ") need " + ((long) this.maxConcurrent + size)
				+ " uids, more than cave.sandbox.linux.command-user-range holds (" + this.commandUsers
				+ "): each execution and each warm sandbox of a root JVM on the seccomp mechanism runs as a uid "
				+ "of its own; widen the range or lower cave.sandbox.warm.size" : null;
	}

	private static @Nullable String pathsViolation(List<?> paths) {
		for (Object listed : paths) {
			Path path = Path.of((String) listed);
			if (!path.isAbsolute() || path.getParent() == null) {
				return "must list absolute paths other than /, but has " + listed;
			}
		}
		return null;
	}

	private static @Nullable String allowListViolation(List<?> entries) {
		try {
			EgressAllowList.of(entries.stream().map(String::valueOf).toList());
			return null;
		}
		catch (IllegalArgumentException ex) {
			return ex.getMessage();
		}
	}

	private static @Nullable String variablesViolation(Map<?, ?> variables) {
		for (Map.Entry<?, ?> variable : variables.entrySet()) {
			String name = (String) variable.getKey();
			if (!SandboxSettings.isValidVariableName(name) || ((String) variable.getValue()).indexOf('\0') >= 0) {
				return "variable '" + name.replace('\0', '?')
						+ "' must have a non-empty name without '=' and no NUL byte in its name or value";
			}
		}
		return null;
	}

	private static @Nullable String namesToPassViolation(List<?> names) {
		for (Object name : names) {
			if (!SandboxSettings.isValidVariableName((String) name)) {
				return "variable name '" + ((String) name).replace('\0', '?')
						+ "' must be non-empty, without '=' and without NUL byte";
			}
		}
		return null;
	}

}
