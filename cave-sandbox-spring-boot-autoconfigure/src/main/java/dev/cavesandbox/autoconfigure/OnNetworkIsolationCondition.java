package dev.cavesandbox.autoconfigure;

import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * {@link SpringBootCondition} behind {@link ConditionalOnNetworkIsolation}: matches on
 * the probe verdict and says why, so {@code --debug} and {@code /actuator/conditions}
 * explain which {@code IsolatedExecutor} was chosen.
 */
class OnNetworkIsolationCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, @Nullable Object> attributes = metadata
			.getAnnotationAttributes(ConditionalOnNetworkIsolation.class.getName());
		boolean requireAvailable = (attributes == null) || (Boolean) attributes.get("value");
		IsolationCapability capability = ProbedCapability.get(context.getBeanFactory(), context.getEnvironment());
		ConditionMessage.Builder message = ConditionMessage.forCondition(ConditionalOnNetworkIsolation.class,
				requireAvailable ? "(available)" : "(unavailable)");
		String verdict = capability.available()
				? "network isolation verified by the probe in " + capability.probeTime().toMillis() + " ms: "
						+ capability.mechanismName() + ": " + String.join("; ", capability.verified())
				: "network isolation unavailable: " + capability.cause() + " ("
						+ PropertyFixes.description(capability.cause())
						+ (capability.detail().isEmpty() ? "" : "; " + capability.detail()) + "); fix: "
						+ PropertyFixes.fix(capability.cause());
		return new ConditionOutcome(capability.available() == requireAvailable, message.because(verdict));
	}

}
