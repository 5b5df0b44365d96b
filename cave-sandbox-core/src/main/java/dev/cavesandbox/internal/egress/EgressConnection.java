package dev.cavesandbox.internal.egress;

import dev.cavesandbox.egress.EgressDecision;
import dev.cavesandbox.egress.EgressPolicy;
import dev.cavesandbox.egress.HostResolver;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

import dev.cavesandbox.internal.egress.RequestTarget.BadRequestException;

/**
 * One client connection of an {@link EgressProxy}: its request is read, checked and
 * either refused with a response or connected upstream, then bytes are relayed until both
 * sides are done.
 * <p>
 * A forwarded request's body is decoded by the same Netty decoder as its head and
 * re-encoded by Netty's encoder, rather than relayed raw: the body is framed (by its
 * {@code Content-Length} or its chunks) by the decoder that framed the head, so nothing
 * the client sends after the end of the request reaches the upstream (no second,
 * unchecked request smuggled behind the first), and a body the decoder cannot frame ends
 * the connection. The response is relayed raw: the upstream was told
 * {@code Connection: close}, so its end is the response's end.
 */
final class EgressConnection {

	private static final int BUFFER_SIZE = 16 * 1024;

	private static final int CONNECT_TIMEOUT_MILLIS = 10_000;

	private static final long LINGER_MILLIS = 500;

	private static final int LINGER_BYTES = 64 * 1024;

	/**
	 * Headers of one connection, never forwarded (RFC 9110 7.6.1, and the proxy's own).
	 */
	private static final List<String> HOP_BY_HOP = List.of("connection", "proxy-connection", "keep-alive",
			"proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade");

	/** Headers that frame the request: kept even when {@code Connection} names them. */
	private static final List<String> FRAMING = List.of("host", "content-length", "transfer-encoding");

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

	private void serve() throws IOException {
		RequestHead head;
		try {
			head = RequestHead.read(this.client);
		}
		catch (RequestHead.TooLargeException ex) {
			refuse(431, "Request Header Fields Too Large", EgressDecision.BAD_REQUEST, null,
					"the request head is larger than " + RequestHead.MAX_SIZE + " bytes");
			return;
		}
		catch (RequestHead.IncompleteException ex) {
			this.proxy.decided(new EgressDecision("", 0, false, EgressDecision.BAD_REQUEST, null), ex.getMessage());
			return;
		}
		if (head == null) {
			return;
		}
		EmbeddedChannel decoder = new EmbeddedChannel(
				new HttpRequestDecoder(RequestHead.MAX_SIZE, RequestHead.MAX_SIZE, BUFFER_SIZE));
		try {
			decoder.writeInbound(Unpooled.wrappedBuffer(head.head()));
			Object message = decoder.readInbound();
			if (!(message instanceof HttpRequest request) || request.decoderResult().isFailure()) {
				ReferenceCountUtil.release(message);
				refuseBadRequest(null, "not an HTTP/1.x request");
				return;
			}
			// The decoder's request holds no buffer: its body comes as HttpContent
			// messages.
			boolean connect = HttpMethod.CONNECT.equals(request.method());
			RequestTarget target;
			try {
				target = connect ? RequestTarget.ofConnect(request.uri()) : RequestTarget.ofAbsoluteForm(request.uri());
			}
			catch (BadRequestException ex) {
				refuseBadRequest(null, ex.getMessage());
				return;
			}
			if (!open(target)) {
				return;
			}
			if (connect) {
				tunnel(head.rest());
			}
			else {
				forward(target, request, decoder, head.rest());
			}
		}
		finally {
			decoder.finishAndReleaseAll();
		}
	}

	/**
	 * Check the target and connect to it, or refuse it with a response.
	 * @return whether the upstream connection is open
	 */
	private boolean open(RequestTarget target) throws IOException {
		EgressPolicy policy = this.proxy.policy();
		if (!policy.allowList().allows(target.host(), target.port())) {
			refuse(403, "Forbidden", EgressDecision.NOT_ALLOWED, target,
					target.display() + " is not in the allowed hosts (allowedHosts)");
			return false;
		}
		List<InetAddress> addresses;
		try {
			addresses = resolve(target, policy.resolver());
		}
		catch (UnknownHostException | RuntimeException ex) {
			refuse(502, "Bad Gateway", EgressDecision.UNRESOLVED, target, target.host() + " does not resolve");
			return false;
		}
		InetAddress refused = policy.allowPrivateDestinations() ? null : DestinationAddresses.firstRefused(addresses);
		if (refused != null) {
			refuse(403, "Forbidden", EgressDecision.PRIVATE_DESTINATION, target,
					target.display() + " resolves to " + refused.getHostAddress() + ", "
							+ DestinationAddresses.refusal(refused)
							+ "; refused unless private destinations are allowed (allowPrivateDestinations)");
			return false;
		}
		List<String> failures = new ArrayList<>();
		for (InetAddress address : addresses) {
			SocketChannel channel = SocketChannel.open();
			try {
				upstream(channel);
				this.proxy.connector()
					.connect(channel, new InetSocketAddress(address, target.port()), CONNECT_TIMEOUT_MILLIS);
				this.proxy.decided(new EgressDecision(target.host(), target.port(), true, EgressDecision.ALLOWED,
						address.getHostAddress()), "connected to " + address.getHostAddress());
				return true;
			}
			catch (IOException ex) {
				EgressProxy.closeQuietly(channel);
				if (this.proxy.isClosed()) {
					throw new ClosedChannelException();
				}
				failures.add(address.getHostAddress() + " (" + ex.getMessage() + ")");
			}
		}
		refuse(502, "Bad Gateway", EgressDecision.CONNECT_FAILED, target,
				"could not connect to " + target.display() + " at " + String.join(", ", failures));
		return false;
	}

