package dev.cavesandbox.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;

/**
 * The {@link RuntimeHints} of cave-sandbox for a GraalVM native image (registered in
 * {@code META-INF/spring/aot.factories}): the class-path resources that the core reads
 * when it runs, and reflection for binding {@code cave.sandbox.*}, which the probe does
 * itself before the properties bean exists.
 * <ul>
 * <li>{@code dev/cavesandbox/launcher/<platform>/}: the native launcher
 * ({@code cave-sandbox-launcher}), the shared-memory preload library
 * ({@code libcave-shm.so}) and {@code launcher.properties} (their SHA-256 and the
 * launcher's interface version), for every platform the jar holds ({@code linux-x86_64},
 * {@code linux-aarch64});</li>
 * <li>{@code dev/cavesandbox/scripts/*.sh}: the {@code sh} script of the probe;</li>
 * <li>{@link CaveSandboxProperties} and its nested records, as
 * {@link BindableRuntimeHintsRegistrar} describes them.</li>
 * </ul>
 */
class CaveSandboxRuntimeHints implements RuntimeHintsRegistrar {

	private static final String LAUNCHER = "dev/cavesandbox/launcher/*/";

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources()
			.registerPattern(LAUNCHER + "cave-sandbox-launcher")
			.registerPattern(LAUNCHER + "libcave-shm.so")
			.registerPattern(LAUNCHER + "launcher.properties")
			.registerPattern("dev/cavesandbox/scripts/*.sh");
		BindableRuntimeHintsRegistrar.forTypes(CaveSandboxProperties.class).registerHints(hints, classLoader);
	}

}
