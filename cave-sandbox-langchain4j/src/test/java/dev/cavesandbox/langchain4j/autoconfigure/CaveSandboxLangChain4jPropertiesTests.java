package dev.cavesandbox.langchain4j.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binding of {@code cave.sandbox.langchain4j.*}, without a sandbox.
 */
class CaveSandboxLangChain4jPropertiesTests {

	private static CaveSandboxLangChain4jProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("cave.sandbox.langchain4j",
				CaveSandboxLangChain4jProperties.class);
	}

	@Test
	void defaultsToPythonOfThreeLanguagesOffAndNoServers() {
		CaveSandboxLangChain4jProperties properties = bind(Map.of());
		CaveSandboxLangChain4jProperties.CodeExecution codeExecution = properties.codeExecution();
		assertThat(codeExecution.enabled()).isFalse();
		assertThat(codeExecution.language()).isEqualTo("python");
		assertThat(codeExecution.languages()).containsExactly(Map.entry("python", List.of("python3")),
				Map.entry("javascript", List.of("node")), Map.entry("shell", List.of("sh")));
		assertThat(codeExecution.timeout()).isEqualTo(Duration.ofSeconds(10));
		assertThat(codeExecution.maxOutput()).isEqualTo(DataSize.ofKilobytes(8));
		assertThat(properties.mcp().servers()).isEmpty();
		assertThat(properties.mcp().initializationTimeout()).isEqualTo(Duration.ofSeconds(30));
		assertThat(properties.mcp().toolExecutionTimeout()).isEqualTo(Duration.ofSeconds(60));
	}

	@Test
	void configuredLanguagesReplaceTheDefaultOnes() {
		CaveSandboxLangChain4jProperties properties = bind(
				Map.of("cave.sandbox.langchain4j.code-execution.languages.python", "python3,-I"));
		assertThat(properties.codeExecution().languages())
			.containsExactly(Map.entry("python", List.of("python3", "-I")));
	}

	@Test
	void bindsAServersCommandEnvironmentAllowListAndReadablePaths() {
		CaveSandboxLangChain4jProperties properties = bind(Map.of("cave.sandbox.langchain4j.mcp.servers.files.command",
				"npx,server", "cave.sandbox.langchain4j.mcp.servers.files.environment.TOKEN", "t",
				"cave.sandbox.langchain4j.mcp.servers.files.allowed-hosts", "api.example.org",
				"cave.sandbox.langchain4j.mcp.servers.files.readable-paths", "/opt/servers"));
		CaveSandboxLangChain4jProperties.Server server = properties.mcp().servers().get("files");
		assertThat(server.command()).containsExactly("npx", "server");
		assertThat(server.environment()).containsExactly(Map.entry("TOKEN", "t"));
		assertThat(server.allowedHosts()).containsExactly("api.example.org");
		assertThat(server.readablePaths()).containsExactly("/opt/servers");
	}

}
