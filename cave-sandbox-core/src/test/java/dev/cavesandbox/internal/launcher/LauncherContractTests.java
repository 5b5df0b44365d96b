package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract between the Java side ({@link LauncherContract}, the options that
 * {@link Launcher} and {@link LandlockView} pass, {@link Refusals}) and the native
 * launcher, read from the C sources themselves ({@code src/main/c}) and from the module's
 * {@code pom.xml}: descriptor numbers, names, the set-up exit code and the version
 * ({@code launcher.h}, defined once in all of the sources), the hand-over's marker,
 * magic, version and largest frame ({@code launcher.h}, section "Hand-over"), the failure
 * prefix ({@code fail.c}), the Landlock line ({@code landlock.c}), the mode names
 * ({@code main.c}), the refusals with their order ({@code refusals.h}) and the option
 * names ({@code options.c}, {@code limits.c}). One side changed alone fails here, without
 * a launcher being built or run.
 */
class LauncherContractTests {

	private static final Path SOURCES = Path.of("src", "main", "c");

	private static final Pattern REFUSAL = Pattern.compile("^\\s*REFUSAL\\(\"([^\"]+)\",", Pattern.MULTILINE);

	/** Every {@code .c} and {@code .h} file of {@link #SOURCES}, by file name. */
	private static final Map<String, String> files = new TreeMap<>();

	/** All of them, one after the other. */
	private static String source;

	@BeforeAll
	static void readTheSources() throws IOException {
		try (Stream<Path> listing = Files.list(SOURCES)) {
			List<Path> sources = listing
				.filter((file) -> file.toString().endsWith(".c") || file.toString().endsWith(".h"))
				.sorted()
				.toList();
			assertThat(sources).as("the launcher's sources in %s", SOURCES.toAbsolutePath()).isNotEmpty();
			StringBuilder all = new StringBuilder();
			for (Path file : sources) {
				String text = Files.readString(file);
				files.put(file.getFileName().toString(), text);
				all.append(text).append('\n');
			}
			source = all.toString();
		}
	}

	@Test
	void descriptorNumbersAreTheLaunchers() {
		assertThat(define("DIRECTORY_FD")).isEqualTo(String.valueOf(LauncherContract.DIRECTORY_FD));
		assertThat(define("SELF_FD")).isEqualTo(String.valueOf(LauncherContract.SELF_FD));
		assertThat(define("EGRESS_FD")).isEqualTo(String.valueOf(LauncherContract.EGRESS_FD));
		assertThat(define("LISTED_FD")).isEqualTo(String.valueOf(LauncherContract.LISTED_FD));
		assertThat(LauncherContract.INSIDE).isEqualTo("/proc/self/fd/" + define("SELF_FD"));
	}

	@Test
	void namesAndTheSetUpExitCodeAreTheLaunchers() {
		assertThat(define("EGRESS_SOCKET")).isEqualTo(quoted(LauncherContract.EGRESS_SOCKET));
		assertThat(define("TOKEN_VARIABLE")).isEqualTo(quoted(LauncherContract.TOKEN_VARIABLE));
		assertThat(define("PRELOAD_VARIABLE")).isEqualTo(quoted(SharedMemoryPreload.LAUNCHER_VARIABLE));
		assertThat(define("EXIT_SETUP")).isEqualTo(String.valueOf(LauncherContract.SETUP_FAILED));
		assertThat(file("fail.c")).contains("fputs(" + quoted(LauncherContract.MESSAGE_PREFIX + " ") + ", stderr)");
		assertThat(file("landlock.c")).contains("printf(\"" + LauncherContract.LANDLOCK_PREFIX);
	}

	@Test
	void handOverConstantsAreTheLaunchers() {
		assertThat(define("HANDOVER_READY")).isEqualTo(quoted(LauncherContract.HANDOVER_READY));
		assertThat(define("HANDOVER_STARTED")).isEqualTo(quoted(LauncherContract.HANDOVER_STARTED));
		assertThat(define("HANDOVER_MAGIC")).isEqualTo(quoted(LauncherContract.HANDOVER_MAGIC));
		assertThat(define("HANDOVER_VERSION")).isEqualTo(String.valueOf(LauncherContract.HANDOVER_VERSION));
		assertThat(define("HANDOVER_MAX")).isEqualTo(String.valueOf(LauncherContract.HANDOVER_MAX));
		assertThat(file("options.c")).contains("options->handover = 1;");
	}

	@Test
	void versionIsThePoms() throws IOException {
		Matcher version = Pattern.compile("<cave-sandbox\\.launcher\\.version>([^<]+)<")
			.matcher(Files.readString(Path.of("pom.xml")));
		assertThat(version.find()).as("cave-sandbox.launcher.version in pom.xml").isTrue();
		assertThat(define("LAUNCHER_VERSION")).isEqualTo(quoted(version.group(1)));
	}