	/**
	 * The addresses to check and connect to: an IP literal is parsed, a name resolved
	 * once.
	 */
	private static List<InetAddress> resolve(RequestTarget target, HostResolver resolver) throws UnknownHostException {
		if (target.ipv6()) {
			// A bracketed literal is parsed, never looked up.
			return List.of(InetAddress.getByName("[" + target.host() + "]"));
		}
		byte[] ipv4 = ipv4Literal(target.host());
		if (ipv4 != null) {
			return List.of(Inet4Address.getByAddress(ipv4));
		}
		List<InetAddress> addresses = resolver.resolve(target.host());
		if (addresses == null || addresses.isEmpty()) {
			throw new UnknownHostException(target.host());
		}
		return List.copyOf(addresses);
	}

	private static byte @Nullable [] ipv4Literal(String host) {
		String[] parts = host.split("\\.", -1);
		if (parts.length != 4) {
			return null;
		}
		byte[] bytes = new byte[4];
		for (int i = 0; i < 4; i++) {
			String part = parts[i];
			if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch((c) -> c >= '0' && c <= '9')) {
				return null;
			}
			int value = Integer.parseInt(part);
			if (value > 255) {
				return null;
			}
			bytes[i] = (byte) value;
		}
		return bytes;
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
	 * Plain HTTP: the request in origin-form without hop-by-hop headers and with
	 * {@code Connection: close}, its body re-encoded, the response relayed raw.
	 */
	private void forward(RequestTarget target, HttpRequest request, EmbeddedChannel decoder, byte[] rest)
			throws IOException {
		SocketChannel upstream = upstream();
		request.setUri(target.originForm());
		removeHopByHopHeaders(request.headers());
		request.headers().set(HttpHeaderNames.HOST, target.authority());
		request.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
		EmbeddedChannel encoder = new EmbeddedChannel(new HttpRequestEncoder());
		try {
			encoder.writeOutbound(request);
			send(encoder, upstream);
			Thread response = this.proxy.startThread(() -> {
				relay(upstream, this.client);
				abort();
			});
			if (response == null) {
				return;
			}
			boolean last = sendBody(decoder, encoder, upstream);
			if (!last && rest.length > 0) {
				decoder.writeInbound(Unpooled.wrappedBuffer(rest));
				last = sendBody(decoder, encoder, upstream);
			}
			ByteBuffer buffer = ByteBuffer.allocate(BUFFER_SIZE);
			while (!last) {
				buffer.clear();
				if (this.client.read(buffer) < 0) {
					// The client ended within the body: the upstream must not take it as
					// whole.
					abort();
					break;
				}
				decoder.writeInbound(Unpooled.copiedBuffer(buffer.flip()));
				last = sendBody(decoder, encoder, upstream);
			}
			join(response);
		}
		finally {
			encoder.finishAndReleaseAll();
		}
	}

	/**
	 * Pass the body content the decoder has framed so far to the upstream.
	 * @return whether the request's end was sent
	 */
	private static boolean sendBody(EmbeddedChannel decoder, EmbeddedChannel encoder, SocketChannel upstream)
			throws IOException {
		Object message;
		while ((message = decoder.readInbound()) != null) {
			if (!(message instanceof HttpContent content) || content.decoderResult().isFailure()) {
				ReferenceCountUtil.release(message);
				throw new IOException("The request's body could not be decoded");
			}
			boolean last = content instanceof LastHttpContent;
			encoder.writeOutbound(content);
			send(encoder, upstream);
			if (last) {
				return true;
			}
		}
		return false;
	}

	private static void send(EmbeddedChannel encoder, SocketChannel upstream) throws IOException {
		ByteBuf encoded;
		while ((encoded = encoder.readOutbound()) != null) {
			try {
				writeFully(upstream, encoded.nioBuffer());
			}
			finally {
				encoded.release();
			}
		}
	}

	static void removeHopByHopHeaders(HttpHeaders headers) {
		for (String connection : headers.getAll(HttpHeaderNames.CONNECTION)) {
			for (String token : connection.split(",")) {
				String name = token.trim().toLowerCase(Locale.ROOT);
				if (!name.isEmpty() && !FRAMING.contains(name)) {
					headers.remove(name);
				}
			}
		}
		HOP_BY_HOP.forEach(headers::remove);
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

	private void refuseBadRequest(@Nullable RequestTarget target, String why) throws IOException {
		refuse(400, "Bad Request", EgressDecision.BAD_REQUEST, target, "bad request: " + why);
	}

	/** Record a refusal, answer it with one line naming it, and close. */
	private void refuse(int status, String statusText, String reason, @Nullable RequestTarget target, String why)
			throws IOException {
		String host = (target != null) ? target.host() : "";
		int port = (target != null) ? target.port() : 0;
		this.proxy.decided(new EgressDecision(host, port, false, reason, null), why);
		respond(status, statusText, "cave-sandbox egress: " + why);
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

	private static void writeFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
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
