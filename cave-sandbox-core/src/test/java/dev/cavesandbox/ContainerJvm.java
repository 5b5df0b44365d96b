package dev.cavesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import dev.cavesandbox.ContainerConfinement.Profile;
import dev.cavesandbox.ContainerConfinement.User;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A child JVM running {@link ContainerSandboxMain} inside a container's confinement
 * ({@link ContainerConfinement}) as root or as nobody: its probe's verdict, and the
 * commands it runs on request, isolated (strict mode) or unisolated (the control: the
 * same user in the same confinement, without the sandbox).
 * <p>
 * Layout of the test's directory (made reachable by everyone): {@code classpath} (the
 * core's and the tests' classes, the logging jars and Netty's (the egress proxy), copied
 * where nobody can read them; {@code ~/.m2} is root's), {@code work} (the executor's work
 * directory) and {@code commands} (the commands' working directory, outside the hidden
 * directories only because it is the working directory); the last two belong to the JVM's
 * user.
 */
final class ContainerJvm implements AutoCloseable {

	/** A variable in the JVM's environment, as a container's secrets are. */
	static final String SECRET_VARIABLE = "CAVE_SANDBOX_CONTAINER_SECRET";

	static final String SECRET = "sk-container-3b1f-do-not-leak";

	/** A limit for a loaded machine, not a measure. */
	private static final Duration PATIENCE = Duration.ofSeconds(120);

	private final Process process;

	private final Path commands;

	private final Path log;

	private final Verdict verdict;

	private final Map<String, Result> results = new ConcurrentHashMap<>();

	private final AtomicInteger ids = new AtomicInteger();

	private final OutputStream stdin;

	private ContainerJvm(Process process, Path commands, Path log) throws IOException {
		this.process = process;
		this.commands = commands;
		this.log = log;
		this.stdin = process.getOutputStream();
		BufferedReader reader = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
		List<String> header = new ArrayList<>();
		String line;
		while ((line = reader.readLine()) != null && !line.equals("READY")) {
			header.add(line);
		}
		assertThat(line).as("the child JVM's header %s; its log: %s", header, log()).isEqualTo("READY");
		this.verdict = Verdict.parse(header);
		Thread collector = new Thread(() -> collect(reader), "container-jvm-" + process.pid());
		collector.setDaemon(true);
		collector.start();
	}

	/**
	 * Start the JVM and wait for its verdict.
	 * @param directory the test's own directory
	 * @param profile the confinement
	 * @param user who runs the JVM
	 * @param mechanism the mechanism setting
	 * @return the running JVM
	 */
	static ContainerJvm start(Path directory, Profile profile, User user, MechanismChoice mechanism)
			throws IOException {
		return start(directory, user, mechanism, false,
				(java, commands) -> ContainerConfinement.commandLine(directory, profile, user, java));
	}

