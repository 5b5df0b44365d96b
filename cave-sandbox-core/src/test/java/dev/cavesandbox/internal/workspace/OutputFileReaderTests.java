package dev.cavesandbox.internal.workspace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.ForEachLinuxMechanism;
import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.LinuxMechanisms;
import dev.cavesandbox.MechanismChoice;
import dev.cavesandbox.OutputFile;
import dev.cavesandbox.OutputFiles;
import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.SharedExecutors;
import dev.cavesandbox.internal.execution.ProcessIsolatedExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The request's output files ({@link ExecutionRequest.Builder#outputFile},
 * {@link ExecutionRequest.Builder#outputFiles}), read back by the executor from the
 * private working directory after the process tree has ended, on every Linux mechanism
 * and unisolated. Run as root (as the tests run here), the command is the command user on
 * every mechanism (on seccomp a uid of the host of its own), whose files the root JVM
 * reads. The links and FIFOs are the command's attacks on the reader: a link to a file
 * only root may read, or to a directory of another, must not be read through; a FIFO must
 * not be opened (its open would wait for a writer forever).
 */
@EnabledOnOs(OS.LINUX)
class OutputFileReaderTests {

	/** A generous "it did not hang" limit, not a measure. */
	private static final Duration NO_HANG = Duration.ofSeconds(120);

	private static final SharedExecutors executors = new SharedExecutors((settings) -> settings);

	@AfterAll
	static void closeExecutors() {
		executors.close();
	}

	private static ProcessIsolatedExecutor isolated(MechanismChoice mechanism) {
		return executors.isolated(mechanism);
	}

	@ForEachLinuxMechanism
	void theFilesTheCommandWroteComeBackWhole(MechanismChoice mechanism) {
		assertFilesComeBack(isolated(mechanism));
	}

	@Test
	void theFilesTheCommandWroteComeBackWholeUnisolated() {
		assertFilesComeBack(executors.unisolated());
	}

	private static void assertFilesComeBack(IsolatedExecutor executor) {
		String text = "report " + UUID.randomUUID();
		ExecutionResult result = executor.execute(ExecutionRequest
			.builder("sh", "-c",
					"printf %s \"$1\" > report.txt && mkdir -p out/deep && head -c 70000 /dev/urandom"
							+ " > out/deep/data.bin && od -An -tx1 -v out/deep/data.bin | tr -d ' \\n'",
					"sh", text)
			.outputFile("report.txt")
			.outputFile("out/deep/data.bin")
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.outputFile("report.txt"))
			.hasValueSatisfying((content) -> assertThat(new String(content, StandardCharsets.UTF_8)).isEqualTo(text));
		assertThat(result.outputFile("out/deep/data.bin")).hasValueSatisfying((content) -> {
			assertThat(content).hasSize(70000);
			assertThat(hex(content)).isEqualTo(result.stdoutText());
		});
		assertThat(result.outputFiles().files()).extracting(OutputFile::path)
			.containsExactly("report.txt", "out/deep/data.bin");
		assertThat(result.outputFiles().missing()).isEmpty();
		assertThat(result.outputFiles().skipped()).isEmpty();
		assertThat(result.outputFilesTruncated()).isFalse();
	}

	@ForEachLinuxMechanism
	void globsReturnTheRegularFilesTheyMatchInTheOrderOfTheirNames(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest
			.builder("sh", "-c",
					"mkdir -p pages/sub && for n in 2 1 3; do echo $n > page$n.pdf; done && echo x > notes.txt"
							+ " && echo s > pages/sub/deep.pdf && echo p > pages/p.pdf && mkdir dir.pdf")
			.outputFiles("*.pdf", "pages/**.pdf", "nothing/*.png")
			.outputFile("page2.pdf")
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		OutputFiles files = result.outputFiles();
		assertThat(files.files()).extracting(OutputFile::path)
			.containsExactly("page2.pdf", "page1.pdf", "page3.pdf", "pages/p.pdf", "pages/sub/deep.pdf");
		assertThat(files.content("page3.pdf"))
			.hasValueSatisfying((content) -> assertThat(content).asString().isEqualTo("3\n"));
		assertThat(files.missing()).as("a glob that matches nothing adds nothing").isEmpty();
		assertThat(files.skipped()).as("a directory a glob matches is left out").isEmpty();
		assertThat(files.truncated()).isFalse();
	}

	@Test
	void aDirectoryOfMoreNamesThanTheBoundIsReadOnlyToItAndTheWalkIsCut(@TempDir Path directory) throws Exception {
		createEmptyFiles(directory, OutputFileReader.MAX_ENTRIES + 10);
		OutputFiles files = OutputFileReader.read(directory, List.of(), List.of("*"), 1024, null);
		assertThat(files.files()).hasSize(OutputFileReader.MAX_ENTRIES);
		assertThat(files.files()).extracting(OutputFile::path).as("sorted among the names read").isSorted();
		assertThat(files.truncated()).isTrue();
	}

	@Test
	void aDirectoryOfAsManyNamesAsTheBoundIsReadWhole(@TempDir Path directory) throws Exception {
		createEmptyFiles(directory, OutputFileReader.MAX_ENTRIES);
		OutputFiles files = OutputFileReader.read(directory, List.of(), List.of("*"), 1024, null);
		assertThat(files.files()).hasSize(OutputFileReader.MAX_ENTRIES);
		assertThat(files.truncated()).isFalse();
	}

	@Test
	void aSubdirectoryGetsWhatIsLeftOfTheBoundAfterItsParentsNames(@TempDir Path directory) throws Exception {
		createEmptyFiles(Files.createDirectory(directory.resolve("a")), OutputFileReader.MAX_ENTRIES);
		Files.writeString(directory.resolve("b.txt"), "b");
		OutputFiles files = OutputFileReader.read(directory, List.of(), List.of("**"), 1024, null);
		// The top's two names are read first; "a" gets the rest.
		assertThat(files.files()).hasSize(OutputFileReader.MAX_ENTRIES - 1);
		assertThat(files.files().get(files.files().size() - 1).path()).isEqualTo("b.txt");
		assertThat(files.truncated()).isTrue();
	}

	private static void createEmptyFiles(Path directory, int count) throws IOException {
		for (int i = 0; i < count; i++) {
			Files.createFile(directory.resolve(String.format("f%05d", i)));
		}
	}

	@ForEachLinuxMechanism
	void filesPastTheCapAreLeftOutWholeAndTheResultSaysWhich(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest
			.builder("sh", "-c", "head -c 600 /dev/zero > a; head -c 600 /dev/zero > b; head -c 300 /dev/zero > c")
			.outputFile("a")
			.outputFile("b")
			.outputFile("c")
			.maxOutputFileBytes(1000)
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.outputFiles().files()).extracting(OutputFile::path).containsExactly("a", "c");
		assertThat(result.outputFiles().omitted()).containsExactly("b");
		assertThat(result.outputFilesTruncated()).isTrue();
		assertThat(result.outputFiles().totalBytes()).isEqualTo(900);
	}

	@Test
	void theSettingsCapAppliesWhereTheRequestSetsNone() {
		try (ProcessIsolatedExecutor executor = ProcessIsolatedExecutor
			.unisolated(SandboxSettings.builder().maxOutputFileBytes(100).build())) {
			ExecutionResult result = executor.execute(
					ExecutionRequest.builder("sh", "-c", "head -c 100 /dev/zero > fits; head -c 101 /dev/zero > over")
						.outputFiles("*")
						.build());
			assertThat(result.outputFiles().files()).extracting(OutputFile::path).containsExactly("fits");
			assertThat(result.outputFiles().omitted()).containsExactly("over");
		}
	}

	@ForEachLinuxMechanism
	void missingFilesAreNamedInTheResult(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest.builder("sh", "-c", "echo f > file")
			.outputFile("out.pdf")
			.outputFile("file/below")
			.outputFile("no/such/dir")
			.outputFiles("*.pdf")
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.outputFiles().files()).isEmpty();
		assertThat(result.outputFiles().missing()).containsExactly("out.pdf", "file/below", "no/such/dir");
		assertThat(result.outputFile("out.pdf")).isEmpty();
		assertThat(result.outputFilesTruncated()).isFalse();
	}

	/**
	 * Links the command made, to a file only root reads ({@code /etc/shadow} of the host)
	 * and into a directory of another (this test's, as another execution's would be),
	 * named as output files directly, through a linked directory and by a glob: none is
	 * read through, each is named as skipped. A hard link to {@code /etc/shadow} (a
	 * regular file, which would be read) cannot be made: the file is outside the
	 * command's view.
	 */
	@ForEachLinuxMechanism
	void symbolicLinksTheCommandMadeAreNotFollowed(MechanismChoice mechanism, @TempDir Path other) throws Exception {
		String secret = "secret of another " + UUID.randomUUID();
		Files.writeString(other.resolve("secret.txt"), secret);
		ExecutionResult result = isolated(mechanism).execute(ExecutionRequest
			.builder("sh", "-c",
					"ln -s /etc/shadow shadow.pdf && ln -s \"$1/secret.txt\" other.pdf && ln -s \"$1\" dir"
							+ " && ln -s /etc etc && echo ok > ok.pdf && { ln /etc/shadow hard.pdf || true; }",
					"sh", other.toString())
			.outputFile("shadow.pdf")
			.outputFile("other.pdf")
			.outputFile("dir/secret.txt")
			.outputFile("etc/shadow")
			.outputFiles("*.pdf", "**")
			.build());
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		OutputFiles files = result.outputFiles();
		assertThat(files.files()).extracting(OutputFile::path).containsExactly("ok.pdf");
		assertThat(files.skipped()).containsExactlyInAnyOrder("shadow.pdf", "other.pdf", "dir/secret.txt", "etc/shadow",
				"dir", "etc");
		assertThat(files.missing()).isEmpty();
		String shadow = Files.readString(Path.of("/etc/shadow"));
		assertThat(files.files())
			.allSatisfy((file) -> assertThat(new String(file.content(), StandardCharsets.UTF_8)).isNotEqualTo(shadow)
				.doesNotContain(secret));
	}

	/**
	 * FIFOs the command made (whose open would wait for a writer that never comes) are
	 * not opened, named or matched: the execution returns, with the regular file beside
	 * them.
	 */
	@ForEachLinuxMechanism
	void fifosAreSkippedWithoutHangingTheExecutor(MechanismChoice mechanism) {
		ExecutionResult result = assertTimeoutPreemptively(NO_HANG,
				() -> isolated(mechanism).execute(ExecutionRequest
					.builder("sh", "-c", "mkfifo out.pdf && mkdir sub && mkfifo sub/pipe.pdf && echo ok > sub/ok.pdf")
					.outputFile("out.pdf")
					.outputFiles("sub/*.pdf")
					.build()));
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(result.outputFiles().files()).extracting(OutputFile::path).containsExactly("sub/ok.pdf");
		assertThat(result.outputFiles().skipped()).containsExactly("out.pdf", "sub/pipe.pdf");
	}

	@ForEachLinuxMechanism
	void filesAreReadAfterATimeoutToo(MechanismChoice mechanism) {
		ExecutionResult result = isolated(mechanism)
			.execute(ExecutionRequest.builder("sh", "-c", "echo partial > part.txt && exec sleep 600")
				.outputFile("part.txt")
				.timeout(Duration.ofSeconds(2))
				.build());
		assertThat(result.timedOut()).isTrue();
		assertThat(result.outputFile("part.txt"))
			.hasValueSatisfying((content) -> assertThat(content).asString().isEqualTo("partial\n"));
	}

	@Test
	void aRequestWithoutOutputFilesGetsNone() {
		ExecutionResult result = executors.unisolated().execute(ExecutionRequest.of("sh", "-c", "echo x > x"));
		assertThat(result.outputFiles()).isSameAs(OutputFiles.NONE);
	}

	/**
	 * The example of docs/output-files.md: LibreOffice converts an input file to PDF in
	 * the sandbox, and the PDF comes back in the result. Its profile goes below
	 * {@code $HOME} (the working directory), which LibreOffice expands itself: it takes
	 * its default profile's home from the user database, where the seccomp mechanism's
	 * command user of a root JVM has no entry.
	 */
	@ForEachLinuxMechanism
	@Tag("compat")
	@Tag("compat-heavy")
	void libreOfficeConvertsADocumentWhosePdfComesBack(MechanismChoice mechanism) {
		IsolatedExecutor executor = isolated(mechanism);
		byte[] document = """
				<?xml version="1.0" encoding="UTF-8"?>
				<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
				    xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3"
				    office:mimetype="application/vnd.oasis.opendocument.text">
				 <office:body><office:text><text:p>Hello from the sandbox</text:p></office:text></office:body>
				</office:document>
				""".getBytes(StandardCharsets.UTF_8);
		// docs/output-files.md: begin
		ExecutionResult result = executor.execute(ExecutionRequest
			.builder("soffice", "--headless", "-env:UserInstallation=file://$HOME/.libreoffice", "--convert-to", "pdf",
					"letter.fodt")
			.inputFile("letter.fodt", document)
			.outputFile("letter.pdf")
			.timeout(Duration.ofSeconds(120))
			.build());
		byte[] pdf = result.outputFile("letter.pdf").orElseThrow();
		// docs/output-files.md: end
		assertThat(result.exitCode()).as(result.stderrText()).isZero();
		assertThat(new String(pdf, 0, 5, StandardCharsets.US_ASCII)).isEqualTo("%PDF-");
	}

	private static String hex(byte[] bytes) {
		StringBuilder hex = new StringBuilder();
		for (byte b : bytes) {
			hex.append(String.format("%02x", b));
		}
		return hex.toString();
	}

}
