#!/bin/sh
# For a root caller only, in the unshare mechanism's set-up script (UnshareMechanism): its uid
# 0 is the host's, so global sysctls would be writable through /proc.
mount -n -o bind,ro /proc/sys /proc/sys
if [ -e /proc/sysrq-trigger ]; then mount -n -o bind,ro /proc/sysrq-trigger /proc/sysrq-trigger; fi
