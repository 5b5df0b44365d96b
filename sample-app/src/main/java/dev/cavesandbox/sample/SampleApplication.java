package dev.cavesandbox.sample;

import dev.cavesandbox.CaveSandboxException;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The cave-sandbox sample: without arguments it runs a demo of what the starter is for,
 * prints a report and exits; with {@code serve} it runs the demo once and keeps serving
 * Actuator over HTTP ({@code /actuator/health} shows the sandbox); with
 * {@code exec -- CMD [ARG...]} it is a command-line tool that runs CMD in the sandbox
 * (see {@link ExecCommand}); with {@code verify} it reports what isolation this host
 * gives and attempts egress against its own loopback listeners (see
 * {@link VerifyCommand}).
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(SampleApplication.class);
		boolean exec = SampleRunner.command(args).equals("exec");
		boolean verify = SampleRunner.command(args).equals("verify");
		boolean serve = SampleRunner.command(args).equals("serve");
		application.setWebApplicationType(serve ? WebApplicationType.SERVLET : WebApplicationType.NONE);
		if (exec) {
			// A command-line tool: no server, no banner, stdout belongs to the command.
			application.setWebApplicationType(WebApplicationType.NONE);
			application.setBannerMode(Banner.Mode.OFF);
			application.setLogStartupInfo(false);
			application.setAdditionalProfiles("exec");
		}
		if (verify) {
			// A report on stdout: the command-line tool's quiet logging (the exec
			// profile), and a start that does not fail where isolation is unavailable
			// (the verify profile: the report says why instead).
			application.setBannerMode(Banner.Mode.OFF);
			application.setLogStartupInfo(false);
			application.setAdditionalProfiles("exec", "verify");
		}
		ConfigurableApplicationContext context;
		try {
			context = application.run(args);
		}
		catch (RuntimeException ex) {
			CaveSandboxException sandboxFailure = findSandboxFailure(ex);
			if ((exec || verify) && sandboxFailure != null) {
				System.err.println("cave-sandbox: " + sandboxFailure.getMessage());
				System.exit(ExecCommand.SANDBOX_FAILED);
			}
			throw ex;
		}
		if (!serve) {
			System.exit(SpringApplication.exit(context));
		}
	}

	private static @Nullable CaveSandboxException findSandboxFailure(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof CaveSandboxException sandboxException) {
				return sandboxException;
			}
		}
		return null;
	}

}
