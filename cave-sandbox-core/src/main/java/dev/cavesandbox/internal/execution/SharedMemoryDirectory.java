package dev.cavesandbox.internal.execution;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.SandboxLaunchException;
import dev.cavesandbox.internal.launcher.Launcher;
import dev.cavesandbox.internal.launcher.LauncherInstallation;
import dev.cavesandbox.internal.launcher.SharedMemoryPreload;
import dev.cavesandbox.internal.mechanism.SandboxMechanism;
import dev.cavesandbox.internal.workspace.PrivateDirectories;

/**
 * POSIX shared memory and named semaphores for one execution on the mechanisms without a
 * mount namespace ({@code namespaces}, {@code seccomp}), where {@code /dev/shm} is the
 * host's and Landlock refuses it: a private directory of the execution's own (another one
 * of {@link PrivateDirectories}, beside the working directory, released with it),
 * writable for the command ({@code --write}, and its owner where the command runs as a
 * uid of the host: the seccomp mechanism's command user), and the preload library
 * {@link SharedMemoryPreload} that puts {@code shm_open(3)} and {@code sem_open(3)}
 * objects there: readable for the command ({@code --read}, for a system view),
 * {@code LD_PRELOAD} (after the request's own; without one, the launcher sets it for the
 * command from {@value SharedMemoryPreload#LAUNCHER_VARIABLE}) and
 * {@value SharedMemoryPreload#DIRECTORY_VARIABLE} in its environment. No other
 * execution's directory is among the command's write paths, and {@code /dev/shm} stays
 * refused. The mechanisms with a mount namespace give a private {@code /dev/shm} of their
 * own and get nothing here.
 */
final class SharedMemoryDirectory {

	private SharedMemoryDirectory() {
	}

	/**
	 * Give the execution its directory of objects and the preload library, where the
	 * mechanism has no mount namespace; the command's environment names them at the
	 * request's claim ({@link #environment}).
	 * @param launch the launch, which releases the directory
	 * @param privateDirectories where the directory comes from
	 * @param workDirectory the work directory, where the library is extracted
	 * @param mechanism the execution's mechanism
	 * @return the mechanism with the directory writable and the library readable
	 * @throws SandboxLaunchException if the library cannot be installed or the directory
	 * cannot be handed to the command user
	 */
	static SandboxMechanism prepare(PreparedLaunch launch, PrivateDirectories privateDirectories, Path workDirectory,
			SandboxMechanism mechanism) {
		if (!SharedMemoryPreload.neededBy(mechanism)) {
			return mechanism;
		}
		Path library;
		try {
			library = SharedMemoryPreload.shared().resolve(workDirectory);
		}
		catch (LauncherInstallation.UnavailableException ex) {
			throw new SandboxLaunchException("could not install the shared-memory library of the " + mechanism.name()
					+ " mechanism: " + ex.getMessage(), ex);
		}
		Path created = privateDirectories.create();
		launch.sharedMemoryDirectory(created);
		Path directory;
		try {
			directory = created.toRealPath();
			if (launch.commandUser() != Launcher.CALLER) {
				Files.getFileAttributeView(directory, PosixFileAttributeView.class)
					.setOwner(FileSystems.getDefault()
						.getUserPrincipalLookupService()
						.lookupPrincipalByName(String.valueOf(launch.commandUser())));
			}
		}
		catch (IOException ex) {
			throw new SandboxLaunchException("could not give the shared-memory directory " + created
					+ " to the command user " + launch.commandUser() + ": " + ex.getMessage(), ex);
		}
		launch.sharedMemory(library, directory);
		return mechanism.withPaths(List.of(library), List.of(directory));
	}

	/**
	 * Name the launch's library and directory, if it has them, in the command's
	 * environment: the library after the request's own {@code LD_PRELOAD}, or, without
	 * one, in {@value SharedMemoryPreload#LAUNCHER_VARIABLE}, which the launcher makes
	 * {@code LD_PRELOAD} for the command alone.
	 * @param launch the launch
	 * @param environment the command's environment, changed in place
	 */
	static void environment(PreparedLaunch launch, Map<String, String> environment) {
		Path library = launch.sharedMemoryLibrary();
		Path directory = launch.sharedMemoryReal();
		if (library == null || directory == null) {
			return;
		}
		String preload = environment.get("LD_PRELOAD");
		if (preload == null || preload.isBlank()) {
			environment.put(SharedMemoryPreload.LAUNCHER_VARIABLE, library.toString());
		}
		else {
			environment.put("LD_PRELOAD", preload + ":" + library);
		}
		environment.put(SharedMemoryPreload.DIRECTORY_VARIABLE, directory.toString());
	}

}
