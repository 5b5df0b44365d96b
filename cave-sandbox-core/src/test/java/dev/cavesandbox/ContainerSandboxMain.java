package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;

/**
 * Run in a child JVM by {@link ContainerJvm}, inside a container's confinement, with a
 * mechanism and a work directory ({@code -}: the default, {@code java.io.tmpdir}): probes
 * in strict mode, prints the verdict, then runs the commands that arrive on stdin and
 * prints each result, in a form {@link ContainerJvm} parses. Base64 carries every
 * free-form text, so that a line is always one record. <pre>
 * VERDICT available=BOOLEAN mechanism=NAME|- cause=CAUSE|- detail=BASE64
 * FACT BASE64                                   (one per verified fact)
 * READY
 * in:  ID isolated|loopback|unisolated|egress:BASE64_HOSTS|outputs:BASE64_GLOBS TIMEOUT_MILLIS|- WORKING_DIRECTORY|- BASE64_ARG...
 * out: RESULT ID exit=N timedOut=BOOLEAN isolation=BASE64 stdout=BASE64 stderr=BASE64 outputs=BASE64
 *      RESULT ID error=CODE|CLASS message=BASE64
 * </pre> Each command runs on a thread of its own, so that a long one does not hold the
 * others back; the unisolated executor (the same user in the same confinement, without
 * the sandbox) serves the tests' controls, and an isolated executor whose egress proxy
 * may connect to private destinations serves the requests with an allow-list
 * ({@code egress:}, comma-separated hosts). A request with output file globs
 * ({@code outputs:}, comma-separated) gets them back as {@code outputs}: a line
 * {@code PATH=CONTENT} per file, then {@code skipped=PATHS}.
 */
public final class ContainerSandboxMain {

	private static final PrintStream out = System.out;

	private ContainerSandboxMain() {
	}

	public static void main(String[] args) throws Exception {
		SandboxSettings.Builder settings = SandboxSettings.builder()
			.timeout(Duration.ofSeconds(60))
			.killGracePeriod(Duration.ofMillis(500));
		if (!args[1].equals("-")) {
			settings.workDirectory(Path.of(args[1]));
		}
		SandboxSettings strict = settings.mode(SandboxMode.STRICT).mechanism(MechanismChoice.valueOf(args[0])).build();
		IsolationCapability capability = new NetworkIsolationProbe(strict).probe();
		IsolatedExecutor isolated = IsolatedExecutors.create(strict, capability);
		IsolatedExecutor egress = capability.available()
				? ProcessIsolatedExecutor.isolated(settings.allowPrivateDestinations(true).build(), capability)
				: isolated;
		IsolatedExecutor unisolated = ProcessIsolatedExecutor
			.unisolated(settings.mode(SandboxMode.FALLBACK).mechanism(MechanismChoice.NONE).build());
		print("VERDICT available=" + capability.available() + " mechanism="
				+ ((capability.mechanismName() != null) ? capability.mechanismName() : "-") + " cause="
				+ ((capability.cause() != null) ? capability.cause().name() : "-") + " detail="
				+ encode(capability.detail()));
		capability.verified().forEach((fact) -> print("FACT " + encode(fact)));
		print("READY");
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null) {
			String[] fields = line.split(" ");
			IsolatedExecutor executor = fields[1].equals("unisolated") ? unisolated
					: fields[1].startsWith("egress:") ? egress : isolated;
			Thread thread = new Thread(() -> run(fields, executor), "command-" + fields[0]);
			thread.setDaemon(true);
			thread.start();
		}
		// stdin closed: the test is done with this JVM
		isolated.close();
		egress.close();
		unisolated.close();
	}

	private static void run(String[] fields, IsolatedExecutor executor) {
		List<String> argv = new ArrayList<>();
		for (int i = 4; i < fields.length; i++) {
			argv.add(new String(Base64.getDecoder().decode(fields[i]), StandardCharsets.UTF_8));
		}
		ExecutionRequest.Builder request = ExecutionRequest.builder(argv);
		if (!fields[2].equals("-")) {
			request.timeout(Duration.ofMillis(Long.parseLong(fields[2])));
		}
		if (fields[1].equals("loopback")) {
			request.loopback(true);
		}
		if (fields[1].startsWith("egress:")) {
			request.allowedHosts(new String(Base64.getDecoder().decode(fields[1].substring("egress:".length())),
					StandardCharsets.UTF_8)
				.split(","));
		}
		if (fields[1].startsWith("outputs:")) {
			request.outputFiles(new String(Base64.getDecoder().decode(fields[1].substring("outputs:".length())),
					StandardCharsets.UTF_8)
				.split(","));
		}
		if (!fields[3].equals("-")) {
			request.workingDirectory(Path.of(fields[3]));
		}
		String id = fields[0];
		try {
			ExecutionResult result = executor.execute(request.build());
			print("RESULT " + id + " exit=" + result.exitCode() + " timedOut=" + result.timedOut() + " isolation="
					+ encode(String.valueOf(result.isolation())) + " stdout=" + encode(result.stdoutText()) + " stderr="
					+ encode(result.stderrText()) + " outputs=" + encode(outputs(result.outputFiles())));
		}
		catch (RuntimeException ex) {
			String code = (ex instanceof CaveSandboxException sandbox) ? sandbox.code() : ex.getClass().getName();
			print("RESULT " + id + " error=" + code + " message=" + encode(String.valueOf(ex.getMessage())));
		}
	}

	private static String outputs(OutputFiles files) {
		StringBuilder text = new StringBuilder();
		files.files()
			.forEach((file) -> text.append(file.path())
				.append('=')
				.append(new String(file.content(), StandardCharsets.UTF_8))
				.append('\n'));
		return text.append("skipped=").append(String.join(",", files.skipped())).toString();
	}

	private static String encode(String text) {
		return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
	}

	private static void print(String line) {
		synchronized (out) {
			out.println(line);
			out.flush();
		}
	}

}
