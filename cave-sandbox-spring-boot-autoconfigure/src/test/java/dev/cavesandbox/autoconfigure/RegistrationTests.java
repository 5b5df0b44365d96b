package dev.cavesandbox.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The jar registers its auto-configuration and failure analyzer the Boot 4 way, so that
 * an application that adds the starter gets them without any annotation.
 */
class RegistrationTests {

	@Test
	void autoConfigurationIsListedInTheImportsFile() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
			.contains(CaveSandboxAutoConfiguration.class.getName());
	}

	@Test
	void failureAnalyzerIsRegisteredInSpringFactories() {
		assertThat(SpringFactoriesLoader.forDefaultResourceLocation()
			.load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.none(),
					(factoryType, factoryImplementationName, failure) -> {
						// Boot's own analyzers need constructor arguments; only ours
						// matters here.
					}))
			.anyMatch(NetworkIsolationUnavailableFailureAnalyzer.class::isInstance);
	}

}
