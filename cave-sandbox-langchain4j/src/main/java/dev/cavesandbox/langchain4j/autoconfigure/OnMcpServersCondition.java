package dev.cavesandbox.langchain4j.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code cave.sandbox.langchain4j.mcp.servers} names at least one server.
 */
final class OnMcpServersCondition extends SpringBootCondition {

	private static final String SERVERS = "cave.sandbox.langchain4j.mcp.servers";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, Object> servers = Binder.get(context.getEnvironment())
			.bind(SERVERS, Bindable.mapOf(String.class, Object.class))
			.orElse(Map.of());
		return servers.isEmpty() ? ConditionOutcome.noMatch(SERVERS + " names no server")
				: ConditionOutcome.match(SERVERS + " names " + servers.keySet());
	}

}
