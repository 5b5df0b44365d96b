package dev.cavesandbox.ai.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binding of {@code cave.sandbox.ai.*}.
 */
class CaveSandboxAiPropertiesTests {

	private static CaveSandboxAiProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("cave.sandbox.ai",
				CaveSandboxAiProperties.class);
	}

	@Test
	void theToolIsOffAndRunsPythonAndShellByDefault() {
		CaveSandboxAiProperties.CodeExecution codeExecution = bind(Map.of()).codeExecution();
		assertThat(codeExecution.enabled()).isFalse();
		assertThat(codeExecution.languages()).containsExactly(Map.entry("python", List.of("python3")),
				Map.entry("shell", List.of("sh")));
		assertThat(codeExecution.timeout()).isEqualTo(Duration.ofSeconds(10));
		assertThat(codeExecution.maxOutput()).isEqualTo(DataSize.ofKilobytes(8));
		assertThat(bind(Map.of()).mcp()).isEmpty();
	}

	@Test
	void configuredLanguagesReplaceTheDefaults() {
		CaveSandboxAiProperties properties = bind(Map.of("cave.sandbox.ai.code-execution.languages.node", "node",
				"cave.sandbox.ai.code-execution.languages.python", "python3,-I"));
		assertThat(properties.codeExecution().languages()).containsOnly(Map.entry("node", List.of("node")),
				Map.entry("python", List.of("python3", "-I")));
	}

	@Test
	void bindsTheSandboxOfEachMcpConnection() {
		CaveSandboxAiProperties properties = bind(Map.of("cave.sandbox.ai.mcp.github.allowed-hosts",
				"api.github.com,*.githubusercontent.com", "cave.sandbox.ai.mcp.files.readable-paths", "/opt/mcp"));
		assertThat(properties.mcp()).containsOnlyKeys("github", "files");
		assertThat(properties.mcp().get("github").allowedHosts()).containsExactly("api.github.com",
				"*.githubusercontent.com");
		assertThat(properties.mcp().get("github").readablePaths()).isEmpty();
		assertThat(properties.mcp().get("files").allowedHosts()).isEmpty();
		assertThat(properties.mcp().get("files").readablePaths()).containsExactly("/opt/mcp");
	}

}
