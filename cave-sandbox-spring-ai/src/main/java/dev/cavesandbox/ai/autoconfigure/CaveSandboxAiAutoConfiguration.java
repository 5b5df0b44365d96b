package dev.cavesandbox.ai.autoconfigure;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.ai.CodeExecutionTool;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;

import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.function.FunctionToolCallback;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the {@link CodeExecutionTool code-execution tool}: a
 * {@link ToolCallback} bean named {@value CodeExecutionTool#TOOL_NAME} for a model, when
 * Spring AI is on the class path and {@code cave.sandbox.ai.code-execution.enabled=true}.
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class)
@ConditionalOnClass({ ToolCallback.class, FunctionToolCallback.class })
@ConditionalOnBooleanProperty("cave.sandbox.ai.code-execution.enabled")
@ConditionalOnBean(IsolatedExecutor.class)
@EnableConfigurationProperties(CaveSandboxAiProperties.class)
public final class CaveSandboxAiAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	CodeExecutionTool caveSandboxCodeExecutionTool(IsolatedExecutor executor, CaveSandboxAiProperties properties) {
		CaveSandboxAiProperties.CodeExecution codeExecution = properties.codeExecution();
		return new CodeExecutionTool(executor, codeExecution.languages(), codeExecution.timeout(),
				codeExecution.maxOutput().toBytes());
	}

	@Bean
	@ConditionalOnMissingBean(name = "caveSandboxRunCodeToolCallback")
	ToolCallback caveSandboxRunCodeToolCallback(CodeExecutionTool tool) {
		return tool.toolCallback();
	}

}
