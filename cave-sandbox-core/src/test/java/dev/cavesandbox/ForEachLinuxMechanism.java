package dev.cavesandbox;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runs a test once for every Linux mechanism in {@link LinuxMechanisms#ALL}, with the
 * {@link MechanismChoice} as its first parameter.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ParameterizedTest(name = "{0}")
@MethodSource("dev.cavesandbox.LinuxMechanisms#all")
public @interface ForEachLinuxMechanism {

}
