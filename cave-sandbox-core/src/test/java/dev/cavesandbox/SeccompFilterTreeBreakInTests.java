package dev.cavesandbox;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Break-in attempts on the launcher's seccomp filters as libseccomp's binary tree
 * (launcher 20, {@code SCMP_FLTATR_CTL_OPTIMIZE 2}): every BPF program the build exported
 * ({@code target/launcher/cave-sandbox-filters.h}, the header the launcher is compiled
 * with) is run here by an interpreter of classic BPF over {@code struct seccomp_data}
 * (seccomp(2)) and compared with the rules of {@code filter-generator.c} as the kernel
 * reads a call's arguments (an {@code int} argument: its low 32 bits), written out here
 * independently of libseccomp: for every call number from 0 to 1099 and the edges of the
 * x32 range ({@code __X32_SYSCALL_BIT}, numbers above it, -1), for the native
 * architecture, i386 ({@code int 0x80} from 64-bit code), x32's audit value and others,
 * and for each call whose arguments a rule reads, every combination of the constants of
 * the rules and their neighbours with high bits set or clear in those arguments, and
 * random words in the others. A call the rules refuse must get exactly their action
 * (errno, or the kill of a foreign architecture); a call they allow may get a refusal
 * only where the filter compares a whole 64-bit word where the kernel reads 32 bits
 * (refusing more, never less). x86_64 only, where the header's numbers are these.
 */
@EnabledOnOs(value = OS.LINUX, architectures = { "amd64", "x86_64" })
class SeccompFilterTreeBreakInTests {

	private static final Path HEADER = Path.of("target", "launcher", "cave-sandbox-filters.h");

	private static final int ALLOW = 0x7fff0000;

	private static final int KILL_PROCESS = 0x80000000;

	private static final int NOTIFY = 0x7fc00000;

	private static final int EPERM = 1;

	private static final int ENOSYS = 38;

	private static final int EAFNOSUPPORT = 97;

	private static final int X86_64 = 0xc000003e;

	private static final int I386 = 0x40000003;

	private static final int AARCH64 = 0xc00000b7;

	/** The session, supervision and unix refusal filters after the 16 variants. */
	private static final int SESSION = 16;

	private static final int SUPERVISION = 17;

	private static final int UNIX_REFUSAL = 18;

	private static final long[] CONSTANTS = { 0, 1, 2, 3, 5, 9, 10, 16, 17, 40, 45, 46, 63, 64, 65, 0x7f, 0x400, 0x800,
			0xc00, 04000, 02000, 06755, 0x10000000, 0x10000011, 0xfffffff, 0xffffffffL, 0x7fffffff, 0x80000000L,
			1L << 32, (1L << 32) + 1, (1L << 32) + 2, (1L << 32) + 10, (1L << 32) + 40, (1L << 32) + 0x800,
			(1L << 32) + 04000, 1L << 63, -1L, 0xffffffff00000001L, 0xffffffff00000000L, 0x80000001L, 0x80001, 0x80802,
			0x80005 };

	/** The arguments each call's rules read (x86_64 numbers). */
	private static final Map<Integer, int[]> READ_ARGUMENTS = Map.ofEntries(Map.entry(41, new int[] { 0, 1 }),
			Map.entry(53, new int[] { 0, 1 }), Map.entry(302, new int[] { 0 }), Map.entry(141, new int[] { 0, 1 }),
			Map.entry(251, new int[] { 0, 1 }), Map.entry(144, new int[] { 0 }), Map.entry(142, new int[] { 0 }),
			Map.entry(314, new int[] { 0 }), Map.entry(203, new int[] { 0 }), Map.entry(272, new int[] { 0 }),
			Map.entry(56, new int[] { 0 }), Map.entry(90, new int[] { 1 }), Map.entry(91, new int[] { 1 }),
			Map.entry(268, new int[] { 2 }), Map.entry(452, new int[] { 2 }), Map.entry(2, new int[] { 2 }),
			Map.entry(257, new int[] { 3 }), Map.entry(85, new int[] { 1 }), Map.entry(133, new int[] { 1 }),
			Map.entry(259, new int[] { 2 }));

	/** The argument that holds the mode of each call whose set-id bits are refused. */
	private static final Map<Integer, Integer> MODE_ARGUMENT = Map.of(90, 1, 91, 1, 268, 2, 452, 2, 2, 2, 257, 3, 85, 1,
			133, 1, 259, 2);

	private static final Pattern PROGRAM = Pattern.compile("FILTER_(\\d+)\\[\\] = \\{(.*?)\\n\\};", Pattern.DOTALL);

	private static final Pattern INSTRUCTION = Pattern.compile("\\{ 0x([0-9a-f]+), (\\d+), (\\d+), 0x([0-9a-f]+) \\}");

	private static final Map<Integer, int[][]> programs = new TreeMap<>();

