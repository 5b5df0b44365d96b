package dev.cavesandbox.internal.mechanism;

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

	/**
	 * A host view hides only what its hidden directories cover, and shows a listed path
	 * (and what lies in it) even inside one.
	 */
	@Test
	void hostViewHidesOnlyTheHiddenDirectoriesButShowsListedPaths() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.HOST, List.of(Path.of("/run")), true, List.of(),
				java.util.Map.of(), List.of(), List.of(), List.of(Path.of("/run/shared")),
				List.of(Path.of("/run/out")));
		assertThat(view.hides(Path.of("/run"))).isTrue();
		assertThat(view.hides(Path.of("/run/user/0/bus"))).isTrue();
		assertThat(view.hides(Path.of("/run/shared"))).isFalse();
		assertThat(view.hides(Path.of("/run/shared/a"))).isFalse();
		assertThat(view.hides(Path.of("/run/out/b"))).isFalse();
		assertThat(view.hides(Path.of("/run/sharedother"))).isTrue();
		assertThat(view.hides(Path.of("/opt/tool"))).isFalse();
		assertThat(view.hides(Path.of("/etc/shadow"))).isFalse();
	}

	/**
	 * A system view shows its system directories, its links and the listed paths, and
	 * hides the masked paths, the hidden directories and everything else of the host.
	 */
	@Test
	void systemViewShowsOnlyItsDirectoriesLinksAndListedPaths() {
		FilesystemView view = systemView();
		assertThat(view.hides(Path.of("/usr"))).isFalse();
		assertThat(view.hides(Path.of("/usr/bin/sh"))).isFalse();
		assertThat(view.hides(Path.of("/etc/passwd"))).isFalse();
		assertThat(view.hides(Path.of("/bin"))).isFalse();
		assertThat(view.hides(Path.of("/srv/data/input"))).isFalse();
		assertThat(view.hides(Path.of("/srv/out"))).isFalse();
		assertThat(view.hides(Path.of("/etc/shadow"))).isTrue();
		assertThat(view.hides(Path.of("/etc/ssl/private/key.pem"))).isTrue();
		assertThat(view.hides(Path.of("/etc/ssl/certs"))).isFalse();
		assertThat(view.hides(Path.of("/tmp/socket"))).isTrue();
		assertThat(view.hides(Path.of("/opt/tool"))).isTrue();
		assertThat(view.hides(Path.of("/srv/other"))).isTrue();
		assertThat(view.hides(Path.of("/usrlocal"))).isTrue();
		assertThat(view.hides(Path.of("/sbin"))).isTrue();
	}

	/**
	 * More listed paths come after the view's own, each once; without any the view is the
	 * same object.
	 */
	@Test
	void withPathsAddsTheRequestsPathsOnceAfterTheViewsOwn() {
		FilesystemView view = systemView();
		assertThat(view.withPaths(List.of(), List.of())).isSameAs(view);
		FilesystemView more = view.withPaths(List.of(Path.of("/srv/data"), Path.of("/srv/more"), Path.of("/srv/more")),
				List.of(Path.of("/srv/out"), Path.of("/srv/out2")));
		assertThat(more.readablePaths()).containsExactly(Path.of("/srv/data"), Path.of("/srv/more"));
		assertThat(more.writablePaths()).containsExactly(Path.of("/srv/out"), Path.of("/srv/out2"));
		assertThat(more).usingRecursiveComparison().ignoringFields("readablePaths", "writablePaths").isEqualTo(view);
		assertThat(view.readablePaths()).containsExactly(Path.of("/srv/data"));
		assertThat(view.withPaths(List.of(), List.of(Path.of("/srv/out3"))).writablePaths())
			.containsExactly(Path.of("/srv/out"), Path.of("/srv/out3"));
	}

	/**
	 * Every path of a view must be absolute and normalized, and a host view has no system
	 * directories or links.
	 */
	@Test
	void constructorRefusesRelativePathsAndSystemPartsInAHostView() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true, List.of(Path.of("usr")),
					java.util.Map.of(), List.of(), List.of(), List.of(), List.of()))
			.withMessage("a system directory must be an absolute, normalized path, but was usr");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true, List.of(),
					java.util.Map.of(Path.of("bin"), Path.of("usr/bin")), List.of(), List.of(), List.of(), List.of()))
			.withMessage("a system link must be an absolute, normalized path, but was bin");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true, List.of(),
					java.util.Map.of(), List.of(Path.of("etc/shadow")), List.of(), List.of(), List.of()))
			.withMessage("a masked file must be an absolute, normalized path, but was etc/shadow");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(), true, List.of(),
					java.util.Map.of(), List.of(), List.of(Path.of("/etc/ssl/../ssh")), List.of(), List.of()))
			.withMessage("a masked directory must be an absolute, normalized path, but was /etc/ssl/../ssh");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.HOST, List.of(), true, List.of(),
					java.util.Map.of(), List.of(), List.of(), List.of(Path.of("data")), List.of()))
			.withMessage("a readable path must be an absolute, normalized path, but was data");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.HOST, List.of(), true, List.of(),
					java.util.Map.of(), List.of(), List.of(), List.of(), List.of(Path.of("out"))))
			.withMessage("a writable path must be an absolute, normalized path, but was out");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.HOST, List.of(), true, List.of(Path.of("/usr")),
					java.util.Map.of(), List.of(), List.of(), List.of(), List.of()))
			.withMessage("a host view has no system directories or links");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new FilesystemView(FilesystemView.Kind.HOST, List.of(), true, List.of(),
					java.util.Map.of(Path.of("/bin"), Path.of("usr/bin")), List.of(), List.of(), List.of(), List.of()))
			.withMessage("a host view has no system directories or links");
	}

	private static FilesystemView systemView() {
		return new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/tmp")), true,
				List.of(Path.of("/usr"), Path.of("/etc")), java.util.Map.of(Path.of("/bin"), Path.of("usr/bin")),
				List.of(Path.of("/etc/shadow")), List.of(Path.of("/etc/ssl/private")), List.of(Path.of("/srv/data")),
				List.of(Path.of("/srv/out")));
	}

}
