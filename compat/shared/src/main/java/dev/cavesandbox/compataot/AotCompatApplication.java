package dev.cavesandbox.compataot;

import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;

import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;

/**
 * The application that each compatibility module builds with {@code process-aot} and
 * starts from its jar with {@code -Dspring.aot.enabled=true} ({@code AotApplicationChecks}):
 * it runs one command through the starter's executor, prints one line that says how it
 * ran, and ends. It lives in a package of its own, outside the component scan of the
 * compatibility tests' application.
 */
@SpringBootApplication
public class AotCompatApplication {

	/** The start of the line that the application prints after its execution. */
	public static final String RESULT = "cave-sandbox-aot-compat: ";

	public static void main(String[] args) {
		new SpringApplicationBuilder(AotCompatApplication.class).web(WebApplicationType.NONE).run(args).close();
	}

	@Bean
	ApplicationRunner sandboxedExecution(IsolatedExecutor executor) {
		return (args) -> {
			ExecutionResult result = executor.execute("id", "-u");
			System.out.println(RESULT + "exit " + result.exitCode() + ", mechanism " + result.isolation().mechanism()
					+ ", network isolated " + result.isolation().networkIsolated());
		};
	}

}
