package dev.cavesandbox.langchain4j;

import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The code-execution tool, called as LangChain4j's tool machinery calls a {@code @Tool}
 * method, running code in this host's real sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class SandboxedCodeExecutionToolTests {

	private final IsolatedExecutor executor = TestSandbox.executor();

	private final SandboxedCodeExecutionTool tool = new SandboxedCodeExecutionTool(
			List.of(new SandboxedCodeExecutionEngine(this.executor, "python", List.of("python3")),
					new SandboxedCodeExecutionEngine(this.executor, "shell", List.of("sh"))));

	@Test
	void describesItselfToTheModelAsOneToolWithALanguageAndCode() {
		List<ToolSpecification> specifications = ToolSpecifications.toolSpecificationsFrom(this.tool);
		assertThat(specifications).singleElement().satisfies((specification) -> {
			assertThat(specification.name()).isEqualTo(SandboxedCodeExecutionTool.TOOL_NAME);
			assertThat(specification.description()).contains("without any network access");
			assertThat(specification.parameters().properties()).containsOnlyKeys("language", "code");
			assertThat(specification.parameters().required()).containsExactly("language", "code");
		});
	}

	@Test
	void runsTheModelsRequestThroughLangChain4jsToolExecutor() throws Exception {
		DefaultToolExecutor toolExecutor = new DefaultToolExecutor(this.tool,
				SandboxedCodeExecutionTool.class.getMethod("runCode", String.class, String.class));
		String result = toolExecutor.execute(ToolExecutionRequest.builder()
			.id("1")
			.name(SandboxedCodeExecutionTool.TOOL_NAME)
			.arguments("{\"language\":\"python\",\"code\":\"print(sum(range(10)))\"}")
			.build(), "memory");
		assertThat(result).isEqualTo("45");
	}

	@Test
	void runsEachOfItsLanguages() {
		assertThat(this.tool.languages()).containsExactly("python", "shell");
		assertThat(this.tool.runCode("shell", "echo hello; exit 4"))
			.isEqualTo("Exit code 4.\nstdout:\nhello\nstderr:\n");
	}

	@Test
	void anUnknownLanguageIsAnsweredWithTheLanguages() {
		assertThat(this.tool.runCode("ruby", "puts 1"))
			.isEqualTo("Error: unknown language 'ruby'; the languages are python, shell");
		assertThat(this.tool.runCode(null, "puts 1")).startsWith("Error: unknown language 'null'");
	}

	@Test
	void rejectsNoEngineAndTwoEnginesOfOneLanguage() {
		assertThatIllegalArgumentException().isThrownBy(() -> new SandboxedCodeExecutionTool(List.of()))
			.withMessage("engines must hold at least one engine");
		SandboxedCodeExecutionEngine python = new SandboxedCodeExecutionEngine(this.executor, "python",
				List.of("python3"));
		assertThatIllegalArgumentException().isThrownBy(() -> new SandboxedCodeExecutionTool(List.of(python, python)))
			.withMessage("two engines run language 'python'");
	}

}
