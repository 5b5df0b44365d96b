/* The hand-over (--handover; launcher.h, section "Hand-over"): the command after the set-up. */
#include "launcher.h"

/* The header of a frame: HANDOVER_MAGIC, then the version and the body's length. */
struct handover_header {
	char magic[8];
	uint32_t version;
	uint32_t length;
};

_Static_assert(sizeof(struct handover_header) == 16, "the header is 16 bytes, without padding");
_Static_assert(sizeof HANDOVER_MAGIC - 1 == 8 && sizeof HANDOVER_READY - 1 == 8 && sizeof HANDOVER_STARTED - 1 == 8,
	       "magic and markers are 8 bytes");

/* Read exactly length bytes from fd 0: a pipe's read(2) never returns more than asked,
 * so what follows the frame stays in the pipe for the command. */
static void read_exactly(void *buffer, size_t length, const char *what)
{
	size_t done = 0;
	while (done < length) {
		ssize_t got = read(0, (char *) buffer + done, length - done);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got < 0) {
			fail("cannot read the hand-over's %s: %s", what, strerror(errno));
		}
		if (got == 0) {
			fail("the hand-over ended in its %s (%zu of %zu bytes): no command was handed over", what, done,
			     length);
		}
		done += (size_t) got;
	}
}

/* Write one of the 8-byte markers (HANDOVER_READY, HANDOVER_STARTED) on stdout. */
static void write_marker(const char *marker, const char *what)
{
	if (fflush(stdout) != 0) {
		fail("cannot flush stdout before the %s marker: %s", what, strerror(errno));
	}
	size_t done = 0;
	while (done < 8) {
		ssize_t written = write(1, marker + done, 8 - done);
		if (written < 0 && errno == EINTR) {
			continue;
		}
		if (written <= 0) {
			fail("cannot write the %s marker: %s", what, strerror(errno));
		}
		done += (size_t) written;
	}
}

/* The started marker: the frame was read and checked, the preload handed over, outer has
 * its start byte; nothing but execve(2) is left before the command (launcher.h). */
void write_started(void)
{
	write_marker(HANDOVER_STARTED, "started");
}

/* Point each of count entries of strings at the next NUL-terminated string of the body
 * (from *at to end); a string without its NUL is a failure. */
static void take_strings(char **strings, uint32_t count, char **at, char *end, const char *what)
{
	for (uint32_t i = 0; i < count; i++) {
		char *nul = memchr(*at, '\0', (size_t) (end - *at));
		if (nul == NULL) {
			fail("the hand-over's %s %u has no terminating NUL", what, i);
		}
		strings[i] = *at;
		*at = nul + 1;
	}
	strings[count] = NULL;
}

/*
 * Write the ready marker, then read exactly one frame from fd 0 and return its argv
 * (NULL-terminated; environment: its environment, NULL-terminated), both in one block of
 * the heap that is never freed. Any mismatch fails (exit 125): the command never runs.
 */
char **await_handover(char ***environment)
{
	write_marker(HANDOVER_READY, "ready");
	struct handover_header header;
	read_exactly(&header, sizeof header, "header");
	if (memcmp(header.magic, HANDOVER_MAGIC, sizeof header.magic) != 0) {
		fail("the hand-over does not begin with %s", HANDOVER_MAGIC);
	}
	if (header.version != HANDOVER_VERSION) {
		fail("the hand-over's version is %u, not %d", header.version, HANDOVER_VERSION);
	}
	if (header.length < 2 * sizeof(uint32_t) || header.length > HANDOVER_MAX) {
		fail("the hand-over's length %u is not from %zu to %d bytes", header.length, 2 * sizeof(uint32_t),
		     HANDOVER_MAX);
	}
	uint32_t counts[2];
	read_exactly(counts, sizeof counts, "counts");
	size_t strings_length = header.length - sizeof counts;
	uint64_t total = (uint64_t) counts[0] + counts[1];
	/* Each string takes one byte at least, its NUL. */
	if (counts[0] == 0 || total > strings_length) {
		fail("the hand-over's counts (argc %u, envc %u) do not fit its %zu bytes of strings", counts[0], counts[1],
		     strings_length);
	}
	size_t pointers = ((size_t) total + 2) * sizeof(char *);
	char **block = malloc(pointers + strings_length);
	if (block == NULL) {
		fail("cannot allocate the hand-over's %u bytes: %s", header.length, strerror(errno));
	}
	char *strings = (char *) block + pointers;
	read_exactly(strings, strings_length, "strings");
	char *at = strings;
	char *end = strings + strings_length;
	take_strings(block, counts[0], &at, end, "argument");
	take_strings(block + counts[0] + 1, counts[1], &at, end, "variable");
	if (at != end) {
		fail("the hand-over has %zu bytes after its last string", (size_t) (end - at));
	}
	for (uint32_t i = 0; i < counts[1]; i++) {
		const char *variable = block[counts[0] + 1 + i];
		if (variable[0] == '=' || strchr(variable, '=') == NULL) {
			fail("the hand-over's variable %u is not NAME=VALUE", i);
		}
	}
	*environment = block + counts[0] + 1;
	return block;
}
