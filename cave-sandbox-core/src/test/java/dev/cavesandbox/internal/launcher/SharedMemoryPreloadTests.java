package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cavesandbox.CompiledPrograms;
import dev.cavesandbox.internal.workspace.PrivateHome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shared-memory preload library ({@code libcave-shm.so}, {@code shm-preload.c}) as
 * the jar carries it and {@link SharedMemoryPreload} installs it, run outside any
 * sandbox: how it is built (no library of its own, only weak references, so it loads
 * under glibc and musl), where it is extracted, and the POSIX rules of its functions, the
 * same under a glibc and a musl program.
 */
@EnabledOnOs(OS.LINUX)
class SharedMemoryPreloadTests {

	private static final String RULES = """
			sem_open inner slash: EINVAL
			sem_open empty: EINVAL
			sem_open dot: EINVAL
			sem_open dot dot: EINVAL
			sem_open too long: ENAMETOOLONG
			shm_open too long: ENAMETOOLONG
			shm_open inner slash: EINVAL
			sem_open missing: ENOENT
			sem_open above SEM_VALUE_MAX: EINVAL
			sem_open create: ok
			sem_open create again exclusive: EEXIST
			same address: yes
			value kept: 1
			mode: 640
			sem_close first: ok
			sem_close second: ok
			sem_close third: EINVAL
			sem_unlink: ok
			sem_unlink again: ENOENT
			shm_open create: ok
			shm_open create again exclusive: EEXIST
			mode: 604
			close-on-exec: yes
			shm_unlink: ok
			shm_unlink again: ENOENT
			""";

	@TempDir
	Path work;

	@TempDir
	Path programs;

	private final SharedMemoryPreload preload = new SharedMemoryPreload(
			LauncherBuild.platform(System.getProperty("os.arch")));

	@Test
	void isExtractedReadableForEveryoneBesideTheLauncherAndVerified() throws Exception {
		Path library = this.preload.resolve(this.work);
		Path home = PrivateHome.of(this.work).toRealPath();
		assertThat(library.getParent().getParent()).isEqualTo(home);
		assertThat(library.getParent().getFileName().toString()).startsWith("preload-");
		assertThat(library.getFileName().toString()).isEqualTo(SharedMemoryPreload.LIBRARY);
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(library, LinkOption.NOFOLLOW_LINKS)))
			.isEqualTo("r--r--r--");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(library.getParent())))
			.isEqualTo("rwxr-xr-x");
		assertThat(this.preload.resolve(this.work)).isEqualTo(library);
	}

	@Test
	void aCopyChangedSinceItWasVerifiedIsExtractedAgain() throws Exception {
		Path library = this.preload.resolve(this.work);
		String original = LauncherInstallation.sha256(library);
		Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rw-r--r--"));
		Files.writeString(library, "not the library");
		assertThat(this.preload.resolve(this.work)).isEqualTo(library);
		assertThat(LauncherInstallation.sha256(library)).isEqualTo(original);
	}

	@Test
	void needsNoLibraryAndReferencesNothingStrongly() throws Exception {
		Path library = this.preload.resolve(this.work);
		assertThat(run(List.of("readelf", "-d", library.toString()), null, null)).doesNotContain("(NEEDED)");
		String undefined = run(List.of("nm", "-D", "--undefined-only", library.toString()), null, null);
		assertThat(undefined.lines()).isNotEmpty().allSatisfy((line) -> assertThat(line.trim()).startsWith("w "));
		String defined = run(List.of("nm", "-D", "--defined-only", library.toString()), null, null);
		assertThat(defined.lines().map((line) -> line.substring(line.lastIndexOf(' ') + 1)))
			.containsExactlyInAnyOrder("sem_close", "sem_open", "sem_unlink", "shm_open", "shm_unlink");
	}

	@Test
	void followsThePosixRulesUnderGlibcAndMusl() throws Exception {
		Path library = this.preload.resolve(this.work);
		for (String compiler : List.of("gcc", "musl-gcc")) {
			Path program = CompiledPrograms.compile(compiler, "shared-memory", "shared-memory-" + compiler,
					this.programs, "-Wall", "-Werror");
			Path objects = Files.createDirectory(this.programs.resolve("objects-" + compiler));
			String output = run(List.of(program.toString(), "rules", "/rules"), library, objects);
			assertThat(output).as(compiler).isEqualTo(RULES);
			try (var left = Files.list(objects)) {
				assertThat(left).as("%s: what the rules left in %s", compiler, objects).isEmpty();
			}
		}
	}

	@Test
	void keepsTheObjectsInTheDirectoryItIsGiven() throws Exception {
		Path library = this.preload.resolve(this.work);
		Path program = CompiledPrograms.compile("gcc", "shared-memory", "shared-memory-gcc", this.programs);
		Path objects = Files.createDirectory(this.programs.resolve("objects"));
		String name = "held-" + ProcessHandle.current().pid();
		Process holder = start(List.of(program.toString(), "hold", "/" + name, "secret"), library, objects);
		try {
			String held = new String(holder.getInputStream().readNBytes(("held " + objects + "\n").length()),
					StandardCharsets.UTF_8);
			assertThat(held).isEqualTo("held " + objects + "\n");
			assertThat(objects.resolve(name)).hasContent("secret");
			assertThat(objects.resolve("sem." + name + "-sem")).isRegularFile();
			assertThat(Path.of("/dev/shm", name)).doesNotExist();
		}
		finally {
			holder.getOutputStream().close();
			assertThat(holder.waitFor(60, TimeUnit.SECONDS)).isTrue();
		}
	}

	private static String run(List<String> command, Path library, Path objects)
			throws IOException, InterruptedException {
		Process process = start(command, library, objects);
		process.getOutputStream().close();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s ended", command).isTrue();
		assertThat(process.exitValue()).as("%s: %s", command, output).isZero();
		return output;
	}

	private static Process start(List<String> command, Path library, Path objects) throws IOException {
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		if (library != null) {
			builder.environment().put("LD_PRELOAD", library.toString());
			builder.environment().put(SharedMemoryPreload.DIRECTORY_VARIABLE, objects.toString());
		}
		return builder.start();
	}

}
