package dev.cavesandbox.benchmarks;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.imageio.ImageIO;

import dev.cavesandbox.ExecutionRequest;
import dev.cavesandbox.ExecutionResult;

/**
 * A workload of {@link PeersBenchmark}: the same argv for every variant, run in a working
 * directory that holds its input file, if any ({@value #INPUT}, a 64x64 PNG), where it
 * writes its output ({@value #OUTPUT}). The executor gets the input as an input file and
 * takes the output back as an output file.
 *
 * @param name the workload's name in the report: {@code true}, {@code python} or
 * {@code convert}
 * @param argv the command, its program an absolute real path (no link that a view without
 * {@code /etc/alternatives} could not follow)
 * @param input the PNG the command reads, or {@code null}
 */
record PeerWorkload(String name, List<String> argv, byte[] input) {

	static final String INPUT = "in.png";

	static final String OUTPUT = "out.png";

	private static final Path PYTHON = Path.of("/usr/bin/python3");

	private static final Path CONVERT = Path.of("/usr/bin/convert");

	/**
	 * Return the workloads whose program is installed here; print why the others are
	 * skipped.
	 * @return {@code true}, then {@code python} and {@code convert} where installed
	 * @throws IOException if the PNG cannot be made
	 */
	static List<PeerWorkload> available() throws IOException {
		List<PeerWorkload> workloads = new ArrayList<>();
		workloads.add(new PeerWorkload("true", List.of("/bin/true"), null));
		if (Files.isExecutable(PYTHON)) {
			workloads.add(new PeerWorkload("python",
					List.of(PYTHON.toRealPath().toString(), "-c", "print(sum(range(1000)))"), null));
		}
		else {
			System.out.println("# skipping workload python: " + PYTHON + " is not installed");
		}
		if (Files.isExecutable(CONVERT)) {
			workloads.add(new PeerWorkload("convert",
					List.of(CONVERT.toRealPath().toString(), INPUT, "-resize", "50%", OUTPUT), png()));
		}
		else {
			System.out.println("# skipping workload convert: " + CONVERT + " is not installed (ImageMagick)");
		}
		return workloads;
	}

	/** A 64x64 RGB PNG with a gradient. */
	private static byte[] png() throws IOException {
		BufferedImage image = new BufferedImage(64, 64, BufferedImage.TYPE_INT_RGB);
		for (int y = 0; y < 64; y++) {
			for (int x = 0; x < 64; x++) {
				image.setRGB(x, y, (x * 4) << 16 | (y * 4) << 8 | 128);
			}
		}
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ImageIO.write(image, "png", out);
		return out.toByteArray();
	}

	/**
	 * Put the input into a directory that a peer runs the workload in.
	 * @param directory the directory
	 * @throws IOException if it cannot be written
	 */
	void prepare(Path directory) throws IOException {
		if (this.input != null) {
			Files.write(directory.resolve(INPUT), this.input);
		}
	}

	/**
	 * Whether a run in the directory left the output a workload with an input writes.
	 * @param directory the directory
	 * @return whether it did, or the workload writes none
	 */
	boolean wroteOutput(Path directory) {
		return this.input == null || Files.isRegularFile(directory.resolve(OUTPUT));
	}

	/**
	 * Return the executor's request: a private working directory with the input file, the
	 * output file taken back.
	 * @return the request
	 */
	ExecutionRequest request() {
		ExecutionRequest.Builder builder = ExecutionRequest.builder(this.argv.toArray(String[]::new));
		if (this.input != null) {
			builder.inputFile(INPUT, this.input).outputFile(OUTPUT);
		}
		return builder.build();
	}

	/**
	 * Check an executor's result: exit 0, and the output file back where there is one.
	 * @param result the result
	 * @throws IllegalStateException if not
	 */
	void check(ExecutionResult result) {
		if (!result.succeeded()) {
			throw new IllegalStateException(this.name + ": " + result + ": " + result.stderrText());
		}
		if (this.input != null && result.outputFiles().content(OUTPUT).isEmpty()) {
			throw new IllegalStateException(this.name + ": no " + OUTPUT + " came back: " + result.outputFiles());
		}
	}

}
