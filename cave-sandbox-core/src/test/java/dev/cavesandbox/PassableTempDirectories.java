package dev.cavesandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * The {@code @TempDir} factory of these tests (set in {@code junit-platform.properties}):
 * JUnit's standard temporary directory with mode 0711 instead of 0700, so that the
 * command user a root JVM's seccomp mechanism switches to (a uid of the host) may pass it
 * to reach a working directory inside. It may not list it.
 */
public final class PassableTempDirectories implements TempDirFactory {

	@Override
	public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext)
			throws Exception {
		Path directory = Files.createTempDirectory("junit-");
		Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x--x"));
		return directory;
	}

}
