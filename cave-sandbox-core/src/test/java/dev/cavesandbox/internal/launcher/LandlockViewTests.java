package dev.cavesandbox.internal.launcher;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.ResourceLimits;
import dev.cavesandbox.internal.mechanism.FilesystemView;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The options of {@link LandlockView}, alone and in {@link Launcher}'s argv; their order
 * among the other options is shown by {@link LauncherTests}.
 */
class LandlockViewTests {

	private final Launcher launcher = new Launcher(Path.of("/opt/cave-sandbox-launcher"), false);

	@Test
	void hostViewGivesOnlyItsWritablePathsAndWithoutThemNothing() {
		FilesystemView host = FilesystemView.of(List.of(Path.of("/tmp")), true);
		assertThat(LandlockView.options(host.withPaths(List.of(Path.of("/srv/in")), List.of(Path.of("/srv/out")))))
			.containsExactly("--write", "/srv/out");
		assertThat(this.launcher.inside(LauncherContract.EXEC, false, false, true, host, ResourceLimits.NONE,
				List.of("cmd")))
			.isEqualTo(this.launcher.inside(LauncherContract.EXEC, false, false, true, List.of("cmd")));
	}

	@Test
	void viewIsRefusedWithAMountNamespaceAndASystemViewWithoutAnyReadPath() {
		FilesystemView host = FilesystemView.of(List.of(), true);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.launcher.inside(LauncherContract.INIT, false, false, false, host,
					ResourceLimits.NONE, List.of("cmd")))
			.withMessageContaining("only without a mount namespace");
		FilesystemView empty = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true, List.of(), Map.of(),
				List.of(Path.of("/etc/shadow")), List.of(), List.of(), List.of(Path.of("/srv/out")));
		assertThatIllegalArgumentException().isThrownBy(() -> LandlockView.options(empty))
			.withMessageContaining("as the host's");
	}

}
