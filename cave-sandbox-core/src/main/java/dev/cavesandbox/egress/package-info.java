/**
 * What a caller says about egress: the allow-list of hosts and ports an execution may
 * reach through the egress proxy ({@link dev.cavesandbox.egress.EgressAllowList}), the
 * policy and resolver, and the decisions reported to an
 * {@link dev.cavesandbox.egress.EgressListener}. Types here are non-null unless marked
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.cavesandbox.egress;

import org.jspecify.annotations.NullMarked;
