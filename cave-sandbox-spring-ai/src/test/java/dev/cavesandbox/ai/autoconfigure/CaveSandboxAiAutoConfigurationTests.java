package dev.cavesandbox.ai.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.ai.CodeExecutionResult;
import dev.cavesandbox.ai.CodeExecutionTool;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.tool.ToolCallback;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The code-execution tool's auto-configuration, with this host's real sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class CaveSandboxAiAutoConfigurationTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(CaveSandboxAutoConfiguration.class, CaveSandboxAiAutoConfiguration.class));

	private static CodeExecutionResult call(ToolCallback callback, String json) {
		return JSON.readValue(callback.call(json), CodeExecutionResult.class);
	}

	@Test
	void exposesTheToolAsAToolCallbackWhenEnabled() {
		this.runner.withPropertyValues("cave.sandbox.ai.code-execution.enabled=true").run((context) -> {
			ToolCallback callback = context.getBean("caveSandboxRunCodeToolCallback", ToolCallback.class);
			assertThat(callback.getToolDefinition().name()).isEqualTo(CodeExecutionTool.TOOL_NAME);
			CodeExecutionResult result = call(callback, "{\"language\":\"python\",\"code\":\"print(6*7)\"}");
			assertThat(result.stdout()).isEqualTo("42\n");
			assertThat(result.isolation()).isEqualTo(context.getBean(IsolatedExecutor.class).isolation().toString());
		});
	}

	@Test
	void isOffUnlessEnabled() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(IsolatedExecutor.class)
			.doesNotHaveBean(CodeExecutionTool.class)
			.doesNotHaveBean(ToolCallback.class));
	}

	@Test
	void backsOffWithoutSpringAi() {
		this.runner.withPropertyValues("cave.sandbox.ai.code-execution.enabled=true")
			.withClassLoader(new FilteredClassLoader("org.springframework.ai."))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean(CodeExecutionTool.class)
				.doesNotHaveBean("caveSandboxRunCodeToolCallback"));
	}

	@Test
	void runsTheConfiguredLanguagesWithTheConfiguredOutputSize() {
		this.runner
			.withPropertyValues("cave.sandbox.ai.code-execution.enabled=true",
					"cave.sandbox.ai.code-execution.languages.isolated-python=python3,-I",
					"cave.sandbox.ai.code-execution.max-output=10B")
			.run((context) -> {
				ToolCallback callback = context.getBean(ToolCallback.class);
				CodeExecutionResult result = call(callback,
						"{\"language\":\"isolated-python\",\"code\":\"import sys\\nprint(sys.flags.isolated, 'x' * 20)\"}");
				assertThat(result.stdout()).startsWith("1 xxxxxxxx\n" + CodeExecutionResult.TRUNCATED_MARKER);
				assertThat(result.stdoutTruncated()).isTrue();
				assertThat(call(callback, "{\"language\":\"python\",\"code\":\"print(1)\"}").error())
					.isEqualTo("Unknown language 'python'; the configured languages are [isolated-python]");
			});
	}

	@Test
	void backsOffFromTheApplicationsOwnTool() {
		this.runner.withPropertyValues("cave.sandbox.ai.code-execution.enabled=true")
			.withUserConfiguration(OwnToolConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(CodeExecutionTool.class).hasBean("ownTool");
				assertThat(context.getBean(ToolCallback.class).getToolDefinition().description())
					.endsWith("Languages: own.");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnToolConfiguration {

		@Bean
		CodeExecutionTool ownTool(IsolatedExecutor executor) {
			return new CodeExecutionTool(executor, Map.of("own", List.of("own-interpreter")), Duration.ofSeconds(1), 1);
		}

	}

}
