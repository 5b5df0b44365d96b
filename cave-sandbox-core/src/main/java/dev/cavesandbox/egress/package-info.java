/**
 * The egress proxy of a sandbox with an allow-list
 * ({@link dev.cavesandbox.egress.EgressProxy}): HTTP CONNECT and plain-HTTP forwarding
 * served on a unix socket, which checks each requested host and port against an
 * {@link dev.cavesandbox.egress.EgressAllowList}, resolves the name itself, refuses
 * private, loopback, link-local and other non-global destinations
 * ({@link dev.cavesandbox.egress.DestinationAddresses}) and connects to the address it
 * checked. Every decision is reported ({@link dev.cavesandbox.egress.EgressDecision}).
 * Types here are non-null unless marked {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.egress;

import org.jspecify.annotations.NullMarked;
