package dev.cavesandbox.internal.mechanism;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class UnshareMountPlanTests {

	private static final FilesystemView HIDE_TMP_AND_RUN = TestViews.HIDE_TMP_AND_RUN;

	private static final FilesystemView SYSTEM = TestViews.SYSTEM;

	private static final Path WORK = Path.of("/srv/work");

	private static UnshareMountPlan plan(FilesystemView view, long uid, boolean keepUid) {
		return new UnshareMountPlan(view, WORK, null, uid == 0, false, keepUid, uid, uid);
	}

	@Test
	void hostViewHidesEachDirectoryBindsTheWorkingDirectoryAndMakesTheRootReadOnly() {
		assertThat(plan(HIDE_TMP_AND_RUN, 1000, true).commandLine()).containsExactly("/proc/self/fd/4", "root",
				"--hide", "/tmp", "--hide", "/run", "--workdir", "/srv/work", "--key-list", "/proc/keys", "--key-list",
				"/proc/key-users", "--read-only", "--pid1-user", "65534", "--map", "1000:1000", "--");
	}

	@Test
	void writableRootHasNoReadOnlyPass() {
		assertThat(plan(FilesystemView.of(List.of(Path.of("/run")), false), 1000, true).commandLine())
			.contains("--hide", "/run", "--workdir", "/srv/work")
			.doesNotContain("--read-only", "--new-root");
	}

	/**
	 * A system view: a new root on a tmpfs over the first hidden directory, the system
	 * directories, links sorted by path, the hidden directories, the listed paths by
	 * their descriptors (writable ones first, as outer opens them), masks, the read-only
	 * pass; a root caller's sysctls.
	 */
	@Test
	void systemViewBuildsANewRootOverAHiddenDirectory() {
		assertThat(plan(SYSTEM, 0, true).commandLine()).containsExactly("/proc/self/fd/4", "root", "--new-root", "/tmp",
				"--system", "/usr", "--system", "/etc", "--link", "/bin=usr/bin", "--link", "/lib=usr/lib", "--hide",
				"/tmp", "--hide", "/dev/shm", "--bind-listed", "10:/srv/out:rw", "--bind-listed", "11:/srv/data:ro",
				"--workdir", "/srv/work", "--mask-file", "/etc/shadow", "--mask-dir", "/etc/ssl/private", "--key-list",
				"/proc/keys", "--key-list", "/proc/key-users", "--read-only", "--root-sysctls", "--pid1-user", "65534",
				"--map", "0:0", "--");
	}

	@Test
	void systemViewPutsItsNewRootOverAHiddenDirectoryThatHoldsNoListedPath() {
		FilesystemView view = new FilesystemView(FilesystemView.Kind.SYSTEM,
				List.of(Path.of("/tmp"), Path.of("/dev/shm"), Path.of("/run")), true, List.of(Path.of("/usr")),
				Map.of(), List.of(), List.of(), List.of(Path.of("/tmp/input")), List.of());
		assertThat(plan(view, 1000, true).commandLine()).containsSequence("--new-root", "/run");
		FilesystemView none = new FilesystemView(FilesystemView.Kind.SYSTEM, List.of(Path.of("/dev/shm")), true,
				List.of(Path.of("/usr")), Map.of(), List.of(), List.of(), List.of(), List.of());
		assertThatIllegalArgumentException().isThrownBy(() -> plan(none, 1000, true))
			.withMessageContaining("a system view needs a hidden directory");
	}

	@Test
	void tmpfsSizeAndLoopbackAreOptions() {
		assertThat(new UnshareMountPlan(HIDE_TMP_AND_RUN, WORK, 16777216L, false, true, true, 1000, 1000).commandLine())
			.containsSequence("--hide", "/tmp", "--hide", "/run", "--tmpfs-size", "16777216")
			.contains("--loopback");
	}

	/**
	 * Without {@code keepUid} (util-linux before 2.38, or a root JVM's command user, whom
	 * the launcher switches to), PID 1 and the command stay in the user namespace of
	 * {@code unshare} or {@code outer}.
	 */
	@Test
	void withoutKeepUidNoUserNamespaceIsMade() {
		assertThat(plan(HIDE_TMP_AND_RUN, 1000, false).commandLine()).doesNotContain("--pid1-user", "--map")
			.endsWith("--read-only", "--");
	}

	@Test
	void hostViewBindsTheListedPathsByTheirDescriptors() {
		FilesystemView view = HIDE_TMP_AND_RUN.withPaths(List.of(Path.of("/run/in")), List.of(Path.of("/srv/out")));
		assertThat(plan(view, 1000, true).commandLine()).containsSequence("--hide", "/run", "--bind-listed",
				"10:/srv/out:rw", "--bind-listed", "11:/run/in:ro", "--workdir", "/srv/work");
	}

	/** Paths are data: each is one argument, whatever it holds. */
	@Test
	void hostilePathsAreSingleArguments() {
		Path directory = Path.of("/tmp/it's a $(dangerous) `dir`; rm -rf ~");
		assertThat(new UnshareMountPlan(HIDE_TMP_AND_RUN, directory, null, false, false, false, 1, 1).commandLine())
			.containsSequence("--workdir", directory.toString());
	}

	@Test
	void nullViewOrWorkingDirectoryIsRejected() {
		assertThatNullPointerException()
			.isThrownBy(() -> new UnshareMountPlan(null, WORK, null, false, false, false, 1, 1))
			.withMessage("view must not be null");
		assertThatNullPointerException()
			.isThrownBy(() -> new UnshareMountPlan(HIDE_TMP_AND_RUN, null, null, false, false, false, 1, 1))
			.withMessage("workingDirectory must not be null");
	}

}