	@BeforeAll
	static void readHeader() throws IOException {
		assertThat(HEADER).as("the build's exported filters").isRegularFile();
		Matcher program = PROGRAM.matcher(Files.readString(HEADER));
		while (program.find()) {
			List<int[]> instructions = new ArrayList<>();
			Matcher instruction = INSTRUCTION.matcher(program.group(2));
			while (instruction.find()) {
				instructions.add(new int[] { Integer.parseInt(instruction.group(1), 16),
						Integer.parseInt(instruction.group(2)), Integer.parseInt(instruction.group(3)),
						Integer.parseUnsignedInt(instruction.group(4), 16) });
			}
			programs.put(Integer.parseInt(program.group(1)), instructions.toArray(int[][]::new));
		}
		assertThat(programs.keySet()).as("every variant and the three stacked filters").hasSize(19);
	}

	@Test
	void theInterpreterGivesTheRulesKnownAnswers() {
		assertThat(call(0, 41, X86_64, 2, 1)).as("socket(AF_INET)").isEqualTo(errno(EAFNOSUPPORT));
		assertThat(call(1, 41, X86_64, 2, 1)).as("socket(AF_INET), --allow-inet").isEqualTo(ALLOW);
		assertThat(call(12, 41, X86_64, 40, 1)).as("socket(AF_VSOCK), contain").isEqualTo(errno(EAFNOSUPPORT));
		assertThat(call(12, 112, X86_64)).as("setsid, contain").isEqualTo(errno(EPERM));
		assertThat(call(12, 0, X86_64)).as("read").isEqualTo(ALLOW);
		assertThat(call(12, 41 | 0x40000000, X86_64, 2, 1)).as("x32 socket").isEqualTo(KILL_PROCESS);
		assertThat(call(12, 359, I386, 2, 1)).as("i386 socket").isEqualTo(KILL_PROCESS);
		assertThat(call(SUPERVISION, 42, X86_64)).as("connect, supervised").isEqualTo(NOTIFY);
	}

	/**
	 * Every program against the rules: no call that the rules refuse passes.
	 */
	@Test
	void noCallTheRulesRefuseGetsThroughTheTree() {
		Random random = new Random(20);
		List<String> holes = new ArrayList<>();
		Map<Integer, Integer> overRefusals = new TreeMap<>();
		long cases = 0;
		long refused = 0;
		List<Long> numbers = new ArrayList<>();
		for (long number = 0; number < 1100; number++) {
			numbers.add(number);
		}
		numbers.addAll(List.of(0x3fffffffL, 0x40000000L, 0x40000000L + 41, 0x40000000L + 437, 0x7fffffffL, 0x80000000L,
				0xfffffffeL, 0xffffffffL));
		for (int variant : programs.keySet()) {
			for (long unsigned : numbers) {
				int number = (int) unsigned;
				for (int architecture : new int[] { X86_64, I386, AARCH64, 0x4000003e, 0xc000003f, 0 }) {
					cases++;
					refused += check(variant, number, architecture, new long[6], holes, overRefusals) ? 1 : 0;
				}
				int[] read = READ_ARGUMENTS.getOrDefault(number, new int[] { 0 });
				int combinations = (int) Math.pow(CONSTANTS.length, read.length);
				for (int combination = 0; combination < combinations; combination++) {
					long[] arguments = new long[6];
					for (int i = 0; i < 6; i++) {
						arguments[i] = (random.nextInt(4) == 0) ? random.nextLong() : 0;
					}
					int rest = combination;
					for (int argument : read) {
						arguments[argument] = CONSTANTS[rest % CONSTANTS.length];
						rest /= CONSTANTS.length;
					}
					cases++;
					refused += check(variant, number, X86_64, arguments, holes, overRefusals) ? 1 : 0;
				}
			}
		}
		System.out.println(getClass().getSimpleName() + ": " + cases + " cases, " + refused + " refused by the rules, "
				+ holes.size() + " let through; calls refused beyond the rules (call: cases) " + overRefusals);
		assertThat(refused).as("calls the rules refuse among the cases").isGreaterThan(100_000);
		assertThat(holes).as("calls the rules refuse that the tree lets through or answers otherwise").isEmpty();
		assertThat(overRefusals.keySet())
			.as("refused beyond the rules only where a rule compares a whole word with a value it must not equal")
			.isSubsetOf(41, 141, 142, 144, 203, 251, 302, 314);
	}

	/**
	 * Run one case; record a hole where the rules refuse and the program answers
	 * otherwise, and a refusal the rules do not make. Return whether the rules refuse.
	 */
	private static boolean check(int variant, int number, int architecture, long[] arguments, List<String> holes,
			Map<Integer, Integer> overRefusals) {
		int action = run(variant, number, architecture, arguments);
		Integer expected = expected(variant, number, architecture, arguments);
		if (expected == null) {
			if (action != ALLOW) {
				overRefusals.merge(number, 1, Integer::sum);
			}
			return false;
		}
		if (action != expected && holes.size() < 50) {
			StringBuilder text = new StringBuilder();
			for (long argument : arguments) {
				text.append(' ').append(Long.toHexString(argument));
			}
			holes.add("variant " + variant + " call " + Integer.toHexString(number) + " arch "
					+ Integer.toHexString(architecture) + " args" + text + ": " + Integer.toHexString(action)
					+ " instead of " + Integer.toHexString(expected));
		}
		return true;
	}

