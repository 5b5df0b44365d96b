package dev.cavesandbox.compat.langchain4j;

import dev.langchain4j.model.chat.ChatModel;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The application of the LangChain4j compatibility tests: auto-configuration, the
 * {@link Assistant} that LangChain4j's Spring Boot starter builds, and a
 * {@link ScriptedChatModel} in place of a model provider.
 */
@SpringBootApplication
public class LangChain4jCompatApplication {

	@Bean
	ChatModel scriptedChatModel() {
		return new ScriptedChatModel();
	}

}
