package dev.cavesandbox.autoconfigure;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runtime hints of a native image, as every {@link RuntimeHintsRegistrar} of
 * {@code META-INF/spring/aot.factories} on the class path registers them (this module's
 * and Spring's): each resource that the core reads at run time, and the reflection that
 * binding {@code cave.sandbox.*} and the starter's factories need.
 */
class CaveSandboxRuntimeHintsTests {

	private final RuntimeHints hints = registeredHints();

	@Test
	void registeredThroughAotFactories() {
		assertThat(SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
			.load(RuntimeHintsRegistrar.class)).hasAtLeastOneElementOfType(CaveSandboxRuntimeHints.class);
	}

	@Test
	void launcherAndItsPropertiesOfEveryPlatform() {
		for (String platform : List.of("linux-x86_64", "linux-aarch64")) {
			assertResource("dev/cavesandbox/launcher/" + platform + "/cave-sandbox-launcher");
			assertResource("dev/cavesandbox/launcher/" + platform + "/launcher.properties");
		}
	}

	@Test
	void sharedMemoryPreloadLibraryOfEveryPlatform() {
		for (String platform : List.of("linux-x86_64", "linux-aarch64")) {
			assertResource("dev/cavesandbox/launcher/" + platform + "/libcave-shm.so");
		}
	}

	@Test
	void shellScriptOfTheProbe() {
		assertResource("dev/cavesandbox/scripts/probe.sh");
	}

	/**
	 * Every resource of the core's jar (class files aside) is in the hints, so that a
	 * resource added to the core without a hint fails here.
	 */
	@Test
	void everyResourceOfTheCore() throws IOException {
		PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
		List<String> names = Stream
			.concat(Arrays.stream(resolver.getResources("classpath*:dev/cavesandbox/launcher/**")),
					Arrays.stream(resolver.getResources("classpath*:dev/cavesandbox/scripts/**")))
			.map(this::coreName)
			.filter((name) -> !name.endsWith("/"))
			.toList();
		assertThat(names).contains("dev/cavesandbox/scripts/probe.sh")
			.anyMatch((name) -> name.endsWith("/cave-sandbox-launcher"))
			.anyMatch((name) -> name.endsWith("/libcave-shm.so"))
			.anyMatch((name) -> name.endsWith("/launcher.properties"));
		names.forEach(this::assertResource);
	}

	@Test
	void reflectionForBindingTheProperties() {
		for (Class<?> type : List.of(CaveSandboxProperties.class, CaveSandboxProperties.Linux.class,
				CaveSandboxProperties.Limits.class, CaveSandboxProperties.Egress.class,
				CaveSandboxProperties.Filesystem.class, CaveSandboxProperties.Env.class)) {
			assertThat(RuntimeHintsPredicates.reflection().onType(type)).as(type.getName()).accepts(this.hints);
			assertThat(RuntimeHintsPredicates.reflection().onConstructorInvocation(type.getDeclaredConstructors()[0]))
				.as(type.getName())
				.accepts(this.hints);
		}
	}

	@Test
	void failureAnalyzerAndEnvironmentPostProcessorOfSpringFactories() {
		for (String type : List.of("dev.cavesandbox.autoconfigure.NetworkIsolationUnavailableFailureAnalyzer",
				"dev.cavesandbox.autoconfigure.health.SandboxHealthStatusEnvironmentPostProcessor")) {
			assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(type))).as(type).accepts(this.hints);
		}
	}

	private void assertResource(String name) {
		assertThat(RuntimeHintsPredicates.resource().forResource(name)).as(name).accepts(this.hints);
	}

	private String coreName(Resource resource) {
		try {
			String url = resource.getURL().toString();
			return url.substring(url.lastIndexOf("dev/cavesandbox/"));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static RuntimeHints registeredHints() {
		RuntimeHints hints = new RuntimeHints();
		ClassLoader classLoader = CaveSandboxRuntimeHintsTests.class.getClassLoader();
		SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories", classLoader)
			.load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, classLoader));
		return hints;
	}

}
