package dev.cavesandbox;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class OutputFilesTests {

	private static final OutputFile PDF = new OutputFile("in.pdf", "%PDF-1.7".getBytes(StandardCharsets.US_ASCII));

	private static final OutputFile LOG = new OutputFile("logs/run.log", new byte[] { 'o', 'k' });

	@Test
	void filesAreFoundByTheirPath() {
		OutputFiles files = new OutputFiles(List.of(PDF, LOG), List.of("gone.txt"), List.of(), List.of(), false);
		assertThat(files.file("logs/run.log")).contains(LOG);
		assertThat(files.content("in.pdf")).hasValueSatisfying(
				(content) -> assertThat(content).asString(StandardCharsets.US_ASCII).isEqualTo("%PDF-1.7"));
		assertThat(files.content("gone.txt")).isEmpty();
		assertThat(files.content("logs")).isEmpty();
		assertThat(files.totalBytes()).isEqualTo(10);
	}

	@Test
	void listsAreCopiesThatCannotBeChanged() {
		List<String> omitted = new ArrayList<>(List.of("big.pdf"));
		OutputFiles files = new OutputFiles(List.of(PDF), List.of(), List.of("pipe"), omitted, true);
		omitted.clear();
		assertThat(files.omitted()).containsExactly("big.pdf");
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> files.files().clear());
		assertThat(files).hasToString("OutputFiles[1 files, 8 bytes, skipped [pipe], omitted [big.pdf], truncated]");
	}

	@Test
	void filesWrittenIntoADirectoryAreNamedByTheirPathThere() {
		OutputFiles files = new OutputFiles(List.of(), List.of(), List.of(), List.of(), false,
				List.of(Path.of("/srv/out/in.pdf")), List.of("taken.txt"));
		assertThat(files.files()).isEmpty();
		assertThat(files.written()).containsExactly(Path.of("/srv/out/in.pdf"));
		assertThat(files.unwritten()).containsExactly("taken.txt");
		assertThat(files)
			.hasToString("OutputFiles[0 files, 0 bytes, written [/srv/out/in.pdf], unwritten [taken.txt]]");
	}

	@Test
	void noneHasNothing() {
		assertThat(OutputFiles.NONE.files()).isEmpty();
		assertThat(OutputFiles.NONE.missing()).isEmpty();
		assertThat(OutputFiles.NONE.skipped()).isEmpty();
		assertThat(OutputFiles.NONE.omitted()).isEmpty();
		assertThat(OutputFiles.NONE.truncated()).isFalse();
		assertThat(OutputFiles.NONE.written()).isEmpty();
		assertThat(OutputFiles.NONE.unwritten()).isEmpty();
		assertThat(OutputFiles.NONE.totalBytes()).isZero();
	}

}
