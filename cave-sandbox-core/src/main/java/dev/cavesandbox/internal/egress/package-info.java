/**
 * The egress proxy of an execution with an allow-list: HTTP CONNECT and plain-HTTP
 * forwarding served on a unix socket, checking each host and port against the allow-list,
 * resolving names itself, refusing non-global destinations and connecting to the address
 * it checked. Not API: public only for the other packages of this module and the
 * benchmarks; it may change in any release. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.internal.egress;

import org.jspecify.annotations.NullMarked;
