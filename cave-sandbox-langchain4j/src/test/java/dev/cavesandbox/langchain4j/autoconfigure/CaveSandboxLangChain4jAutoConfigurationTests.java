package dev.cavesandbox.langchain4j.autoconfigure;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionEngine;
import dev.cavesandbox.langchain4j.SandboxedCodeExecutionTool;
import dev.langchain4j.code.CodeExecutionEngine;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The code-execution engine's and tool's auto-configuration, with this host's real
 * sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class CaveSandboxLangChain4jAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(CaveSandboxAutoConfiguration.class, CaveSandboxLangChain4jAutoConfiguration.class));

	@Test
	void exposesAPythonEngineAndAToolOfEveryLanguageWhenEnabled() {
		this.runner.withPropertyValues("cave.sandbox.langchain4j.code-execution.enabled=true").run((context) -> {
			CodeExecutionEngine engine = context.getBean(CodeExecutionEngine.class);
			assertThat(engine).isInstanceOf(SandboxedCodeExecutionEngine.class);
			assertThat(engine.execute("print(6 * 7)")).isEqualTo("42");
			SandboxedCodeExecutionTool tool = context.getBean(SandboxedCodeExecutionTool.class);
			assertThat(tool.languages()).containsExactly("python", "javascript", "shell");
			assertThat(tool.runCode("javascript", "console.log(6 * 7)")).isEqualTo("42");
		});
	}

	@Test
	void isOffUnlessEnabled() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(IsolatedExecutor.class)
			.doesNotHaveBean(CodeExecutionEngine.class)
			.doesNotHaveBean(SandboxedCodeExecutionTool.class));
	}

	@Test
	void backsOffWithoutLangChain4j() {
		this.runner.withPropertyValues("cave.sandbox.langchain4j.code-execution.enabled=true")
			.withClassLoader(new FilteredClassLoader("dev.langchain4j."))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IsolatedExecutor.class)
				.doesNotHaveBean("caveSandboxCodeExecutionEngine")
				.doesNotHaveBean("caveSandboxCodeExecutionTool"));
	}

	@Test
	void runsTheConfiguredLanguageWithTheConfiguredLimits() {
		this.runner
			.withPropertyValues("cave.sandbox.langchain4j.code-execution.enabled=true",
					"cave.sandbox.langchain4j.code-execution.languages.isolated-python=python3,-I",
					"cave.sandbox.langchain4j.code-execution.language=isolated-python",
					"cave.sandbox.langchain4j.code-execution.max-output=10B",
					"cave.sandbox.langchain4j.code-execution.timeout=700ms")
			.run((context) -> {
				CodeExecutionEngine engine = context.getBean(CodeExecutionEngine.class);
				assertThat(engine.execute("import sys\nprint(sys.flags.isolated, 'x' * 20)"))
					.isEqualTo("1 xxxxxxxx\n[output truncated at 10 bytes]");
				assertThat(engine.execute("import time\ntime.sleep(30)")).startsWith("Timed out after 700 ms");
				assertThat(context.getBean(SandboxedCodeExecutionTool.class).languages())
					.containsExactly("isolated-python");
			});
	}

	@Test
	void aLanguageThatIsNotConfiguredFailsStartupNamingTheProperties() {
		this.runner
			.withPropertyValues("cave.sandbox.langchain4j.code-execution.enabled=true",
					"cave.sandbox.langchain4j.code-execution.language=ruby")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("cave.sandbox.langchain4j.code-execution.language is 'ruby', which is none of "
						+ "cave.sandbox.langchain4j.code-execution.languages: python, javascript, shell"));
	}

	@Test
	void anEngineOfTheApplicationReplacesTheSandboxedOneButNotTheTool() {
		this.runner.withPropertyValues("cave.sandbox.langchain4j.code-execution.enabled=true")
			.withBean(CodeExecutionEngine.class, () -> (code) -> "own engine")
			.run((context) -> {
				assertThat(context).doesNotHaveBean("caveSandboxCodeExecutionEngine")
					.hasSingleBean(SandboxedCodeExecutionTool.class);
				assertThat(context.getBean(CodeExecutionEngine.class).execute("x")).isEqualTo("own engine");
			});
	}

}
