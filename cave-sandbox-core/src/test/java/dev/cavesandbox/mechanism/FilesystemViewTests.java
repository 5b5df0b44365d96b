package dev.cavesandbox.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class FilesystemViewTests {

	@Test
	void directoriesInsideAnotherHiddenOneAndDuplicatesAreDropped() {
		FilesystemView view = FilesystemView
			.of(List.of(Path.of("/run"), Path.of("/tmp"), Path.of("/run/user"), Path.of("/tmp")), true);
		assertThat(view.hiddenDirectories()).containsExactly(Path.of("/run"), Path.of("/tmp"));
	}

	@Test
	void coversTheHiddenDirectoriesAndWhatLiesInThem() {
		FilesystemView view = FilesystemView.of(List.of(Path.of("/tmp")), true);
		assertThat(view.covers(Path.of("/tmp"))).isTrue();
		assertThat(view.covers(Path.of("/tmp/cave-sandbox-1/a"))).isTrue();
		assertThat(view.covers(Path.of("/tmpfoo"))).isFalse();
		assertThat(view.covers(Path.of("/srv"))).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/", "tmp", "run/user", "/tmp/../etc", "/run/./user" })
	void rootRelativeAndUnnormalizedPathsAreRejected(String directory) {
		assertThatIllegalArgumentException().isThrownBy(() -> new FilesystemView(List.of(Path.of(directory)), true))
			.withMessageContaining(directory);
	}

	@Test
	void nestedDirectoriesAreRejectedByTheConstructor() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(List.of(Path.of("/run"), Path.of("/run/user")), true))
			.withMessageContaining("/run/user lies inside hidden directory /run");
	}

	@Test
	void listedPathsComeParentsFirstAndAPathListedBothWaysEndsReadOnly() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/tmp")), true,
				List.of(Path.of("/usr")), Map.of(), List.of(), List.of(),
				List.of(Path.of("/srv/data/ro"), Path.of("/opt/tool"), Path.of("/srv/both")),
				List.of(Path.of("/srv/data"), Path.of("/srv/both")));
		assertThat(view.listedPaths()).containsExactly(new FilesystemView.Listed(Path.of("/srv/data"), true),
				new FilesystemView.Listed(Path.of("/srv/both"), true),
				new FilesystemView.Listed(Path.of("/opt/tool"), false),
				new FilesystemView.Listed(Path.of("/srv/both"), false),
				new FilesystemView.Listed(Path.of("/srv/data/ro"), false));
	}

}