	/**
	 * The action the rules of {@code filter-generator.c} demand, as the kernel reads the
	 * arguments; {@code null} where they refuse nothing.
	 */
	private static Integer expected(int variant, int number, int architecture, long[] a) {
		if (architecture != X86_64) {
			return KILL_PROCESS;
		}
		if (Integer.compareUnsigned(number, 0x40000000) >= 0 && number != -1) {
			return KILL_PROCESS;
		}
		if (variant == SESSION) {
			return (number == 112) ? errno(EPERM) : null;
		}
		if (variant == SUPERVISION) {
			return (number == 42 || number == 49) ? NOTIFY : null;
		}
		if (variant == UNIX_REFUSAL) {
			return (number == 41 && low(a[0]) == 1) ? errno(EAFNOSUPPORT) : null;
		}
		boolean inet = (variant & 1) != 0;
		boolean userNamespaces = (variant & 2) != 0;
		boolean noMountNamespace = (variant & 4) != 0;
		boolean noPidNamespace = (variant & 8) != 0;
		boolean unixDatagram = low(a[0]) == 1 && (a[1] & 0xf) != 1 && (a[1] & 0xf) != 5;
		switch (number) {
			case 41 -> {
				long family = low(a[0]);
				boolean refused = (noMountNamespace && unixDatagram) || (!inet && family != 1)
						|| (inet && family < 64 && family != 1 && family != 2 && family != 10);
				return refused ? errno(EAFNOSUPPORT) : null;
			}
			case 53 -> {
				return (noMountNamespace && unixDatagram) ? errno(EAFNOSUPPORT) : null;
			}
			case 425, 426, 427, 437 -> {
				return errno(ENOSYS);
			}
			case 435 -> {
				return userNamespaces ? null : errno(ENOSYS);
			}
			case 101, 310, 311, 438, 250, 248, 249, 321, 298, 323 -> {
				return errno(EPERM);
			}
			case 302, 144, 142, 314 -> {
				return (low(a[0]) != 0) ? errno(EPERM) : null;
			}
			case 141 -> {
				return (low(a[0]) != 0 || low(a[1]) != 0) ? errno(EPERM) : null;
			}
			case 251 -> {
				return (low(a[0]) != 1 || low(a[1]) != 0) ? errno(EPERM) : null;
			}
			case 203 -> {
				return (noPidNamespace && low(a[0]) != 0) ? errno(EPERM) : null;
			}
			case 112, 109 -> {
				return noPidNamespace ? errno(EPERM) : null;
			}
			case 272, 56 -> {
				return (!userNamespaces && (a[0] & 0x10000000L) != 0) ? errno(EPERM) : null;
			}
			default -> {
				Integer mode = MODE_ARGUMENT.get(number);
				return (mode != null && (a[mode] & 06000) != 0) ? errno(EPERM) : null;
			}
		}
	}

	private static long low(long word) {
		return word & 0xffffffffL;
	}

	private static int errno(int error) {
		return 0x00050000 | error;
	}

	private static int call(int variant, int number, int architecture, long... arguments) {
		long[] six = new long[6];
		System.arraycopy(arguments, 0, six, 0, arguments.length);
		return run(variant, number, architecture, six);
	}

	/**
	 * Classic BPF over {@code struct seccomp_data} (nr, arch, instruction_pointer,
	 * args[6]; little-endian), the instructions libseccomp emits.
	 */
	private static int run(int variant, int number, int architecture, long[] arguments) {
		ByteBuffer data = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
		data.putInt(0, number).putInt(4, architecture).putLong(8, 0);
		for (int i = 0; i < 6; i++) {
			data.putLong(16 + 8 * i, arguments[i]);
		}
		int[][] program = programs.get(variant);
		int accumulator = 0;
		int pc = 0;
		for (int steps = 0; steps < 4096; steps++) {
			int[] instruction = program[pc];
			int code = instruction[0];
			int k = instruction[3];
			switch (code) {
				case 0x20 -> {
					accumulator = data.getInt(k);
					pc++;
				}
				case 0x15 -> pc += 1 + ((accumulator == k) ? instruction[1] : instruction[2]);
				case 0x25 ->
					pc += 1 + ((Integer.compareUnsigned(accumulator, k) > 0) ? instruction[1] : instruction[2]);
				case 0x35 ->
					pc += 1 + ((Integer.compareUnsigned(accumulator, k) >= 0) ? instruction[1] : instruction[2]);
				case 0x45 -> pc += 1 + (((accumulator & k) != 0) ? instruction[1] : instruction[2]);
				case 0x05 -> pc += 1 + k;
				case 0x54 -> {
					accumulator &= k;
					pc++;
				}
				case 0x06 -> {
					return k;
				}
				default -> throw new IllegalStateException(
						"instruction 0x" + Integer.toHexString(code) + " at " + pc + " of FILTER_" + variant);
			}
		}
		throw new IllegalStateException("FILTER_" + variant + " did not end");
	}

}
