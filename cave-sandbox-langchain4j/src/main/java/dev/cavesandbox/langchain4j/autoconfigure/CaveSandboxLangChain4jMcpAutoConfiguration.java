package dev.cavesandbox.langchain4j.autoconfigure;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.autoconfigure.CaveSandboxAutoConfiguration;
import dev.cavesandbox.langchain4j.SandboxedStdioMcpTransport;
import dev.langchain4j.mcp.McpToolProvider;
import dev.langchain4j.mcp.client.DefaultMcpClient;
import dev.langchain4j.mcp.client.transport.McpTransport;
import dev.langchain4j.service.tool.ToolProvider;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of LangChain4j MCP clients whose stdio servers run in the sandbox:
 * for each server of {@code cave.sandbox.langchain4j.mcp.servers}, a
 * {@link DefaultMcpClient} over a {@link SandboxedStdioMcpTransport}, all of them in the
 * {@link SandboxedMcpClients} bean, and an {@link McpToolProvider} over them for
 * {@code AiServices.builder(...).toolProvider(...)}. Active when langchain4j-mcp is on
 * the class path and at least one server is configured.
 */
@AutoConfiguration(after = CaveSandboxAutoConfiguration.class)
@ConditionalOnClass({ McpTransport.class, DefaultMcpClient.class, McpToolProvider.class, ToolProvider.class })
@ConditionalOnBean(IsolatedExecutor.class)
@Conditional(OnMcpServersCondition.class)
@EnableConfigurationProperties(CaveSandboxLangChain4jProperties.class)
public final class CaveSandboxLangChain4jMcpAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	SandboxedMcpClients caveSandboxMcpClients(IsolatedExecutor executor, CaveSandboxLangChain4jProperties properties) {
		return new SandboxedMcpClients(executor, properties.mcp());
	}

	@Bean
	@ConditionalOnMissingBean
	McpToolProvider caveSandboxMcpToolProvider(SandboxedMcpClients clients) {
		return McpToolProvider.builder().mcpClients(clients.clients()).build();
	}

}
