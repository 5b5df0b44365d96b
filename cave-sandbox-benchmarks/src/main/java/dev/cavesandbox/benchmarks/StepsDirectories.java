package dev.cavesandbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import dev.cavesandbox.SandboxSettings;
import dev.cavesandbox.internal.workspace.DirectoryTrees;
import dev.cavesandbox.internal.workspace.PrivateDirectories;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The private directories of an executor in a work directory of their own, and a
 * directory of them to grant: for {@link ExecutorStepsBenchmark#sharedMemoryDirectory}
 * and {@link ExecutorStepsBenchmark#workingDirectoryGrant}.
 */
@State(Scope.Benchmark)
public class StepsDirectories {

	Path workDirectory;

	PrivateDirectories directories;

	Path granted;

	boolean root;

	long gid;

	@Setup
	public void setUp() throws IOException {
		this.workDirectory = Files.createTempDirectory("cave-sandbox-steps-").toRealPath();
		Files.setPosixFilePermissions(this.workDirectory, PosixFilePermissions.fromString("rwx--x--x"));
		this.root = "root".equals(System.getProperty("user.name"));
		this.directories = new PrivateDirectories(this.workDirectory, 16, true, this.root);
		this.granted = this.directories.create().toRealPath();
		this.gid = this.root ? SandboxSettings.Linux.DEFAULT_COMMAND_USER
				: ((Integer) Files.getAttribute(this.granted, "unix:gid")).longValue();
	}

	@TearDown
	public void tearDown() {
		this.directories.release(this.granted);
		this.directories.close();
		DirectoryTrees.delete(this.workDirectory);
	}

}
