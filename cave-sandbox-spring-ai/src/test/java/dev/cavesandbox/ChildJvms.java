package dev.cavesandbox;

import java.util.List;

import dev.cavesandbox.internal.process.ProcessRunnerTests;

/**
 * The core tests' child JVMs and process lookups, for the tests of the Spring AI module
 * (another package).
 */
public final class ChildJvms {

	private ChildJvms() {
	}

	/**
	 * Return a builder of a JVM with this JVM's class path that runs the given main
	 * class.
	 * @param main the main class
	 * @param args its arguments
	 * @return the process builder
	 */
	public static ProcessBuilder childJvm(Class<?> main, String... args) {
		return ProcessRunnerTests.childJvm(List.of(), main, args);
	}

	/**
	 * Return the processes of this host whose command line contains the marker.
	 * @param marker the marker
	 * @return the processes
	 */
	public static List<ProcessHandle> processesWith(String marker) {
		return ProcessRunnerTests.processesWith(marker);
	}

}
