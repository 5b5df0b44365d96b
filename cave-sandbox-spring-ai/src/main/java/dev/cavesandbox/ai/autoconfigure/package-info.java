/**
 * Spring Boot auto-configuration of cave-sandbox's Spring AI integration: binds the
 * {@code cave.sandbox.ai.*} properties
 * ({@link dev.cavesandbox.ai.autoconfigure.CaveSandboxAiProperties}), exposes the
 * code-execution tool as a {@code ToolCallback} bean when it is enabled, starts every
 * stdio MCP server of Spring AI's MCP client in the sandbox, and reports those servers in
 * health. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.ai.autoconfigure;

import org.jspecify.annotations.NullMarked;
