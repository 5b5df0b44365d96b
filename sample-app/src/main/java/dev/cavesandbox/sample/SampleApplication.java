package dev.cavesandbox.sample;

import java.util.Map;

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
 * {@link VerifyCommand}); with {@code ai} it calls the code-execution tool through Spring
 * AI's API and the tools of an MCP stdio server, all in the sandbox (see {@link AiDemo});
 * with {@code langchain4j} the same through LangChain4j (see {@link LangChain4jDemo}).
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(SampleApplication.class);
		boolean exec = SampleRunner.command(args).equals("exec");
		boolean verify = SampleRunner.command(args).equals("verify");
		boolean serve = SampleRunner.command(args).equals("serve");
		boolean ai = SampleRunner.command(args).equals("ai");
		boolean langChain4j = SampleRunner.command(args).equals("langchain4j");
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
		if (ai) {
			// A report on stdout, with the command-line tool's quiet logging. The ai
			// profile enables the code-execution tool; only this command configures the
			// demo's MCP stdio server (the sample's script, inline).
			application.setBannerMode(Banner.Mode.OFF);
			application.setLogStartupInfo(false);
			application.setAdditionalProfiles("exec", "ai");
			String connection = "spring.ai.mcp.client.stdio.connections." + AiDemo.CONNECTION;
			application.setDefaultProperties(Map.of(connection + ".command", "python3", connection + ".args[0]", "-c",
					connection + ".args[1]", AiDemo.serverScript()));
		}
		if (langChain4j) {
			// The same report and logging; the langchain4j profile enables the code
			// engine and
			// tool, and this command alone configures the demo's MCP server, inline.
			application.setBannerMode(Banner.Mode.OFF);
			application.setLogStartupInfo(false);
			application.setAdditionalProfiles("exec", "langchain4j");
			String server = "cave.sandbox.langchain4j.mcp.servers." + LangChain4jDemo.SERVER + ".command";
			application.setDefaultProperties(
					Map.of(server + "[0]", "python3", server + "[1]", "-c", server + "[2]", AiDemo.serverScript()));
		}
		ConfigurableApplicationContext context;
		try {
			context = application.run(args);
		}
		catch (RuntimeException ex) {
			CaveSandboxException sandboxFailure = findSandboxFailure(ex);
			if ((exec || verify || ai || langChain4j) && sandboxFailure != null) {
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