	@Test
	void everyModeOfTheJavaSideIsOneThatMainRuns() {
		for (String mode : List.of("outer", LauncherContract.INIT, LauncherContract.EXEC, LauncherContract.CONTAIN)) {
			assertThat(file("main.c")).as("main runs mode %s", mode)
				.contains("if (strcmp(mode, " + quoted(mode) + ") == 0) {");
		}
	}

	@Test
	void refusalsAreTheLaunchersInItsOrder() {
		List<String> launchers = new ArrayList<>();
		assertThat(REFUSAL.matcher(source).results().count()).as("REFUSAL entries only in refusals.h")
			.isEqualTo(REFUSAL.matcher(file("refusals.h")).results().count());
		Matcher refusal = REFUSAL.matcher(file("refusals.h"));
		while (refusal.find()) {
			launchers.add(refusal.group(1));
		}
		// Every condition on: no loopback, no mount namespace, no PID namespace, no user
		// namespaces (a Launcher without them).
		List<String> javas = new Launcher(Path.of("/l"), false).refusals(false, true, true);
		assertThat(javas)
			.as("the Java side's refusals against REFUSALS in %s:%n%s", SOURCES.resolve("refusals.h"),
					launchers.stream().collect(Collectors.joining("\n")))
			.isEqualTo(launchers);
	}

	@Test
	void optionNamesAreTheOnesTheLauncherParses() throws IOException {
		Pattern option = Pattern.compile("\"(--[a-z][a-z-]*)\"");
		List<String> launchers = Stream.of("options.c", "limits.c")
			.flatMap((name) -> option.matcher(file(name)).results())
			.map((found) -> found.group(1))
			.distinct()
			.sorted()
			.toList();
		Path java = Path.of("src", "main", "java", "dev", "cavesandbox", "internal", "launcher");
		List<Path> builders = List.of(java.resolve("Launcher.java"), java.resolve("LandlockView.java"));
		String passed = "";
		for (Path builder : builders) {
			passed += Files.readString(builder);
		}
		List<String> javas = option.matcher(passed)
			.results()
			.map((found) -> found.group(1))
			.distinct()
			.sorted()
			.toList();
		assertThat(javas).as("the options %s pass against those options.c and limits.c parse", builders)
			.isNotEmpty()
			.isEqualTo(launchers);
	}

	/**
	 * The {@value LauncherContract#ROOT} mode parses its own options (rootoptions.c)
	 * before main's parser: the ones {@code UnshareMountPlan} passes are those it parses.
	 */
	@Test
	void rootModeAndItsOptionsAreTheLaunchers() throws IOException {
		assertThat(file("main.c")).contains("strcmp(argv[1], " + quoted(LauncherContract.ROOT) + ") == 0");
		Pattern option = Pattern.compile("\"(--[a-z][a-z0-9-]*)\"");
		List<String> launchers = option.matcher(file("rootoptions.c"))
			.results()
			.map((found) -> found.group(1))
			.distinct()
			.sorted()
			.toList();
		Path mechanisms = Path.of("src", "main", "java", "dev", "cavesandbox", "internal", "mechanism");
		List<String> javas = option
			.matcher(Files.readString(mechanisms.resolve("UnshareMountPlan.java"))
					+ rootMethod(Files.readString(mechanisms.resolve("Pid1Script.java"))))
			.results()
			.map((found) -> found.group(1))
			.distinct()
			.sorted()
			.toList();
		assertThat(javas).as("the options UnshareMountPlan and Pid1Script pass against those rootoptions.c parses")
			.isNotEmpty()
			.isEqualTo(launchers);
	}

	/** Pid1Script's root method, without the options of unshare and setpriv before it. */
	private static String rootMethod(String pid1Script) {
		return pid1Script.substring(pid1Script.indexOf("static List<String> root("));
	}

	/**
	 * The value of a {@code #define} at the start of a line of {@code launcher.h}, the
	 * shared header, which must be the only one in all of the sources.
	 */
	private static String define(String name) {
		Pattern pattern = Pattern.compile("^#define " + name + " (.+)$", Pattern.MULTILINE);
		Matcher define = pattern.matcher(file("launcher.h"));
		assertThat(define.find()).as("#define %s in %s", name, SOURCES.resolve("launcher.h")).isTrue();
		String value = define.group(1).trim();
		assertThat(pattern.matcher(source).results().count()).as("#define %s only once in %s", name, SOURCES)
			.isEqualTo(1);
		return value;
	}

	/** The text of one of the sources, which must exist. */
	private static String file(String name) {
		assertThat(files).as("the launcher's sources in %s", SOURCES.toAbsolutePath()).containsKey(name);
		return files.get(name);
	}

	private static String quoted(String text) {
		return '"' + text + '"';
	}

}
