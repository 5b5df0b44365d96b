package dev.cavesandbox.ai;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.ai.tool.annotation.ToolParam;

/**
 * The input of the {@link CodeExecutionTool}: what the model asks to run. Its JSON
 * schema, which the model sees, is generated from this record.
 *
 * @param language the language of the snippet, one of the configured ones
 * @param code the source code of the snippet
 * @param files input files written into the snippet's working directory before it runs:
 * relative path to text content, or {@code null} for none
 */
public record CodeSnippet(@ToolParam(
		description = "Language of the snippet, one of the configured languages (for example python or shell)") String language,
		@ToolParam(
				description = "Source code of the snippet; it runs as a file in a fresh working directory, which is also the current directory") String code,
		@ToolParam(required = false,
				description = "Input files written into the working directory before the snippet runs: relative path to text content") @Nullable Map<String, String> files) {

}
