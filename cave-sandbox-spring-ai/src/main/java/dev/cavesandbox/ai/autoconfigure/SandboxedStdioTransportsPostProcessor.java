package dev.cavesandbox.ai.autoconfigure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.cavesandbox.IsolatedExecutor;
import dev.cavesandbox.ai.SandboxedStdioClientTransport;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonMapper;
import org.jspecify.annotations.Nullable;

import org.springframework.ai.mcp.client.common.autoconfigure.NamedClientMcpTransport;
import org.springframework.ai.mcp.client.common.autoconfigure.properties.McpStdioClientProperties;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Replaces each {@link StdioClientTransport} of the {@value #BEAN_NAME} bean of Spring
 * AI's {@code StdioTransportAutoConfiguration} by a {@link SandboxedStdioClientTransport}
 * of the same connection, before any client uses it: Spring AI's transports start their
 * server with a {@link ProcessBuilder} of their own when a client connects, so none of
 * them is ever connected. Without an {@link IsolatedExecutor} the context fails rather
 * than start a server outside the sandbox.
 * <p>
 * The {@value #BEAN_NAME} bean is made a dependent of each {@link IsolatedExecutor} bean,
 * and the beans of MCP clients (an {@link McpSyncClient}, an {@link McpAsyncClient} or a
 * list of them, as Spring AI's {@code mcpSyncClients}) dependents of {@value #BEAN_NAME}:
 * when the context closes, the clients close their transports, which stop their servers
 * gracefully, before the executor is closed, which would kill them.
 */
final class SandboxedStdioTransportsPostProcessor implements BeanPostProcessor, BeanFactoryAware {

	/** The name of Spring AI's bean of the stdio connections' transports. */
	static final String BEAN_NAME = "stdioTransports";

	private final ObjectProvider<IsolatedExecutor> executor;

	private final ObjectProvider<McpStdioClientProperties> stdioProperties;

	private final ObjectProvider<CaveSandboxAiProperties> properties;

	private final ObjectProvider<SandboxedMcpServers> servers;

	private @Nullable ConfigurableListableBeanFactory beanFactory;

	SandboxedStdioTransportsPostProcessor(ObjectProvider<IsolatedExecutor> executor,
			ObjectProvider<McpStdioClientProperties> stdioProperties,
			ObjectProvider<CaveSandboxAiProperties> properties, ObjectProvider<SandboxedMcpServers> servers) {
		this.executor = executor;
		this.stdioProperties = stdioProperties;
		this.properties = properties;
		this.servers = servers;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		if (beanFactory instanceof ConfigurableListableBeanFactory configurable) {
			this.beanFactory = configurable;
		}
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!BEAN_NAME.equals(beanName) && isMcpClients(bean)) {
			dependsOnTransports(beanName);
		}
		if (!BEAN_NAME.equals(beanName) || !(bean instanceof List<?> transports)) {
			return bean;
		}
		dependOnExecutors();
		Map<String, ServerParameters> connections = this.stdioProperties.getObject().toServerParameters();
		Map<String, CaveSandboxAiProperties.Mcp> sandboxes = this.properties.getObject().mcp();
		checkNames(sandboxes.keySet(), connections.keySet());
		IsolatedExecutor executor = this.executor.getIfAvailable();
		SandboxedMcpServers servers = this.servers.getObject();
		McpJsonMapper jsonMapper = null;
		List<NamedClientMcpTransport> sandboxed = new ArrayList<>();
		for (Object element : transports) {
			NamedClientMcpTransport named = (NamedClientMcpTransport) element;
			if (!(named.transport() instanceof StdioClientTransport)) {
				sandboxed.add(named);
				continue;
			}
			ServerParameters parameters = connections.get(named.name());
			if (executor == null || parameters == null) {
				throw new IllegalStateException("The stdio MCP connection '" + named.name() + "' cannot run in the "
						+ ((executor == null) ? "sandbox: there is no IsolatedExecutor bean"
								: "sandbox: spring.ai.mcp.client.stdio has no parameters of that name")
						+ "; it is not started outside of it");
			}
			if (jsonMapper == null) {
				jsonMapper = SandboxedStdioClientTransport.defaultJsonMapper();
			}
			CaveSandboxAiProperties.Mcp sandbox = sandboxes.getOrDefault(named.name(),
					new CaveSandboxAiProperties.Mcp(List.of(), List.of()));
			SandboxedStdioClientTransport transport = new SandboxedStdioClientTransport(named.name(), executor,
					SandboxedStdioClientTransport.request(parameters, sandbox.allowedHosts(),
							sandbox.readablePaths().stream().map(Path::of).toList()),
					jsonMapper);
			servers.add(transport);
			sandboxed.add(new NamedClientMcpTransport(named.name(), transport));
		}
		return sandboxed;
	}

	private static boolean isMcpClients(Object bean) {
		if (bean instanceof List<?> list) {
			return !list.isEmpty() && list.stream().allMatch(SandboxedStdioTransportsPostProcessor::isMcpClient);
		}
		return isMcpClient(bean);
	}

	private static boolean isMcpClient(@Nullable Object bean) {
		return bean instanceof McpSyncClient || bean instanceof McpAsyncClient;
	}

	/** The clients' bean is destroyed before {@value #BEAN_NAME}, and so the executor. */
	private void dependsOnTransports(String clientsBeanName) {
		if (this.beanFactory != null && this.beanFactory.containsBean(BEAN_NAME)) {
			this.beanFactory.registerDependentBean(BEAN_NAME, clientsBeanName);
		}
	}

	/** {@value #BEAN_NAME} is destroyed before each executor bean. */
	private void dependOnExecutors() {
		if (this.beanFactory != null) {
			for (String executor : this.beanFactory.getBeanNamesForType(IsolatedExecutor.class, true, false)) {
				this.beanFactory.registerDependentBean(executor, BEAN_NAME);
			}
		}
	}

	private static void checkNames(Set<String> configured, Set<String> connections) {
		Set<String> unknown = new TreeSet<>(configured);
		unknown.removeAll(connections);
		if (!unknown.isEmpty()) {
			throw new IllegalStateException("cave.sandbox.ai.mcp names " + unknown
					+ ", which is no stdio MCP connection (spring.ai.mcp.client.stdio.connections: "
					+ new TreeSet<>(connections) + ")");
		}
	}

}
