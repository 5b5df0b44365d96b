package dev.cavesandbox.internal.mechanism;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class ShellScriptsTests {

	@Test
	void loadLeavesOutTheCommentLinesAndKeepsEveryOtherLine() {
		String script = ShellScripts.load("pid1-start.sh");
		assertThat(script).isEqualTo("set -e\nread -r _ _ n < /proc/self/uid_map\n"
				+ "[ \"$n\" = 1 ] || { echo 'cave-sandbox: not in a new user namespace' >&2; exit 125; }\n");
	}

	@Test
	void aMissingScriptIsAnIllegalStateNamingIt() {
		assertThatIllegalStateException().isThrownBy(() -> ShellScripts.load("missing.sh"))
			.withMessage("the shell script /dev/cavesandbox/scripts/missing.sh is not on the class path");
	}

	@Test
	void fillReplacesThePlaceholderAndRefusesAScriptWithoutIt() {
		assertThat(ShellScripts.fill("case \"$m\" in @P@) continue ;; esac\n", "@P@", "'/a'|'/a'/*"))
			.isEqualTo("case \"$m\" in '/a'|'/a'/*) continue ;; esac\n");
		assertThatIllegalStateException().isThrownBy(() -> ShellScripts.fill("true\n", "@P@", "x"))
			.withMessageContaining("@P@");
	}

}
