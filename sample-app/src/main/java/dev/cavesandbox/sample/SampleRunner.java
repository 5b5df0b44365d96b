package dev.cavesandbox.sample;

import java.util.List;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.IsolationCapability;
import dev.cavesandbox.autoconfigure.CaveSandboxProperties;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Dispatches to the command-line tool ({@code exec -- CMD ...}, {@code verify}), to the
 * demo (no arguments), to the demo followed by serving Actuator ({@code serve}), or to
 * the Spring AI demo ({@code ai}) or the LangChain4j demo ({@code langchain4j}).
 */
@Component
class SampleRunner implements ApplicationRunner, ExitCodeGenerator {

	private final IsolatedExecutor executor;

	private final DemoReport demo;

	private final Environment environment;

	private final CaveSandboxProperties properties;

	private final IsolationCapability capability;

	private final ObjectProvider<AiDemo> aiDemo;

	private final ObjectProvider<LangChain4jDemo> langChain4jDemo;

	private int exitCode;

	SampleRunner(IsolatedExecutor executor, DemoReport demo, Environment environment, CaveSandboxProperties properties,
			IsolationCapability capability, ObjectProvider<AiDemo> aiDemo,
			ObjectProvider<LangChain4jDemo> langChain4jDemo) {
		this.executor = executor;
		this.aiDemo = aiDemo;
		this.langChain4jDemo = langChain4jDemo;
		this.demo = demo;
		this.environment = environment;
		this.properties = properties;
		this.capability = capability;
	}

	/**
	 * Return the sample's command: the first argument that is not an option
	 * ({@code exec}, {@code verify}, {@code serve}), or an empty string for the demo.
	 * @param args the command-line arguments
	 * @return the command
	 */
	static String command(String[] args) {
		for (String arg : args) {
			if (arg.equals("--")) {
				return "";
			}
			if (!arg.startsWith("--")) {
				return arg;
			}
		}
		return "";
	}

	@Override
	public void run(ApplicationArguments args) throws Exception {
		List<String> plain = args.getNonOptionArgs();
		if (!plain.isEmpty() && plain.get(0).equals("exec")) {
			List<String> argv = plain.subList(1, plain.size());
			if (!argv.isEmpty() && argv.get(0).equals("--")) {
				argv = argv.subList(1, argv.size());
			}
			this.exitCode = new ExecCommand(this.executor, System.err).run(argv);
		}
		else if (!plain.isEmpty() && plain.get(0).equals("verify")) {
			this.exitCode = new VerifyCommand(this.properties.toSettings(), this.capability, System.out).run();
		}
		else if (!plain.isEmpty() && plain.get(0).equals("ai")) {
			this.exitCode = this.aiDemo.getObject().run(System.out);
		}
		else if (!plain.isEmpty() && plain.get(0).equals("langchain4j")) {
			this.exitCode = this.langChain4jDemo.getObject().run(System.out);
		}
		else if (!plain.isEmpty() && !plain.get(0).equals("serve")) {
			System.err.println("cave-sandbox sample: unknown command '" + plain.get(0)
					+ "'; usage: [--cave.sandbox.*=...] [serve | exec -- CMD [ARG...] | verify | ai | langchain4j]");
			this.exitCode = 2;
		}
		else {
			this.exitCode = this.demo.run(System.out);
			if (!plain.isEmpty() && plain.get(0).equals("serve")) {
				System.out.println("Serving Actuator on http://localhost:"
						+ this.environment.getProperty("local.server.port") + "/actuator/health (Ctrl-C to stop)");
			}
		}
	}

	@Override
	public int getExitCode() {
		return this.exitCode;
	}

}
