package dev.cavesandbox.sample;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;
import dev.cavesandbox.IsolatedExecutor;

/**
 * The demo's document conversion: an upload (a flat OpenDocument text, written here)
 * turned into a PDF by LibreOffice in the sandbox, as README's recipe runs it: headless,
 * with its profile in the working directory ({@code -env:UserInstallation} below
 * {@code $HOME}, which LibreOffice expands itself; the sandbox sets it to the working
 * directory), since the sandbox hides the host's home and {@code /tmp} and the seccomp
 * mechanism's command user has no home of its own. The upload goes in as an input file
 * and the PDF comes back as an output file (docs/output-files.md).
 */
final class DocumentConversion {

	static final String JOB = "LibreOffice: an uploaded .fodt to PDF (offline)";

	private static final String DOCUMENT = """
			<?xml version="1.0" encoding="UTF-8"?>
			<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
			    xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3"
			    office:mimetype="application/vnd.oasis.opendocument.text">
			 <office:body><office:text>
			  <text:h text:outline-level="1">Invoice 2026-0042</text:h>
			  <text:p>An upload converted to PDF inside the sandbox, with no network.</text:p>
			 </office:text></office:body>
			</office:document>
			""";

	private DocumentConversion() {
	}

	/**
	 * Convert the demo's document: it goes in as an input file, the PDF comes back in the
	 * result as an output file; the conversion's private working directory is removed
	 * with everything else LibreOffice left there.
	 * @param executor the sandbox
	 * @return the row: OK with the PDF's size, WRONG when no PDF came out, SKIPPED (as
	 * expected) when LibreOffice is not installed on the host
	 */
	static DemoReport.Row convert(IsolatedExecutor executor) {
		if (!onPath("soffice")) {
			return new DemoReport.Row(JOB, null,
					"SKIPPED: LibreOffice is not installed (apt-get install libreoffice-writer-nogui)", true);
		}
		ExecutionResult result = executor.execute(ExecutionRequest
			.builder("soffice", "--headless", "--norestore", "-env:UserInstallation=file://$HOME/.libreoffice",
					"--convert-to", "pdf", "invoice.fodt")
			.inputFile("invoice.fodt", DOCUMENT.getBytes(StandardCharsets.UTF_8))
			.outputFile("invoice.pdf")
			.timeout(Duration.ofSeconds(90))
			.build());
		byte[] pdf = result.outputFile("invoice.pdf").orElse(new byte[0]);
		boolean converted = result.succeeded() && startsWithPdfMagic(pdf);
		return new DemoReport.Row(JOB, result, converted ? "OK: invoice.pdf, " + pdf.length + " bytes"
				: "WRONG: no PDF came out (" + firstLine(result.stderrText()) + ")", converted);
	}

	private static boolean startsWithPdfMagic(byte[] pdf) {
		return pdf.length >= 5 && new String(pdf, 0, 5, StandardCharsets.US_ASCII).equals("%PDF-");
	}

	private static String firstLine(String text) {
		String trimmed = text.strip();
		int end = trimmed.indexOf('\n');
		return (end < 0) ? trimmed : trimmed.substring(0, end);
	}

	private static boolean onPath(String program) {
		String path = System.getenv("PATH");
		if (path == null) {
			return false;
		}
		for (String directory : path.split(File.pathSeparator)) {
			if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, program))) {
				return true;
			}
		}
		return false;
	}

}
