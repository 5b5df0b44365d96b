package dev.cavesandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The processes of the host that carry a test's marker in their command line (a test
 * program's argument, kept by every fork): found, and killed, so that a tree a failed
 * teardown left behind is reported and does not outlive its test. Public for the other
 * modules' tests (the sample's CLI).
 */
public final class MarkedProcesses {

	private MarkedProcesses() {
	}

	/**
	 * Every process of the host one of whose threads has the marker in its command line
	 * (the leader's command line is empty once the leader has exited), as "pid state ppid
	 * uid".
	 */
	public static List<String> leftovers(String marker) throws IOException {
		List<String> found = new ArrayList<>();
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : processes.filter((path) -> path.getFileName().toString().matches("[0-9]+")).toList()) {
				if (hasMarker(process, marker)) {
					try {
						String pid = process.getFileName().toString();
						long id = Long.parseLong(pid);
						found.add(pid + " " + statusField(id, "State:").split(" ")[0] + " " + statusField(id, "PPid:")
								+ " " + statusField(id, "Uid:").split("\t")[0]);
					}
					catch (IOException ex) {
						// gone meanwhile
					}
				}
			}
		}
		return found;
	}

	/**
	 * The processes of the host with the marker that run a program of that name (the file
	 * name of {@code /proc/PID/exe}; any where the link cannot be read) and may still run
	 * code of their own: neither zombies nor dying, as "pid state ppid uid". The
	 * sandbox's own processes (the launcher) are left out. Dying: exiting (PF_EXITING,
	 * 0x4, in the flags, field 9 of {@code /proc/PID/stat}) or with SIGKILL pending
	 * ({@code SigPnd} or {@code ShdPnd}); such a process does not return to user space
	 * (signal(7): SIGKILL cannot be caught). Each process is read as soon as its marker
	 * is found.
	 */
	public static List<String> notDying(String marker, String program) throws IOException {
		List<String> found = new ArrayList<>();
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : processes.filter((path) -> path.getFileName().toString().matches("[0-9]+")).toList()) {
				if (hasMarker(process, marker)) {
					try {
						long pid = Long.parseLong(process.getFileName().toString());
						String stat = Files.readString(process.resolve("stat"));
						String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
						long flags = Long.parseLong(fields[6]);
						long pending = Long.parseUnsignedLong(statusField(pid, "SigPnd:"), 16)
								| Long.parseUnsignedLong(statusField(pid, "ShdPnd:"), 16);
						boolean killed = (pending & (1L << 8)) != 0;
						if (!fields[0].equals("Z") && (flags & 0x4) == 0 && !killed && runs(process, program)) {
							found.add(pid + " " + fields[0] + " " + fields[1] + " "
									+ statusField(pid, "Uid:").split("\t")[0]);
						}
					}
					catch (IOException | RuntimeException ex) {
						// gone meanwhile
					}
				}
			}
		}
		return found;
	}

	private static boolean runs(Path process, String program) {
		try {
			return Files.readSymbolicLink(process.resolve("exe")).getFileName().toString().equals(program);
		}
		catch (IOException | RuntimeException ex) {
			return true;
		}
	}

	private static boolean hasMarker(Path process, String marker) {
		try (Stream<Path> tasks = Files.list(process.resolve("task"))) {
			for (Path task : tasks.toList()) {
				byte[] commandLine = Files.readAllBytes(task.resolve("cmdline"));
				if (new String(commandLine, StandardCharsets.UTF_8).replace('\0', ' ').contains(marker)) {
					return true;
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// gone meanwhile
		}
		return false;
	}

	/** SIGSTOP first, so that no process of a chain reacts to another's death. */
	public static void stopAndKill(String marker) throws IOException, InterruptedException {
		for (int round = 0; round < 20; round++) {
			List<String> pids = leftovers(marker).stream().map((line) -> line.split(" ")[0]).toList();
			if (pids.isEmpty()) {
				return;
			}
			for (String signal : List.of("-STOP", "-KILL")) {
				List<String> command = new ArrayList<>(List.of("kill", signal));
				command.addAll(pids);
				new ProcessBuilder(command).redirectErrorStream(true).start().waitFor(30, TimeUnit.SECONDS);
			}
			Thread.sleep(100);
		}
	}

	/** A field of {@code /proc/PID/status}, without its name. */
	static String statusField(long pid, String field) throws IOException {
		return Files.readAllLines(Path.of("/proc/" + pid + "/status"))
			.stream()
			.filter((line) -> line.startsWith(field))
			.map((line) -> line.substring(field.length()).trim())
			.findFirst()
			.orElse("");
	}

}
