package dev.cavesandbox.compat.langchain4j;

import dev.langchain4j.service.spring.AiService;
import dev.langchain4j.service.spring.AiServiceWiringMode;

/**
 * An AI service of LangChain4j's Spring Boot starter with cave-sandbox's code tool and
 * MCP tool provider, wired by bean name: the starter's automatic wiring finds
 * {@code @Tool} beans only by their bean class, which the beans of an
 * auto-configuration's {@code @Bean} methods do not declare, so it would miss the code
 * tool.
 */
@AiService(wiringMode = AiServiceWiringMode.EXPLICIT, chatModel = "scriptedChatModel",
		tools = "caveSandboxCodeExecutionTool", toolProvider = "caveSandboxMcpToolProvider")
public interface Assistant {

	/**
	 * Answer a message.
	 * @param message the user's message
	 * @return the answer
	 */
	String chat(String message);

}
