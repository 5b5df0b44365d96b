package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.internal.egress.RequestTarget.BadRequestException;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import org.jspecify.annotations.Nullable;

/**
 * One client connection of an {@link EgressProxy}: its request is read, checked
 * ({@link DestinationCheck}) and either refused with a response ({@link Refusal}) or
 * connected upstream, then bytes are relayed until both sides are done. A CONNECT is a
 * raw tunnel; a plain-HTTP request is re-encoded by a {@link RequestCodec} and its
 * response relayed raw: the upstream was told {@code Connection: close}, so its end is
 * the response's end.
 */
final class EgressConnection {

	private static final int BUFFER_SIZE = 16 * 1024;

	private static final int CONNECT_TIMEOUT_MILLIS = 10_000;

	private static final long LINGER_MILLIS = 500;

	private static final int LINGER_BYTES = 64 * 1024;

	private final EgressProxy proxy;

	private final SocketChannel client;

	private @Nullable SocketChannel upstream;

	private boolean aborted;

	EgressConnection(EgressProxy proxy, SocketChannel client) {
		this.proxy = proxy;
		this.client = client;
	}

	void run() {
		try {
			serve();
		}
		catch (IOException ex) {
			// The client, the upstream or the proxy closed the connection.
		}
		finally {
			abort();
			this.proxy.ended(this);
		}
	}

	/**
	 * Close the client and the upstream connection, ending the threads that serve them.
	 */
	synchronized void abort() {
		this.aborted = true;
		EgressProxy.closeQuietly(this.client);
		EgressProxy.closeQuietly(this.upstream);
	}

	/** Answer 503 to a client beyond the proxy's limit, and close it. */
	void refuseBusy() {
		try {
			respond(503, "Service Unavailable", "cave-sandbox egress: too many open connections ("
					+ EgressProxy.MAX_CONNECTIONS + ") through this proxy");
		}
		catch (IOException ex) {
			// The client is gone.
		}
		abort();
	}

	/** Read the head, decode it, check the target, connect, then tunnel or forward. */
	private void serve() throws IOException {
		try (RequestCodec codec = new RequestCodec()) {
			RequestHead head = readHead();
			if (head == null) {
				return;
			}
			HttpRequest request = codec.decodeHead(head.head());
			boolean connect = HttpMethod.CONNECT.equals(request.method());
			RequestTarget target = target(request, connect);
			connect(target, DestinationCheck.addresses(target, this.proxy.policy()));
			if (connect) {
				tunnel(head.rest());
			}
			else {
				forward(target, request, codec, head.rest());
			}
		}
		catch (Refusal refusal) {
			refuse(refusal);
		}
	}

	/**
	 * Read the request's head.
	 * @return the head, or {@code null} when the client sent none (a head the client
	 * ended within is recorded as a bad request, without a response)
	 * @throws Refusal {@code 431} when the head is too large
	 */
	private @Nullable RequestHead readHead() throws IOException, Refusal {
		try {
			return RequestHead.read(this.client);
		}
		catch (RequestHead.TooLargeException ex) {
			throw new Refusal(431, "Request Header Fields Too Large", EgressDecision.BAD_REQUEST, null,
					"the request head is larger than " + RequestHead.MAX_SIZE + " bytes");
		}
		catch (RequestHead.IncompleteException ex) {
			this.proxy.decided(new EgressDecision("", 0, false, EgressDecision.BAD_REQUEST, null), ex.getMessage());
			return null;
		}
	}

	private static RequestTarget target(HttpRequest request, boolean connect) throws Refusal {
		try {
			return connect ? RequestTarget.ofConnect(request.uri()) : RequestTarget.ofAbsoluteForm(request.uri());
		}
		catch (BadRequestException ex) {
			throw Refusal.badRequest(ex.getMessage());
		}
	}

	/**
	 * Connect to the first of the checked addresses that accepts, in order.
	 * @throws Refusal {@code 502} when none does
	 */
	private void connect(RequestTarget target, List<InetAddress> addresses) throws IOException, Refusal {
		List<String> failures = new ArrayList<>();
		for (InetAddress address : addresses) {
			SocketChannel channel = SocketChannel.open();
			try {
				upstream(channel);
				this.proxy.connector()
					.connect(channel, new InetSocketAddress(address, target.port()), CONNECT_TIMEOUT_MILLIS);
				this.proxy.decided(new EgressDecision(target.host(), target.port(), true, EgressDecision.ALLOWED,
						address.getHostAddress()), "connected to " + address.getHostAddress());
				return;
			}
			catch (IOException ex) {
				EgressProxy.closeQuietly(channel);
				if (this.proxy.isClosed()) {
					throw new ClosedChannelException();
				}
				failures.add(address.getHostAddress() + " (" + ex.getMessage() + ")");
			}
		}
		throw Refusal.badGateway(EgressDecision.CONNECT_FAILED, target,
				"could not connect to " + target.display() + " at " + String.join(", ", failures));
	}

