package dev.cavesandbox.internal.mechanism;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class ShellScriptsTests {

	@Test
	void loadLeavesOutTheCommentLinesAndKeepsEveryOtherLine() {
		String script = ShellScripts.load("probe.sh");
		assertThat(script).startsWith("marker=$1 write=$2 outside=$3 planted=$4\nshift 4\n").endsWith("\n");
		assertThat(script.lines()).noneMatch((line) -> line.stripLeading().startsWith("#"));
	}

	@Test
	void aMissingScriptIsAnIllegalStateNamingIt() {
		assertThatIllegalStateException().isThrownBy(() -> ShellScripts.load("missing.sh"))
			.withMessage("the shell script /dev/cavesandbox/scripts/missing.sh is not on the class path");
	}

}
