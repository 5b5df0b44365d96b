package dev.cavesandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The confinement of a container, reproduced for real without a container runtime (see
 * platform-facts.md, "Containers, seccomp and Landlock"):
 * {@code container-confinement.py}, run by Debian's {@code /usr/bin/python3} with
 * libseccomp's own binding ({@code python3-seccomp}), loads a seccomp filter (libseccomp
 * sets {@code no_new_privs}, as Kubernetes' {@code allowPrivilegeEscalation: false} does)
 * and then executes the command line under {@code setpriv}. Needs root.
 */
final class ContainerConfinement {

	static final String PYTHON = "/usr/bin/python3";

	static final String SCRIPT = "container-confinement.py";

	private ContainerConfinement() {
	}

	/**
	 * What the container's runtime refuses.
	 */
	enum Profile {

		/**
		 * Docker's default (and containerd's RuntimeDefault) seccomp profile with
		 * Docker's default capability set as bounding set: {@code unshare},
		 * {@code setns}, the mount calls and {@code clone} with any {@code CLONE_NEW*}
		 * flag refused with EPERM, {@code clone3} with ENOSYS; everything else allowed
		 * ({@code seccomp}, {@code prctl} and the Landlock calls included). The
		 * Kubernetes "restricted" Pod Security Standard is this profile as
		 * {@link User#NOBODY}.
		 */
		DOCKER_DEFAULT("docker-default"),

		/**
		 * Only the mount calls refused with EPERM, as containerd's AppArmor profile does
		 * under Kubernetes; user and network namespaces can be created.
		 */
		MOUNTS_REFUSED("mounts-refused"),

		/**
		 * Nothing refused: a host's own JVM, as {@link User#NOBODY} an unprivileged one.
		 */
		UNCONFINED("unconfined");

		private final String argument;

		Profile(String argument) {
			this.argument = argument;
		}

	}

	/**
	 * Who runs in the container.
	 */
	enum User {

		/** The container's root (uid 0), with the profile's capabilities. */
		ROOT("root"),

		/** An unprivileged user: nobody (uid and gid 65534, no groups). */
		NOBODY("nobody");

		private final String argument;

		User(String argument) {
			this.argument = argument;
		}

	}

	/**
	 * Skip the test, naming what is missing, unless this host can reproduce the
	 * confinement: root (to switch users and keep capabilities), Debian's python3 with
	 * libseccomp's binding, and setpriv.
	 */
	static void assumeAvailable() {
		assumeThat(System.getProperty("user.name")).as("the container confinement needs root").isEqualTo("root");
		assumeThat(Path.of("/usr/bin/setpriv")).as("setpriv (util-linux) is installed").isExecutable();
		assumeThat(seccompBindingAvailable()).as("%s has the seccomp module (Debian package python3-seccomp)", PYTHON)
			.isTrue();
	}

	private static boolean seccompBindingAvailable() {
		if (!Files.isExecutable(Path.of(PYTHON))) {
			return false;
		}
		try {
			Process process = new ProcessBuilder(PYTHON, "-c", "import seccomp").redirectErrorStream(true).start();
			process.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
			return process.waitFor(60, TimeUnit.SECONDS) && process.exitValue() == 0;
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Return the command line that runs {@code argv} confined by the profile as the user.
	 * @param directory where to write the confinement script (read by root only)
	 * @param profile what is refused
	 * @param user who runs the command
	 * @param argv the command
	 * @return the command line
	 * @throws IOException if the script cannot be written
	 */
	static List<String> commandLine(Path directory, Profile profile, User user, List<String> argv) throws IOException {
		Path script = directory.resolve(SCRIPT);
		try (InputStream resource = ContainerConfinement.class.getResourceAsStream(SCRIPT)) {
			if (resource == null) {
				throw new IOException(SCRIPT + " is not on the class path");
			}
			Files.write(script, resource.readAllBytes());
		}
		Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rw-------"));
		List<String> command = new ArrayList<>(
				List.of(PYTHON, script.toString(), profile.argument, user.argument, "--"));
		command.addAll(argv);
		return command;
	}

}