	private synchronized void upstream(SocketChannel channel) throws IOException {
		if (this.aborted) {
			channel.close();
			throw new ClosedChannelException();
		}
		this.upstream = channel;
	}

	private synchronized SocketChannel upstream() {
		SocketChannel channel = this.upstream;
		if (channel == null) {
			throw new IllegalStateException("Not connected");
		}
		return channel;
	}

	/** CONNECT: confirm, pass on what the client sent after the head, relay both ways. */
	private void tunnel(byte[] rest) throws IOException {
		SocketChannel upstream = upstream();
		writeFully(this.client,
				ByteBuffer.wrap("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
		writeFully(upstream, ByteBuffer.wrap(rest));
		Thread toUpstream = this.proxy.startThread(() -> relay(this.client, upstream));
		if (toUpstream == null) {
			return;
		}
		relay(upstream, this.client);
		join(toUpstream);
	}

	/**
	 * Plain HTTP: the head rewritten and the body re-encoded by the codec, the response
	 * relayed raw.
	 */
	private void forward(RequestTarget target, HttpRequest request, RequestCodec codec, byte[] rest)
			throws IOException {
		SocketChannel upstream = upstream();
		codec.sendHead(request, target, upstream);
		Thread response = this.proxy.startThread(() -> {
			relay(upstream, this.client);
			abort();
		});
		if (response == null) {
			return;
		}
		boolean last = codec.sendBody(upstream);
		if (!last && rest.length > 0) {
			last = codec.sendBody(Unpooled.wrappedBuffer(rest), upstream);
		}
		ByteBuffer buffer = ByteBuffer.allocate(BUFFER_SIZE);
		while (!last) {
			buffer.clear();
			if (this.client.read(buffer) < 0) {
				// The client ended within the body: the upstream must not take
				// it as whole.
				abort();
				break;
			}
			last = codec.sendBody(Unpooled.copiedBuffer(buffer.flip()), upstream);
		}
		join(response);
	}

	/**
	 * Copy until the end of {@code from}, then end {@code to}'s output; on an error, end
	 * the whole connection.
	 */
	private void relay(SocketChannel from, SocketChannel to) {
		ByteBuffer buffer = ByteBuffer.allocate(BUFFER_SIZE);
		try {
			while (from.read(buffer.clear()) >= 0) {
				writeFully(to, buffer.flip());
			}
			to.shutdownOutput();
		}
		catch (IOException ex) {
			abort();
		}
	}

	/** Record a refusal, answer it with one line naming it, and close. */
	private void refuse(Refusal refusal) throws IOException {
		this.proxy.decided(refusal.decision(), refusal.why());
		respond(refusal.status(), refusal.statusText(), "cave-sandbox egress: " + refusal.why());
		this.client.shutdownOutput();
		lingerBriefly();
	}

	private void respond(int status, String statusText, String line) throws IOException {
		byte[] body = (line + "\n").getBytes(StandardCharsets.UTF_8);
		String head = "HTTP/1.1 " + status + " " + statusText + "\r\n" + "Content-Type: text/plain; charset=utf-8\r\n"
				+ "Content-Length: " + body.length + "\r\n" + "Connection: close\r\n\r\n";
		ByteBuffer response = ByteBuffer.allocate(head.length() + body.length);
		response.put(head.getBytes(StandardCharsets.US_ASCII)).put(body).flip();
		writeFully(this.client, response);
	}

	/**
	 * Read what the client still sends, for a moment, before the connection is closed: a
	 * close with unread bytes can reset the connection and lose the response the client
	 * has not read yet (a refused request's body).
	 */
	private void lingerBriefly() {
		try (Selector selector = Selector.open()) {
			this.client.configureBlocking(false);
			this.client.register(selector, SelectionKey.OP_READ);
			ByteBuffer buffer = ByteBuffer.allocate(BUFFER_SIZE);
			long deadline = System.nanoTime() + LINGER_MILLIS * 1_000_000;
			int drained = 0;
			while (drained < LINGER_BYTES) {
				long left = (deadline - System.nanoTime()) / 1_000_000;
				if (left <= 0 || selector.select(left) == 0 && System.nanoTime() >= deadline) {
					return;
				}
				selector.selectedKeys().clear();
				int read = this.client.read(buffer.clear());
				if (read < 0) {
					return;
				}
				drained += read;
			}
		}
		catch (IOException ex) {
			// The client is gone: nothing to wait for.
		}
	}

	static void writeFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
		while (buffer.hasRemaining()) {
			channel.write(buffer);
		}
	}

	private static void join(Thread thread) {
		try {
			thread.join();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
