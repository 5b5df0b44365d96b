package dev.cavesandbox.langchain4j.autoconfigure;

import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionEngine;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionTool;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.code.CodeExecutionEngine;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the sandboxed code execution for LangChain4j: a
 * {@link CodeExecutionEngine} bean ({@link SandboxedCodeExecutionEngine} of
 * {@code cave.sandbox.langchain4j.code-execution.language}) and the
 * {@link SandboxedCodeExecutionTool} bean over every configured language, when
 * langchain4j-core is on the class path and
 * {@code cave.sandbox.langchain4j.code-execution.enabled=true}. It conditions on
 * langchain4j-core's classes, not on LangChain4j's Spring Boot starter, whose 1.11 line
 * is built on Spring Boot 3.5 (it works on Boot 4.1: {@code compat/langchain4j}). With
 * that starter, name the tool in the {@code @AiService}
 * ({@code wiringMode = EXPLICIT, tools = "caveSandboxCodeExecutionTool"}): its automatic
 * wiring finds {@link Tool} beans by their declared bean class, which the bean of a
 * {@code @Bean} method does not have.
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class)
@ConditionalOnClass({ CodeExecutionEngine.class, Tool.class })
@ConditionalOnBooleanProperty("cave.sandbox.langchain4j.code-execution.enabled")
@ConditionalOnBean(IsolatedExecutor.class)
@EnableConfigurationProperties(CaveSandboxLangChain4jProperties.class)
public final class CaveSandboxLangChain4jAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(CodeExecutionEngine.class)
	SandboxedCodeExecutionEngine caveSandboxCodeExecutionEngine(IsolatedExecutor executor,
			CaveSandboxLangChain4jProperties properties) {
		CaveSandboxLangChain4jProperties.CodeExecution codeExecution = properties.codeExecution();
		if (!codeExecution.languages().containsKey(codeExecution.language())) {
			throw new IllegalStateException(
					"cave.sandbox.langchain4j.code-execution.language is '" + codeExecution.language()
							+ "', which is none of cave.sandbox.langchain4j.code-execution.languages: "
							+ String.join(", ", codeExecution.languages().keySet()));
		}
		return engine(executor, codeExecution, codeExecution.language());
	}

	@Bean
	@ConditionalOnMissingBean
	SandboxedCodeExecutionTool caveSandboxCodeExecutionTool(IsolatedExecutor executor,
			CaveSandboxLangChain4jProperties properties) {
		CaveSandboxLangChain4jProperties.CodeExecution codeExecution = properties.codeExecution();
		List<SandboxedCodeExecutionEngine> engines = codeExecution.languages()
			.keySet()
			.stream()
			.map((language) -> engine(executor, codeExecution, language))
			.toList();
		return new SandboxedCodeExecutionTool(engines);
	}

	private static SandboxedCodeExecutionEngine engine(IsolatedExecutor executor,
			CaveSandboxLangChain4jProperties.CodeExecution codeExecution, String language) {
		return new SandboxedCodeExecutionEngine(executor, language, codeExecution.languages().get(language),
				codeExecution.timeout(), codeExecution.maxOutput().toBytes());
	}

}
