#!/bin/sh
# The first lines of the script that is PID 1 of the PID namespace util-linux unshare
# creates (Pid1Script, for the unshare and namespaces mechanisms): stop on any error, and run
# nothing unless this is the new user namespace of one mapped id (a wrapper that ran the
# script in the host's namespaces must not change anything there).
set -e
read -r _ _ n < /proc/self/uid_map
[ "$n" = 1 ] || { echo 'cave-sandbox: not in a new user namespace' >&2; exit 125; }
