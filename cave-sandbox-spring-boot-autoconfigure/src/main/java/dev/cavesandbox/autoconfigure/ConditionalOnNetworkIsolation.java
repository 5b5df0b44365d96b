package dev.cavesandbox.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * {@link Conditional @Conditional} that matches on the measured network-isolation
 * capability of this host: the {@link dev.cavesandbox.NetworkIsolationProbe probe} runs
 * once per application context, and its verdict and cause appear in the conditions
 * report.
 * <p>
 * Like every condition, it is evaluated when the bean definitions are made: under AOT
 * processing ({@code process-aot}) that is at build time, and the generated code would
 * keep the build host's verdict for every host the application later runs on. It
 * therefore fails AOT processing with an {@link IllegalStateException} rather than probe
 * the build host. An application that is processed ahead of time injects
 * {@link dev.cavesandbox.IsolationCapability} and decides in its bean method, as the
 * starter's own auto-configuration does.
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(OnNetworkIsolationCondition.class)
public @interface ConditionalOnNetworkIsolation {

	/**
	 * Whether the condition matches when isolation is verified ({@code true}, the
	 * default) or when it is unavailable ({@code false}).
	 * @return the availability to match
	 */
	boolean value() default true;

}
