package dev.cavesandbox.internal.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.regex.Pattern;

import dev.cavesandbox.internal.launcher.LauncherInstallation.UnavailableException;

/**
 * The launcher's build in the jar for one platform: the binary under
 * {@code dev/cavesandbox/launcher/<platform>/}, with {@code launcher.properties} beside
 * it (its interface version and its SHA-256, recorded at build time).
 *
 * @param platform its directory, for example {@code linux-x86_64}
 * @param version its interface version, what it prints for {@code --version} after its
 * name
 * @param sha256 its SHA-256 recorded at build time
 * @param resource the class-path resource of the binary
 */
record LauncherBuild(String platform, String version, String sha256, String resource) {

	static final String RESOURCE_ROOT = "/dev/cavesandbox/launcher/";

	static final String PROPERTIES = "launcher.properties";

	private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

	/**
	 * Return the directory of the launcher's build in the jar for a Java {@code os.arch}.
	 * @param osArch the architecture as Java names it
	 * @return {@code linux-x86_64}, {@code linux-aarch64}, or {@code linux-<osArch>} for
	 * an architecture without a build
	 */
	static String platform(String osArch) {
		return switch (osArch) {
			case "amd64", "x86_64" -> "linux-x86_64";
			case "aarch64", "arm64" -> "linux-aarch64";
			default -> "linux-" + osArch;
		};
	}

	/**
	 * Return the launcher's build for a platform, as recorded in the jar.
	 * @param platform the directory of the build in the jar
	 * @return the build
	 * @throws UnavailableException if the jar has none, or its properties record no
	 * version or no SHA-256
	 */
	static LauncherBuild of(String platform) throws UnavailableException {
		String directory = RESOURCE_ROOT + platform + "/";
		String binary = LauncherInstallation.BINARY;
		Properties properties = new Properties();
		try (InputStream in = LauncherBuild.class.getResourceAsStream(directory + PROPERTIES)) {
			if (in == null || LauncherBuild.class.getResource(directory + binary) == null) {
				throw new UnavailableException("no build of the launcher for architecture " + platform + " (os.arch "
						+ System.getProperty("os.arch") + "): the jar has no " + directory.substring(1) + binary
						+ "; build cave-sandbox-core on that architecture");
			}
			properties.load(in);
		}
		catch (IOException ex) {
			throw new UnavailableException(
					"cannot read " + directory.substring(1) + PROPERTIES + " from the jar: " + ex);
		}
		String version = properties.getProperty("version", "");
		String sha256 = properties.getProperty("sha256", "");
		if (version.isBlank() || !SHA256.matcher(sha256).matches()) {
			throw new UnavailableException(directory.substring(1) + PROPERTIES
					+ " in the jar records no version or no SHA-256 of the launcher: " + properties);
		}
		return new LauncherBuild(platform, version, sha256, directory + binary);
	}

	/**
	 * The way out when the extracted copy cannot be used: a copy of this build elsewhere,
	 * or another work directory.
	 * @return the hint, for the end of a message
	 */
	String installHint() {
		return "point launcherPath at an executable copy of the launcher on a filesystem that allows execution "
				+ "(copied from the jar's " + this.resource.substring(1) + "), with SHA-256 " + this.sha256
				+ ", or choose a work directory (workDirectory) that is writable and allows execution";
	}

}
