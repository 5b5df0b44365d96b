package dev.cavesandbox.autoconfigure;

import java.util.Map;

import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.SandboxMode;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * {@link SpringBootCondition} behind {@link ConditionalOnNetworkIsolation}: matches on
 * the probe verdict and says why, so {@code --debug} and {@code /actuator/conditions}
 * explain it. Under AOT processing it fails instead of probing the build host
 * ({@link ConditionalOnNetworkIsolation} says why). It also words the executor's
 * decision, which {@link CaveSandboxAutoConfiguration} records at run time.
 */
class OnNetworkIsolationCondition extends SpringBootCondition {

	/**
	 * The system property that Spring's AOT processors ({@code process-aot}) set to
	 * {@code true} while they run.
	 */
	static final String AOT_PROCESSING = "spring.aot.processing";

	/** The start of the executor's decision in the conditions report. */
	static final String DECISION = "network isolation (decided at run time): ";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, @Nullable Object> attributes = metadata
			.getAnnotationAttributes(ConditionalOnNetworkIsolation.class.getName());
		boolean requireAvailable = (attributes == null) || (Boolean) attributes.get("value");
		if (Boolean.getBoolean(AOT_PROCESSING)) {
			throw new IllegalStateException("@ConditionalOnNetworkIsolation cannot be evaluated by AOT processing: "
					+ "it would freeze this build host's network isolation into the generated code; inject "
					+ "IsolationCapability and decide in the bean method instead, when the application runs");
		}
		IsolationCapability capability = ProbedCapability.get(context.getBeanFactory(), context.getEnvironment());
		ConditionMessage.Builder message = ConditionMessage.forCondition(ConditionalOnNetworkIsolation.class,
				requireAvailable ? "(available)" : "(unavailable)");
		return new ConditionOutcome(capability.available() == requireAvailable, message.because(verdict(capability)));
	}

	/**
	 * The executor's decision for the conditions report: the verdict, the mode, and what
	 * follows from them. It always matches: an executor bean exists in every case but a
	 * failed startup.
	 * @param capability the probe's verdict
	 * @param mode the mode ({@code cave.sandbox.mode})
	 * @param failClosed whether startup fails ({@code strict}, {@code fail-fast=true},
	 * isolation unavailable)
	 * @return the outcome to record
	 */
	static ConditionOutcome decision(IsolationCapability capability, SandboxMode mode, boolean failClosed) {
		String chosen;
		if (capability.available()) {
			chosen = "isolated executor";
		}
		else if (mode == SandboxMode.FALLBACK) {
			chosen = "unisolated executor (cave.sandbox.mode=fallback)";
		}
		else if (failClosed) {
			chosen = "startup fails (cave.sandbox.mode=strict, cave.sandbox.fail-fast=true)";
		}
		else {
			chosen = "executor that runs nothing (cave.sandbox.mode=strict, cave.sandbox.fail-fast=false)";
		}
		return ConditionOutcome.match(DECISION + chosen + ": " + verdict(capability));
	}

	private static String verdict(IsolationCapability capability) {
		return capability.available()
				? "network isolation verified by the probe in " + capability.probeTime().toMillis() + " ms: "
						+ capability.mechanismName() + ": " + String.join("; ", capability.verified())
				: "network isolation unavailable: " + capability.cause() + " ("
						+ PropertyFixes.description(capability.cause())
						+ (capability.detail().isEmpty() ? "" : "; " + capability.detail()) + "); fix: "
						+ PropertyFixes.fix(capability.cause());
	}

}
