package dev.cavesandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * The real programs of the compatibility suite ({@link CompatibilityTests}), each a
 * {@code sh} script that makes its own input in its working directory (a sandboxed
 * command reads nothing of the host's {@code /tmp}), runs the program and prints, as its
 * last line of stdout, something only a working program prints (a PDF's {@code %PDF}
 * magic, a computed number, the HTML pandoc made). Its deadline is the execution's
 * timeout: a program that hangs fails as a timeout, it does not hold the build.
 */
enum CompatibilityProgram {

	PYTHON_MULTIPROCESSING("Python multiprocessing (`Pool.map`, `Manager`)", 30, "pool 285 manager 285", """
			cat > pool.py <<'EOF'
			import multiprocessing
			def square(x):
			    return x * x
			if __name__ == '__main__':
			    with multiprocessing.Pool(2) as pool:
			        total = sum(pool.map(square, range(10)))
			    with multiprocessing.Manager() as manager:
			        shared = manager.dict()
			        shared['total'] = total
			        print('pool', total, 'manager', shared['total'])
			EOF
			python3 pool.py
			"""),

	PYTHON_ASYNCIO_SUBPROCESS_FILES("Python asyncio, subprocess, files", 30, "asyncio 31 subprocess 42 files 3", """
			cat > tasks.py <<'EOF'
			import asyncio, pathlib, subprocess
			async def main():
			    child = await asyncio.create_subprocess_exec('sh', '-c', 'echo 21', stdout=asyncio.subprocess.PIPE)
			    out, _ = await child.communicate()
			    gathered = await asyncio.gather(*(asyncio.sleep(0.01, result=i) for i in range(5)))
			    return int(out) + sum(gathered)
			total = asyncio.run(main())
			product = int(subprocess.run(['expr', '6', '*', '7'], capture_output=True, text=True, check=True).stdout)
			pathlib.Path('out').mkdir()
			for i in range(3):
			    pathlib.Path('out', f'{i}.txt').write_text(str(i))
			print('asyncio', total, 'subprocess', product, 'files', len(list(pathlib.Path('out').iterdir())))
			EOF
			python3 tasks.py
			"""),

	NODE("Node (`child_process.execSync`, `worker_threads`)", 30, "execSync 21 worker 42",
			"""
					cat > main.js <<'EOF'
					const { execSync } = require('child_process');
					const { Worker } = require('worker_threads');
					const fs = require('fs');
					fs.writeFileSync('node.txt', execSync('echo 21').toString().trim());
					const worker = new Worker('require("worker_threads").parentPort.postMessage(6 * 7)', { eval: true });
					worker.on('message', (product) => console.log(`execSync ${fs.readFileSync('node.txt', 'utf8')} worker ${product}`));
					EOF
					node main.js
					"""),

	LIBREOFFICE("LibreOffice `soffice --headless --convert-to pdf`", 120, "%PDF", "printf %s " + odt()
			+ " | base64 -d > letter.odt\n" + "export HOME=\"$PWD\"\n"
			+ "soffice --headless \"-env:UserInstallation=file://$PWD/lo-profile\" --convert-to pdf letter.odt\n"
			+ "head -c 4 letter.pdf && echo\n"),

	CHROMIUM("Chromium `--headless --print-to-pdf`", 120, "%PDF", """
			printf '<html><body><h1>cave-sandbox</h1><p>printed to PDF</p></body></html>' > page.html
			chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \\
			  --disable-component-update --disable-sync "--user-data-dir=$PWD/chrome" "--print-to-pdf=$PWD/out.pdf" \\
			  "file://$PWD/page.html"
			head -c 4 out.pdf && echo
			"""),

	PLAYWRIGHT("Playwright (`chromium.launch`, `page.pdf`; Debian's Chromium)", 120, "%PDF",
			printedFromNode("const { chromium } = require('playwright-core');",
					"chromium.launch({ executablePath: '/usr/bin/chromium' })")),

	PUPPETEER("Puppeteer (`launch({ pipe: true })`, `page.pdf`; Debian's Chromium)", 120, "%PDF",
			printedFromNode("const puppeteer = require('puppeteer-core');",
					"puppeteer.launch({ executablePath: '/usr/bin/chromium', pipe: true, args: ['--no-sandbox'] })")),

	PANDOC("pandoc (Markdown to HTML)", 30, "<p>Hello <em>world</em>.</p>", """
			printf '# Title\\n\\nHello *world*.\\n' > in.md
			pandoc in.md -o out.html
			cat out.html
			"""),

	FFMPEG("ffmpeg (1 s of `testsrc` to MP4)", 30, "1.000000", """
			ffmpeg -hide_banner -loglevel error -nostdin -f lavfi -i testsrc=duration=1:size=160x120:rate=10 \\
			  -pix_fmt yuv420p out.mp4
			ffprobe -v error -show_entries format=duration -of csv=p=0 out.mp4
			"""),

	IMAGEMAGICK("ImageMagick `convert`", 30, "PNG 10x10", """
			convert -size 10x10 xc:red out.png
			identify -format '%m %wx%h\\n' out.png
			"""),

	GIT("git (init, commit)", 30, "1", """
			git -c init.defaultBranch=main init -q repository
			cd repository
			echo hello > file.txt
			git add file.txt
			git -c user.name=compat -c user.email=compat@example.invalid commit -q -m first
			git rev-list --count HEAD
			"""),

	GCC("gcc (compile and run)", 30, "hello 42", """
			cat > hello.c <<'EOF'
			#include <stdio.h>
			int main(void) { printf("hello %d\\n", 6 * 7); return 0; }
			EOF
			gcc -o hello hello.c
			./hello
			"""),

	SQLITE("sqlite3", 30, "42",
			"sqlite3 data.db 'create table t(x integer); insert into t values (20), (22); select sum(x) from t;'\n"),

	JAVA("child JVM (`java Hello.java`)", 60, "hello from java 42", """
			cat > Hello.java <<'EOF'
			public class Hello {
			    public static void main(String[] args) {
			        System.out.println("hello from java " + (6 * 7));
			    }
			}
			EOF
			java Hello.java
			""");

	private final String title;

	private final Duration deadline;

	private final String lastLine;

	private final String script;

	CompatibilityProgram(String title, int deadlineSeconds, String lastLine, String script) {
		this.title = title;
		this.deadline = Duration.ofSeconds(deadlineSeconds);
		this.lastLine = lastLine;
		this.script = "set -e\n" + script;
	}

	/** The row's title in the table (Markdown). */
	String title() {
		return this.title;
	}

	/** The execution's timeout. */
	Duration deadline() {
		return this.deadline;
	}

	/** The last line of stdout of a program that worked. */
	String lastLine() {
		return this.lastLine;
	}

	/** The argv that runs the program in its working directory. */
	String[] argv() {
		return new String[] { "sh", "-c", this.script };
	}

	/**
	 * A Node script that starts Debian's Chromium through a library of Node's global
	 * modules ({@code npm root -g}, under {@code /usr}: in the system view) and prints a
	 * page to {@code out.pdf}.
	 * @param require the statement that loads the library
	 * @param launch the expression that starts the browser
	 */
	private static String printedFromNode(String require, String launch) {
		return """
				cat > print.js <<'EOF'
				%s
				(async () => {
				  const browser = await %s;
				  const page = await browser.newPage();
				  await page.setContent('<h1>cave-sandbox</h1><p>printed from Node</p>');
				  await page.pdf({ path: 'out.pdf' });
				  await browser.close();
				})();
				EOF
				NODE_PATH="$(npm root -g)" node print.js
				head -c 4 out.pdf && echo
				""".formatted(require, launch);
	}

	/**
	 * A minimal OpenDocument text (ODF 1.2: {@code mimetype} first and stored, the
	 * manifest, one paragraph), as Base64.
	 */
	private static String odt() {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
			byte[] mimetype = "application/vnd.oasis.opendocument.text".getBytes(StandardCharsets.US_ASCII);
			ZipEntry stored = new ZipEntry("mimetype");
			stored.setMethod(ZipEntry.STORED);
			stored.setSize(mimetype.length);
			CRC32 crc = new CRC32();
			crc.update(mimetype);
			stored.setCrc(crc.getValue());
			zip.putNextEntry(stored);
			zip.write(mimetype);
			zip.closeEntry();
			entry(zip, "META-INF/manifest.xml",
					"""
							<?xml version="1.0" encoding="UTF-8"?>
							<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" \
							manifest:version="1.2">
							 <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
							 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
							</manifest:manifest>
							""");
			entry(zip, "content.xml",
					"""
							<?xml version="1.0" encoding="UTF-8"?>
							<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" \
							xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">
							 <office:body><office:text><text:p>A letter converted in the sandbox.</text:p></office:text></office:body>
							</office:document-content>
							""");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return Base64.getEncoder().encodeToString(bytes.toByteArray());
	}

	private static void entry(ZipOutputStream zip, String name, String text) throws IOException {
		zip.putNextEntry(new ZipEntry(name));
		zip.write(text.getBytes(StandardCharsets.UTF_8));
		zip.closeEntry();
	}

}
