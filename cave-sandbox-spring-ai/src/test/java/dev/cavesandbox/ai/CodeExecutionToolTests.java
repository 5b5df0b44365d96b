package dev.cavesandbox.ai;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.LoopbackTcpListener;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.tool.ToolCallback;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The code-execution tool running snippets in this host's real sandbox.
 */
@EnabledOnOs(OS.LINUX)
@Tag("sandbox")
class CodeExecutionToolTests {

	private static final Map<String, List<String>> LANGUAGES = languages();

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final IsolatedExecutor executor = HostSandbox.isolatedExecutor();

	private final CodeExecutionTool tool = new CodeExecutionTool(this.executor, LANGUAGES, Duration.ofSeconds(20),
			8192);

	private static Map<String, List<String>> languages() {
		Map<String, List<String>> languages = new LinkedHashMap<>();
		languages.put("python", List.of("python3"));
		languages.put("shell", List.of("sh"));
		return languages;
	}

	@Test
	void returnsWhatAPythonSnippetPrintedAndTheIsolation() {
		CodeExecutionResult result = this.tool.run(new CodeSnippet("python", "print(6*7)", null));
		assertThat(result.error()).isNull();
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdout()).isEqualTo("42\n");
		assertThat(result.stderr()).isEmpty();
		assertThat(result.timedOut()).isFalse();
		assertThat(result.isolation()).isEqualTo(this.executor.isolation().toString()).contains("network isolated");
	}

	@Test
	void returnsTheExitCodeStdoutAndStderrOfAShellSnippet() {
		CodeExecutionResult result = this.tool
			.run(new CodeSnippet("shell", "echo $((6 * 7))\necho 'to stderr' >&2\nexit 3\n", null));
		assertThat(result.exitCode()).isEqualTo(3);
		assertThat(result.stdout()).isEqualTo("42\n");
		assertThat(result.stderr()).isEqualTo("to stderr\n");
	}

	@Test
	void readsItsInputFiles() {
		Map<String, String> files = new LinkedHashMap<>();
		files.put("data.csv", "a,b\n1,2\n30,40\n");
		files.put("nested/notes.txt", "hello from a file");
		String code = """
				import csv
				with open("data.csv") as f:
				    rows = list(csv.DictReader(f))
				print(sum(int(r["a"]) + int(r["b"]) for r in rows))
				print(open("nested/notes.txt").read())
				""";
		CodeExecutionResult result = this.tool.run(new CodeSnippet("python", code, files));
		assertThat(result.stderr()).isEmpty();
		assertThat(result.stdout()).isEqualTo("73\nhello from a file\n");
	}

	@Test
	void writesAndReadsFilesInItsWorkingDirectoryWithPythonsLibraries() {
		String code = """
				import hashlib, json, os, sqlite3, subprocess
				with open("out.json", "w") as f:
				    json.dump({"answer": 42}, f)
				db = sqlite3.connect("local.db")
				db.execute("create table t (x integer)")
				db.execute("insert into t values (?)", (json.load(open("out.json"))["answer"],))
				db.commit()
				print(db.execute("select x from t").fetchone()[0])
				print(hashlib.sha256(b"cave").hexdigest()[:8])
				print(subprocess.run(["ls"], capture_output=True, text=True).stdout.split())
				""";
		CodeExecutionResult result = this.tool.run(new CodeSnippet("python", code, null));
		assertThat(result.stderr()).isEmpty();
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdout()).startsWith("42\n").contains("'local.db'", "'out.json'", "'snippet.python'");
	}

	@Test
	void truncatesLongOutputAndSaysSo() {
		CodeExecutionTool small = new CodeExecutionTool(this.executor, LANGUAGES, Duration.ofSeconds(20), 100);
		CodeExecutionResult result = small
			.run(new CodeSnippet("python", "import sys\nprint('x' * 10000)\nsys.stderr.write('e' * 50)", null));
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdoutTruncated()).isTrue();
		assertThat(result.stdout())
			.isEqualTo("x".repeat(100) + "\n" + CodeExecutionResult.TRUNCATED_MARKER + "100 bytes]");
		assertThat(result.stderrTruncated()).isFalse();
		assertThat(result.stderr()).isEqualTo("e".repeat(50));
	}

	@Test
	void reportsATimeout() {
		CodeExecutionTool quick = new CodeExecutionTool(this.executor, LANGUAGES, Duration.ofMillis(500), 8192);
		CodeExecutionResult result = quick
			.run(new CodeSnippet("python", "import time\nprint('started', flush=True)\ntime.sleep(60)", null));
		assertThat(result.timedOut()).isTrue();
		assertThat(result.exitCode()).isNotZero();
		assertThat(result.stdout()).isEqualTo("started\n");
	}

	@Test
	void anUnknownLanguageIsAnErrorForTheModelNamingTheConfiguredLanguages() {
		CodeExecutionResult result = this.tool.run(new CodeSnippet("ruby", "puts 42", null));
		assertThat(result.exitCode()).isNull();
		assertThat(result.isolation()).isNull();
		assertThat(result.error()).isEqualTo("Unknown language 'ruby'; the configured languages are [python, shell]");
	}

	@Test
	void aLanguageWhoseInterpreterIsMissingIsAnErrorForTheModel() {
		CodeExecutionTool tool = withLanguage("ruby", "cave15-no-such-interpreter");
		CodeExecutionResult result = tool.run(new CodeSnippet("ruby", "puts 42", null));
		assertThat(result.exitCode()).isNull();
		assertThat(result.error()).startsWith("The interpreter of language 'ruby' cannot run: ")
			.contains("cave15-no-such-interpreter");
		String json = tool.toolCallback().call("{\"language\":\"ruby\",\"code\":\"puts 42\"}");
		assertThat(JSON.readValue(json, CodeExecutionResult.class).error()).contains("cave15-no-such-interpreter");
	}

	@Test
	void aLanguageWhoseInterpreterIsNotExecutableIsAnErrorForTheModel() {
		CodeExecutionResult result = withLanguage("text", "/etc").run(new CodeSnippet("text", "hello", null));
		assertThat(result.exitCode()).isNull();
		assertThat(result.error()).startsWith("The interpreter of language 'text' cannot run: ")
			.contains("a directory");
	}

	private CodeExecutionTool withLanguage(String language, String command) {
		Map<String, List<String>> languages = new LinkedHashMap<>(LANGUAGES);
		languages.put(language, List.of(command));
		return new CodeExecutionTool(this.executor, languages, Duration.ofSeconds(20), 8192);
	}

	@Test
	void anInputFileOutsideTheWorkingDirectoryIsAnErrorForTheModel() {
		CodeExecutionResult result = this.tool
			.run(new CodeSnippet("shell", "cat ../escape", Map.of("../escape", "content")));
		assertThat(result.exitCode()).isNull();
		assertThat(result.error()).startsWith("Invalid request: ").contains("../escape");
	}

	@Test
	void aSnippetGetsNothingThroughToTheTestsLoopbackListener() throws Exception {
		try (LoopbackTcpListener listener = new LoopbackTcpListener()) {
			String code = """
					import socket
					try:
					    with socket.create_connection(("127.0.0.1", %d), timeout=5) as s:
					        s.sendall(b"from-the-snippet")
					    print("connected")
					except OSError as e:
					    print("failed:", e)
					""".formatted(listener.port());
			CodeExecutionResult result = this.tool.run(new CodeSnippet("python", code, null));
			assertThat(result.stdout()).startsWith("failed:");
			assertThat(listener.messagesUpToControl()).containsExactly(LoopbackTcpListener.control());
		}
	}

	@Test
	void asAToolCallbackTakesTheModelsJsonAndReturnsTheResultAsJson() {
		ToolCallback callback = this.tool.toolCallback();
		String json = callback
			.call("""
					{"language":"python","code":"print(open('data.csv').read().upper(), end='')","files":{"data.csv":"a,b\\n"}}
					""");
		CodeExecutionResult result = JSON.readValue(json, CodeExecutionResult.class);
		assertThat(result.exitCode()).isZero();
		assertThat(result.stdout()).isEqualTo("A,B\n");
		assertThat(result.isolation()).contains("network isolated");
	}

	@Test
	@SuppressWarnings("unchecked")
	void describesItselfToTheModelWithASchemaGeneratedFromTheSnippet() {
		ToolCallback callback = this.tool.toolCallback();
		assertThat(callback.getToolDefinition().name()).isEqualTo("cave_sandbox_run_code");
		assertThat(callback.getToolDefinition().description()).contains("without any network access")
			.endsWith("Languages: python, shell.");
		Map<String, Object> schema = JSON.readValue(callback.getToolDefinition().inputSchema(),
				new TypeReference<Map<String, Object>>() {
				});
		assertThat(schema).containsEntry("type", "object");
		assertThat((Map<String, Object>) schema.get("properties")).containsOnlyKeys("language", "code", "files");
		assertThat((List<Object>) schema.get("required")).containsExactlyInAnyOrder("language", "code");
	}

}
