package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Test programs written in C (test resources {@code dev/cavesandbox/NAME.c}), compiled
 * with the gcc that builds the launcher, for attacks that need the speed of a native
 * process (forks, a race from a command's first instruction), and installed in a
 * sandboxed command's working directory. Public for the other modules' tests.
 */
public final class CompiledPrograms {

	private CompiledPrograms() {
	}

	/**
	 * Compile the resource {@code NAME.c} into {@code directory/NAME}.
	 * @param name the program's name
	 * @param directory where to compile it
	 * @param options more options for gcc ({@code -static}: no loader between the
	 * program's start and its first instruction)
	 * @return the executable
	 */
	public static Path compile(String name, Path directory, String... options)
			throws IOException, InterruptedException {
		return compile("gcc", name, name, directory, options);
	}

	/**
	 * Compile the resource {@code NAME.c} with another compiler, such as
	 * {@code musl-gcc}.
	 * @param compiler the compiler
	 * @param name the program's name
	 * @param executable the executable's name in the directory
	 * @param directory where to compile it
	 * @param options more options for the compiler
	 * @return the executable
	 */
	public static Path compile(String compiler, String name, String executable, Path directory, String... options)
			throws IOException, InterruptedException {
		if (!Files.exists(directory.resolve(name + ".c"))) {
			MechanismsWithoutMountsBreakInTests.copyResource(name + ".c", directory);
		}
		List<String> command = new ArrayList<>(List.of(compiler, "-O2"));
		command.addAll(List.of(options));
		command.addAll(List.of("-o", executable, name + ".c"));
		Process gcc = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
		String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(gcc.waitFor(60, TimeUnit.SECONDS)).as("%s ended", compiler).isTrue();
		assertThat(gcc.exitValue()).as("%s: %s", compiler, output).isZero();
		return directory.resolve(executable);
	}

	/**
	 * Copy a compiled program into a working directory, executable by every user (a root
	 * JVM's command user, a JVM of another user).
	 * @param program the executable
	 * @param directory the working directory
	 * @return the copy
	 */
	public static Path install(Path program, Path directory) throws IOException {
		Path copy = Files.copy(program, directory.resolve(program.getFileName().toString()),
				StandardCopyOption.REPLACE_EXISTING);
		Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
		return copy;
	}

}
