package dev.cavesandbox.ai.autoconfigure;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.ai.SandboxedStdioClientTransport;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import io.modelcontextprotocol.client.transport.StdioClientTransport;

import org.springframework.ai.mcp.client.common.autoconfigure.NamedClientMcpTransport;
import org.springframework.ai.mcp.client.common.autoconfigure.properties.McpStdioClientProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} that starts every stdio MCP server of Spring AI's MCP client
 * ({@code spring.ai.mcp.client.stdio.connections.*}) in the sandbox: each
 * {@link StdioClientTransport} of Spring AI's {@code stdioTransports} bean is replaced by
 * a {@link SandboxedStdioClientTransport} that starts the same command through
 * {@link IsolatedExecutor#start}, with the connection's {@code cave.sandbox.ai.mcp.*}
 * settings. Active when Spring AI's MCP client auto-configuration is on the class path;
 * it has no switch: a stdio server never runs outside the sandbox.
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class,
		beforeName = "org.springframework.ai.mcp.client.common.autoconfigure.McpClientAutoConfiguration")
@ConditionalOnClass({ StdioClientTransport.class, NamedClientMcpTransport.class, McpStdioClientProperties.class })
@EnableConfigurationProperties(CaveSandboxAiProperties.class)
public final class CaveSandboxMcpAutoConfiguration {

	@Bean
	static SandboxedStdioTransportsPostProcessor caveSandboxStdioTransportsPostProcessor(
			ObjectProvider<IsolatedExecutor> executor, ObjectProvider<McpStdioClientProperties> stdioProperties,
			ObjectProvider<CaveSandboxAiProperties> properties, ObjectProvider<SandboxedMcpServers> servers) {
		return new SandboxedStdioTransportsPostProcessor(executor, stdioProperties, properties, servers);
	}

	@Bean
	SandboxedMcpServers caveSandboxMcpServers() {
		return new SandboxedMcpServers();
	}

}
