package dev.cavesandbox.sample;

import java.util.List;

import dev.cavesandbox.IsolatedExecutor;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.stereotype.Component;

/**
 * Dispatches to the command-line tool ({@code exec -- CMD ...}) or to the demo (no arguments).
 */
@Component
class SampleRunner implements ApplicationRunner, ExitCodeGenerator {

	private final IsolatedExecutor executor;

	private final DemoReport demo;

	private int exitCode;

	SampleRunner(IsolatedExecutor executor, DemoReport demo) {
		this.executor = executor;
		this.demo = demo;
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
		else {
			this.exitCode = this.demo.run(System.out);
		}
	}

	@Override
	public int getExitCode() {
		return this.exitCode;
	}

}
