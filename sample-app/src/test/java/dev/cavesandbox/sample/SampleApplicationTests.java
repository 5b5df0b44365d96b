package dev.cavesandbox.sample;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code serve}: the demo once, then Actuator over HTTP on loopback with the sandbox
 * health.
 */
@EnabledOnOs(OS.LINUX)
class SampleApplicationTests {

	@Test
	void serveExposesSandboxHealthWithDetails() throws Exception {
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), SampleApplication.class.getName(), "serve", "--server.port=0",
				"--server.address=127.0.0.1");
		Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
		try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream()))) {
			Pattern serving = Pattern.compile("Serving Actuator on http://localhost:(\\d+)/actuator/health");
			String line;
			Matcher matcher = null;
			while ((line = out.readLine()) != null) {
				matcher = serving.matcher(line);
				if (matcher.find()) {
					break;
				}
			}
			assertThat(line).as("the app announced its port").isNotNull();
			HttpResponse<String> health = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + matcher.group(1) + "/actuator/health"))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(health.statusCode()).isEqualTo(200);
			assertThat(health.body()).contains("\"sandbox\"")
				.containsPattern("\"mechanism\":\"(bwrap|unshare)\"")
				.contains("\"isolated\":true")
				.contains("only interface: lo");
		}
		finally {
			process.destroyForcibly();
			process.waitFor();
		}
	}

}
