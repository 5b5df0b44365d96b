package dev.cavesandbox.internal.egress;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Locale;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * Netty's HTTP/1.x decoder and encoder for one client request of an
 * {@link EgressConnection}: the decoder parses the head that {@link RequestHead} framed
 * and frames a forwarded request's body; the encoder writes the request upstream.
 * <p>
 * A forwarded body is decoded and re-encoded rather than relayed raw: it is framed (by
 * its {@code Content-Length} or its chunks) by the decoder that framed the head, so
 * nothing the client sends after the end of the request reaches the upstream (no second,
 * unchecked request smuggled behind the first), and a body the decoder cannot frame ends
 * the connection.
 */
final class RequestCodec implements AutoCloseable {

	private static final int MAX_CHUNK_SIZE = 16 * 1024;

	/**
	 * Headers of one connection, never forwarded (RFC 9110 7.6.1, and the proxy's own).
	 */
	private static final List<String> HOP_BY_HOP = List.of("connection", "proxy-connection", "keep-alive",
			"proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade");

	/** Headers that frame the request: kept even when {@code Connection} names them. */
	private static final List<String> FRAMING = List.of("host", "content-length", "transfer-encoding");

	private final EmbeddedChannel decoder = new EmbeddedChannel(
			new HttpRequestDecoder(RequestHead.MAX_SIZE, RequestHead.MAX_SIZE, MAX_CHUNK_SIZE));

	private final EmbeddedChannel encoder = new EmbeddedChannel(new HttpRequestEncoder());

	/**
	 * Decode a request's head. The request holds no buffer: its body comes from the
	 * decoder, through {@link #sendBody}.
	 * @param head the head, ending with its empty line
	 * @return the request
	 * @throws Refusal {@code 400} when the head is not an HTTP/1.x request
	 */
	HttpRequest decodeHead(byte[] head) throws Refusal {
		this.decoder.writeInbound(Unpooled.wrappedBuffer(head));
		Object message = this.decoder.readInbound();
		if (!(message instanceof HttpRequest request) || request.decoderResult().isFailure()) {
			ReferenceCountUtil.release(message);
			throw Refusal.badRequest("not an HTTP/1.x request");
		}
		return request;
	}

	/**
	 * Send a plain-HTTP request's head upstream: in origin-form, without hop-by-hop
	 * headers, with the target's authority as {@code Host} and with
	 * {@code Connection: close}.
	 * @param request the decoded request, changed in place
	 * @param target its target
	 * @param upstream the upstream connection
	 * @throws IOException when writing fails
	 */
	void sendHead(HttpRequest request, RequestTarget target, SocketChannel upstream) throws IOException {
		request.setUri(target.originForm());
		removeHopByHopHeaders(request.headers());
		request.headers().set(HttpHeaderNames.HOST, target.authority());
		request.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
		this.encoder.writeOutbound(request);
		send(upstream);
	}

	/**
	 * Decode more of the body and pass what is framed of it so far to the upstream.
	 * @param bytes what the client sent next
	 * @param upstream the upstream connection
	 * @return whether the request's end was sent
	 * @throws IOException when the body cannot be decoded or writing fails
	 */
	boolean sendBody(ByteBuf bytes, SocketChannel upstream) throws IOException {
		this.decoder.writeInbound(bytes);
		return sendBody(upstream);
	}

	/**
	 * Pass the body content the decoder has framed so far to the upstream.
	 * @param upstream the upstream connection
	 * @return whether the request's end was sent
	 * @throws IOException when the body cannot be decoded or writing fails
	 */
	boolean sendBody(SocketChannel upstream) throws IOException {
		Object message;
		while ((message = this.decoder.readInbound()) != null) {
			if (!(message instanceof HttpContent content) || content.decoderResult().isFailure()) {
				ReferenceCountUtil.release(message);
				throw new IOException("The request's body could not be decoded");
			}
			boolean last = content instanceof LastHttpContent;
			this.encoder.writeOutbound(content);
			send(upstream);
			if (last) {
				return true;
			}
		}
		return false;
	}

	private void send(SocketChannel upstream) throws IOException {
		ByteBuf encoded;
		while ((encoded = this.encoder.readOutbound()) != null) {
			try {
				EgressConnection.writeFully(upstream, encoded.nioBuffer());
			}
			finally {
				encoded.release();
			}
		}
	}

	private static void removeHopByHopHeaders(HttpHeaders headers) {
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

	/** Release what the decoder and the encoder still hold. */
	@Override
	public void close() {
		this.encoder.finishAndReleaseAll();
		this.decoder.finishAndReleaseAll();
	}

}
