/**
 * Spring Boot auto-configuration of cave-sandbox's LangChain4j integration: binds the
 * {@code cave.sandbox.langchain4j.*} properties
 * ({@link dev.cavesandbox.langchain4j.autoconfigure.CaveSandboxLangChain4jProperties}),
 * exposes the sandboxed code-execution engine and tool as beans when enabled, and starts
 * the configured stdio MCP servers in the sandbox behind LangChain4j MCP clients and a
 * tool provider. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.langchain4j.autoconfigure;

import org.jspecify.annotations.NullMarked;
