package dev.cavesandbox.sample;

import dev.cavesandbox.CaveSandboxException;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The cave-sandbox sample: without arguments it runs a demo of what the starter is for and prints
 * a report; with {@code exec -- CMD [ARG...]} it is a command-line tool that runs CMD in the
 * sandbox (see {@link ExecCommand}).
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(SampleApplication.class);
		boolean exec = ExecCommand.isRequested(args);
		if (exec) {
			// A command-line tool: no server, no banner, stdout belongs to the command.
			application.setWebApplicationType(WebApplicationType.NONE);
			application.setBannerMode(Banner.Mode.OFF);
			application.setLogStartupInfo(false);
			application.setAdditionalProfiles("exec");
		}
		ConfigurableApplicationContext context;
		try {
			context = application.run(args);
		}
		catch (RuntimeException ex) {
			CaveSandboxException sandboxFailure = findSandboxFailure(ex);
			if (exec && sandboxFailure != null) {
				System.err.println("cave-sandbox: " + sandboxFailure.getMessage());
				System.exit(ExecCommand.SANDBOX_FAILED);
			}
			throw ex;
		}
		System.exit(SpringApplication.exit(context));
	}

	private static CaveSandboxException findSandboxFailure(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof CaveSandboxException sandboxException) {
				return sandboxException;
			}
		}
		return null;
	}

}
