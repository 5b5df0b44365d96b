package dev.cavesandbox;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class OutputFileTests {

	@Test
	void contentIsACopyThatNoCallerChanges() {
		byte[] content = { 1, 2, 3 };
		OutputFile file = new OutputFile("a.bin", content);
		content[0] = 9;
		file.content()[1] = 9;
		file.content()[2] = 9;
		assertThat(file.content()).containsExactly(1, 2, 3);
		assertThat(file.size()).isEqualTo(3);
		assertThat(file).isEqualTo(new OutputFile("a.bin", new byte[] { 1, 2, 3 }))
			.hasSameHashCodeAs(new OutputFile("a.bin", new byte[] { 1, 2, 3 }))
			.isNotEqualTo(new OutputFile("a.bin", new byte[] { 1, 2 }))
			.hasToString("OutputFile[a.bin, 3 bytes]");
	}

}
