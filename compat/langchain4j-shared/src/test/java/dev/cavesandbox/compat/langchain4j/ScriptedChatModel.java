package dev.cavesandbox.compat.langchain4j;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;

/**
 * A chat model without a provider that asks for tools as a model would, so that the tests
 * go through LangChain4j's whole tool loop: a user message {@code TOOL JSON} asks for the
 * tool {@code TOOL} with the arguments {@code JSON}, after checking that the request
 * offered that tool; the answer to a tool's result is that result's text.
 */
final class ScriptedChatModel implements ChatModel {

	private static final ObjectMapper JSON = new ObjectMapper();

	/**
	 * Return the message that asks for a tool.
	 * @param tool the tool's name
	 * @param arguments its arguments
	 * @return the user message
	 */
	static String ask(String tool, Map<String, Object> arguments) {
		try {
			return tool + " " + JSON.writeValueAsString(arguments);
		}
		catch (JsonProcessingException ex) {
			throw new IllegalArgumentException(ex);
		}
	}

	@Override
	public ChatResponse doChat(ChatRequest request) {
		List<ChatMessage> messages = request.messages();
		ChatMessage last = messages.get(messages.size() - 1);
		if (last instanceof ToolExecutionResultMessage result) {
			return ChatResponse.builder().aiMessage(AiMessage.from(result.text())).build();
		}
		String text = ((UserMessage) last).singleText();
		String tool = text.substring(0, text.indexOf(' '));
		if (request.toolSpecifications().stream().noneMatch((specification) -> specification.name().equals(tool))) {
			return ChatResponse.builder().aiMessage(AiMessage.from("no tool " + tool + " was offered")).build();
		}
		ToolExecutionRequest call = ToolExecutionRequest.builder()
			.id("call-" + messages.size())
			.name(tool)
			.arguments(text.substring(tool.length() + 1))
			.build();
		return ChatResponse.builder().aiMessage(AiMessage.from(call)).build();
	}

}