	/**
	 * Start the JVM in a confinement of the caller's (a real container runtime's, for
	 * example) and wait for its verdict.
	 * @param directory the test's own directory
	 * @param user who runs the JVM (the confinement switches to that user; the
	 * directories are given to it here)
	 * @param mechanism the mechanism setting
	 * @param defaultWorkDirectory whether the executor keeps its default work directory
	 * (the JVM's {@code java.io.tmpdir}, as an application's does) rather than
	 * {@code work} of the test's directory
	 * @param confinement the command line that runs the JVM's argv confined
	 * @return the running JVM
	 */
	static ContainerJvm start(Path directory, User user, MechanismChoice mechanism, boolean defaultWorkDirectory,
			Confinement confinement) throws IOException {
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		String classPath = readableClassPath(Files.createDirectory(directory.resolve("classpath")));
		Path work = Files.createDirectory(directory.resolve("work"));
		Path commands = Files.createDirectory(directory.resolve("commands"));
		if (user == User.NOBODY) {
			NobodyCommandLines.giveToNobody(work);
			NobodyCommandLines.giveToNobody(commands);
		}
		List<String> java = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				classPath, ContainerSandboxMain.class.getName(), mechanism.name(),
				defaultWorkDirectory ? "-" : work.toString());
		Path log = directory.resolve("jvm.log");
		ProcessBuilder builder = new ProcessBuilder(confinement.commandLine(java, commands))
			.directory(commands.toFile())
			.redirectError(log.toFile());
		builder.environment().put(SECRET_VARIABLE, SECRET);
		Process process = builder.start();
		try {
			return new ContainerJvm(process, commands, log);
		}
		catch (IOException | RuntimeException | Error ex) {
			process.destroyForcibly();
			throw ex;
		}
	}

	static String readableClassPath(Path directory) throws IOException {
		List<String> entries = new ArrayList<>();
		for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
			Path path = Path.of(entry);
			String name = path.getFileName().toString();
			if (Files.isDirectory(path)) {
				Path copy = directory.resolve(entries.size() + "-" + name);
				try (Stream<Path> files = Files.walk(path)) {
					for (Path file : (Iterable<Path>) files::iterator) {
						Files.copy(file, copy.resolve(path.relativize(file).toString()),
								StandardCopyOption.COPY_ATTRIBUTES);
					}
				}
				entries.add(copy.toString());
			}
			else if (name.startsWith("slf4j-") || name.startsWith("jspecify-") || name.startsWith("netty-")) {
				entries.add(Files.copy(path, directory.resolve(entries.size() + "-" + name)).toString());
			}
		}
		try (Stream<Path> files = Files.walk(directory)) {
			for (Path file : (Iterable<Path>) files::iterator) {
				Files.setPosixFilePermissions(file, PosixFilePermissions
					.fromString(Files.isDirectory(file) || Files.isExecutable(file) ? "rwxr-xr-x" : "rw-r--r--"));
			}
		}
		return String.join(java.io.File.pathSeparator, entries);
	}

	private void collect(BufferedReader reader) {
		try {
			String line;
			while ((line = reader.readLine()) != null) {
				if (line.startsWith("RESULT ")) {
					String[] fields = line.split(" ");
					this.results.put(fields[1], Result.parse(fields));
				}
			}
		}
		catch (IOException ex) {
			// the JVM ended
		}
	}

	Verdict verdict() {
		return this.verdict;
	}

	/** The commands' working directory (the JVM's user owns it). */
	Path commands() {
		return this.commands;
	}

	long pid() {
		return this.process.pid();
	}

	/** Run a command in the sandbox, in {@link #commands()}, and wait for its result. */
	Result isolated(String... argv) throws IOException {
		return awaitResult(start(true, null, argv));
	}

	/** Run the control: the same command without the sandbox, in {@link #commands()}. */
	Result unisolated(String... argv) throws IOException {
		return awaitResult(start(false, null, argv));
	}

	/**
	 * Run a command in the sandbox in a private working directory of its own (the
	 * executor's default) and wait for its result a minute longer than its timeout.
	 * @param timeout the request's timeout
	 * @param argv the command
	 */
	Result inPrivateDirectory(Duration timeout, String... argv) throws IOException {
		return awaitResult(start("isolated", timeout, (Path) null, argv), timeout.plus(PATIENCE));
	}

	/**
	 * Run a command in the sandbox in a private working directory of its own, asking the
	 * files that match the globs back ({@link Result#outputs()}).
	 * @param globs the request's output file globs, comma-separated
	 * @param argv the command
	 */
	Result withOutputFiles(String globs, String... argv) throws IOException {
		return awaitResult(
				start("outputs:" + Base64.getEncoder().encodeToString(globs.getBytes(StandardCharsets.UTF_8)), null,
						(Path) null, argv));
	}

	/** Run a command in the sandbox with a private loopback requested. */
	Result withLoopback(String... argv) throws IOException {
		return awaitResult(start("loopback", null, argv));
	}

	/**
	 * Run a command in the sandbox with an allow-list of its own, by the executor whose
	 * proxy may connect to private destinations (the test's loopback server).
	 * @param allowedHosts the request's allowed hosts, comma-separated
	 * @param argv the command
	 */
	Result withEgress(String allowedHosts, String... argv) throws IOException {
		return awaitResult(
				start("egress:" + Base64.getEncoder().encodeToString(allowedHosts.getBytes(StandardCharsets.UTF_8)),
						null, argv));
	}

	/**
	 * Start a command in {@link #commands()} and return its id at once.
	 * @param isolated whether the sandbox runs it
	 * @param timeout the request's timeout, or {@code null} for the JVM's
	 * @param argv the command
	 */
	String start(boolean isolated, @Nullable Duration timeout, String... argv) throws IOException {
		return start(isolated ? "isolated" : "unisolated", timeout, argv);
	}

	private String start(String mode, @Nullable Duration timeout, String... argv) throws IOException {
		return start(mode, timeout, this.commands, argv);
	}

	private String start(String mode, @Nullable Duration timeout, @Nullable Path workingDirectory, String... argv)
			throws IOException {
		String id = Integer.toString(this.ids.incrementAndGet());
		StringBuilder line = new StringBuilder(id).append(' ')
			.append(mode)
			.append(' ')
			.append((timeout != null) ? Long.toString(timeout.toMillis()) : "-")
			.append(' ')
			.append((workingDirectory != null) ? workingDirectory.toString() : "-");
		for (String argument : argv) {
			line.append(' ').append(Base64.getEncoder().encodeToString(argument.getBytes(StandardCharsets.UTF_8)));
		}
		this.stdin.write(line.append('\n').toString().getBytes(StandardCharsets.UTF_8));
		this.stdin.flush();
		return id;
	}

	/**
	 * Wait, with a generous limit, for the result of a started command; looked for every
	 * 10 ms, so that a test that measures how long the command took is not off by much.
	 */
	Result awaitResult(String id) {
		return awaitResult(id, PATIENCE);
	}

	private Result awaitResult(String id, Duration patience) {
		await().atMost(patience)
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(10))
			.conditionEvaluationListener(
					(condition) -> assertThat(this.process.isAlive() || this.results.containsKey(id))
						.as("the child JVM is alive; its log: %s", log())
						.isTrue())
			.until(() -> this.results.containsKey(id));
		return this.results.get(id);
	}

	/** Kill the JVM with SIGKILL and wait until it is gone. */
	void kill() throws InterruptedException {
		this.process.destroyForcibly();
		assertThat(this.process.waitFor(60, TimeUnit.SECONDS)).as("the killed JVM ended").isTrue();
	}

	String log() {
		try {
			return Files.readString(this.log);
		}
		catch (IOException ex) {
			return "(unreadable: " + ex + ")";
		}
	}

	@Override
	public void close() throws InterruptedException {
		try {
			this.stdin.close();
		}
		catch (IOException ex) {
			// the JVM has ended already
		}
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			this.process.destroyForcibly();
			this.process.waitFor(30, TimeUnit.SECONDS);
		}
	}

	/**
	 * How the JVM is confined: its argv in, the command line that runs it out.
	 */
	@FunctionalInterface
	interface Confinement {

		/**
		 * Return the command line that runs the JVM confined.
		 * @param java the JVM's argv
		 * @param commands the commands' directory, the JVM's working directory
		 * @return the command line
		 * @throws IOException if what the confinement needs cannot be written
		 */
		List<String> commandLine(List<String> java, Path commands) throws IOException;

	}

	/**
	 * The probe's verdict in the child JVM.
	 */
	record Verdict(boolean available, @Nullable String mechanism, @Nullable UnavailabilityCause cause, String detail,
			List<String> facts) {

		static Verdict parse(List<String> header) {
			assertThat(header).as("header").isNotEmpty();
			String[] fields = header.get(0).split(" ");
			assertThat(fields[0]).isEqualTo("VERDICT");
			String mechanism = value(fields[2], "mechanism");
			String cause = value(fields[3], "cause");
			List<String> facts = header.stream()
				.filter((line) -> line.startsWith("FACT "))
				.map((line) -> decode(line.substring(5)))
				.toList();
			return new Verdict(Boolean.parseBoolean(value(fields[1], "available")),
					mechanism.equals("-") ? null : mechanism,
					cause.equals("-") ? null : UnavailabilityCause.valueOf(cause), decode(value(fields[4], "detail")),
					facts);
		}

	}

	/**
	 * A command's result, or the error the executor threw; {@code outputs} are its output
	 * files as {@link ContainerSandboxMain} writes them ({@code PATH=CONTENT} lines, then
	 * {@code skipped=PATHS}).
	 */
	record Result(int exitCode, boolean timedOut, @Nullable String isolation, String stdout, String stderr,
			@Nullable String error, String outputs) {

		static Result parse(String[] fields) {
			if (fields[2].startsWith("error=")) {
				return new Result(-1, false, null, "", decode(value(fields[3], "message")), value(fields[2], "error"),
						"");
			}
			return new Result(Integer.parseInt(value(fields[2], "exit")),
					Boolean.parseBoolean(value(fields[3], "timedOut")), decode(value(fields[4], "isolation")),
					decode(value(fields[5], "stdout")), decode(value(fields[6], "stderr")), null,
					decode(value(fields[7], "outputs")));
		}

	}

	private static String value(String field, String name) {
		assertThat(field).startsWith(name + "=");
		return field.substring(name.length() + 1);
	}

	private static String decode(String text) {
		return new String(Base64.getDecoder().decode(text), StandardCharsets.UTF_8);
	}

}
