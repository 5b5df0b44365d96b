#!/bin/sh
# The kernel's key lists are not namespaced: the unshare mechanism's set-up script
# (UnshareMechanism) masks them as container runtimes do.
# @KEY_LISTS@ stands for the files (Launcher.KEY_LISTS, which bwrap masks too):
# UnshareMechanism puts them in, so the loop runs once per file, not once.
# shellcheck disable=SC2043
for k in @KEY_LISTS@; do if [ -e $k ]; then mount -n --bind /dev/null $k; fi; done
