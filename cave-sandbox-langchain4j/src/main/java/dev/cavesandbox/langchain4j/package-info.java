/**
 * LangChain4j integration of cave-sandbox: a {@code CodeExecutionEngine} that runs a
 * model's code in a fresh sandbox without network
 * ({@link dev.cavesandbox.langchain4j.SandboxedCodeExecutionEngine}), the tool that
 * exposes it to a model ({@link dev.cavesandbox.langchain4j.SandboxedCodeExecutionTool}),
 * and an MCP transport that starts a stdio MCP server in the sandbox
 * ({@link dev.cavesandbox.langchain4j.SandboxedStdioMcpTransport}). Types here are
 * non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.langchain4j;

import org.jspecify.annotations.NullMarked;
