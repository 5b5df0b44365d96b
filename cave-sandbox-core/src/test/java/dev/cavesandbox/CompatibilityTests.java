package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The compatibility suite (issue 28): the real programs users sandbox, each in every
 * shape of {@link CompatibilityShape} (every mechanism as a root JVM and as nobody's JVM,
 * Docker's default profile and the Kubernetes restricted shape, reproduced and in a real
 * {@code runc} container), in a private working directory of its own with its deadline as
 * the execution's timeout. A cell passes when the program exits 0 and prints what only a
 * working program prints ({@link CompatibilityProgram}); nothing is marked as expected to
 * fail, and a program missing on the host fails its cells (CI installs them). Every
 * cell's outcome goes to {@link CompatibilityTable}, from which the table of
 * docs/compatibility.md is made ({@code compat/compatibility-table.sh}).
 * <p>
 * One runner per shape serves every program: this JVM's executor, or a child JVM whose
 * probe's verdict is checked once; a shape whose runner does not start fails each of its
 * cells with the same first line.
 */
@Tag("compat")
@Tag("sandbox")
@EnabledOnOs(OS.LINUX)
class CompatibilityTests {

	private static final List<CompatibilityShape> SHAPES = CompatibilityShape.all();

	private static final CompatibilityTable table = new CompatibilityTable(SHAPES);

	/** Each shape's runner, or what kept it from starting. */
	private static final Map<CompatibilityShape, Object> runners = new LinkedHashMap<>();

	@TempDir
	static Path directory;

	static List<CompatibilityShape> shapes() {
		return SHAPES;
	}

	@AfterAll
	static void closeRunners() throws Exception {
		for (Object runner : runners.values()) {
			if (runner instanceof CompatibilityShape.Runner started) {
				started.close();
			}
		}
		runners.clear();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void pythonMultiprocessingPoolAndManagerWork(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.PYTHON_MULTIPROCESSING, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void pythonAsyncioSubprocessAndFilesWork(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.PYTHON_ASYNCIO_SUBPROCESS_FILES, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void nodeChildProcessAndWorkerThreadsWork(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.NODE, shape);
	}

	@Tag("compat-heavy")
	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void libreOfficeConvertsADocumentToPdf(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.LIBREOFFICE, shape);
	}

	@Tag("compat-heavy")
	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void headlessChromiumPrintsAPageToPdf(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.CHROMIUM, shape);
	}

	@Tag("compat-heavy")
	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void playwrightStartsChromiumAndPrintsAPageToPdf(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.PLAYWRIGHT, shape);
	}

	/**
	 * Puppeteer with {@code pipe: true}: its default, a DevTools port on 127.0.0.1, has
	 * no TCP in the sandbox, and Puppeteer waits 30 s for it before it gives up.
	 */
	@Tag("compat-heavy")
	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void puppeteerStartsChromiumOverAPipeAndPrintsAPageToPdf(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.PUPPETEER, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void pandocConvertsMarkdownToHtml(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.PANDOC, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void ffmpegEncodesAGeneratedVideo(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.FFMPEG, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void imageMagickMakesAPng(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.IMAGEMAGICK, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void gitInitialisesARepositoryAndCommits(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.GIT, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void gccCompilesAndRunsAProgram(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.GCC, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void sqliteStoresAndSums(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.SQLITE, shape);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void childJvmRunsASourceFile(CompatibilityShape shape) throws Exception {
		check(CompatibilityProgram.JAVA, shape);
	}

	private static void check(CompatibilityProgram program, CompatibilityShape shape) throws Exception {
		if (shape.kind() != CompatibilityShape.Kind.ROOT_JVM) {
			ContainerConfinement.assumeAvailable();
		}
		CompatibilityOutcome outcome = outcome(program, shape);
		table.record(program, shape, outcome);
		assertThat(outcome.ok()).as("%s in %s: %s%n%s", program, shape, outcome.summary(), outcome.detail()).isTrue();
	}

	private static CompatibilityOutcome outcome(CompatibilityProgram program, CompatibilityShape shape) {
		Object runner = runners.computeIfAbsent(shape, CompatibilityTests::start);
		if (runner instanceof Throwable failure) {
			return CompatibilityOutcome.error("runner did not start", failure.getMessage());
		}
		try {
			return ((CompatibilityShape.Runner) runner).run(program);
		}
		catch (Exception | AssertionError ex) {
			return CompatibilityOutcome.error("runner failed", ex.toString());
		}
	}

	private static Object start(CompatibilityShape shape) {
		try {
			Path own = Files.createDirectory(directory.resolve("shape-" + SHAPES.indexOf(shape)));
			return shape.start(own);
		}
		catch (Exception | AssertionError ex) {
			return ex;
		}
	}

}
