package dev.cavesandbox;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips the tests named in the system property {@value #PROPERTY} ({@code SimpleClassName#method},
 * comma-separated). Only the mutation profile (TESTING.md) sets it, and only there is this
 * extension active: it is registered through {@code META-INF/services} and JUnit loads such
 * extensions only when {@code junit.jupiter.extensions.autodetection.enabled} is true, which the
 * profile passes to PIT's JVMs alone. A plain {@code ./mvnw verify} runs every test.
 */
public final class MutationTestingExclusions implements ExecutionCondition {

	static final String PROPERTY = "cave.sandbox.mutation.excludedTests";

	@Override
	public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
		Optional<Method> method = context.getTestMethod();
		if (method.isEmpty()) {
			return ConditionEvaluationResult.enabled("not a test method");
		}
		String name = method.get().getDeclaringClass().getSimpleName() + "#" + method.get().getName();
		Set<String> excluded = Arrays.stream(System.getProperty(PROPERTY, "").split(","))
			.map(String::trim)
			.collect(Collectors.toSet());
		return excluded.contains(name) ? ConditionEvaluationResult.disabled(name + " is excluded from mutation testing")
				: ConditionEvaluationResult.enabled(name + " is not excluded from mutation testing");
	}

}
