package dev.cavesandbox.autoconfigure;

import dev.cavesandbox.SandboxSettings;

/**
 * Callback that customizes the {@link SandboxSettings} of the auto-configured
 * {@link dev.cavesandbox.IsolatedExecutor}, after {@code cave.sandbox.*} was bound: for
 * executor-side values that are easier to compute than to configure (a timeout, the
 * output cap, the concurrency, the children's environment). Beans of this type are
 * applied in their {@link org.springframework.core.Ordered order}.
 * <p>
 * What the startup probe verified cannot be customized: the mode, the mechanism and its
 * binaries, the loopback, the read-only root, the hidden directories, the work directory
 * and the resource limits ({@code cave.sandbox.limits.*}: the probe runs before any bean
 * exists, and states the limits it saw the command get). A customizer that changes one of
 * them fails startup; set them with their properties instead. One execution's limits can
 * still differ: {@link dev.cavesandbox.ExecutionRequest.Builder#limits}.
 */
@FunctionalInterface
public interface SandboxSettingsCustomizer {

	/**
	 * Customize the settings.
	 * @param settings the settings bound from {@code cave.sandbox.*}, to change in place
	 */
	void customize(SandboxSettings.Builder settings);

}
