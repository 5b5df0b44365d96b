/**
 * Spring AI integration of cave-sandbox: a code-execution tool that runs a model's
 * snippet in a fresh sandbox without network
 * ({@link dev.cavesandbox.ai.CodeExecutionTool}), and an MCP client transport that starts
 * a stdio MCP server in the sandbox
 * ({@link dev.cavesandbox.ai.SandboxedStdioClientTransport}). Types here are non-null
 * unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.ai;

import org.jspecify.annotations.NullMarked;
