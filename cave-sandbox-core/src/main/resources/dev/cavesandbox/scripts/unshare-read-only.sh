#!/bin/sh
# The read-only pass of the unshare mechanism's set-up script (UnshareMountScript), for a
# read-only root or a system view (there after pivot_root: the new root, its system
# directories and their submounts, and /dev). Every writable mount becomes read-only,
# except /proc and /dev/pts, the hidden directories, the working directory and the
# writable paths, and the pseudo file systems below /sys (one mount(8) process each would
# dominate the start-up; /sys itself is remounted). Mount points in mountinfo escape
# blanks and backslashes as octal (\040): decoded before they are compared. /dev is the
# host's devtmpfs here (bwrap's is a tmpfs of its own, made read-only too): a root JVM's
# command could leave files in it, and fill it. Device nodes stay usable on a read-only
# mount.
# @KEPT_PATHS@ stands for the case patterns of the mounts that stay writable, quoted:
# UnshareMountScript puts them in.
while read -r _ _ _ _ m o rest; do
  case "$o" in ro|ro,*) continue ;; esac
  case "$m" in *\\*) m=$(printf '%b' "$m") ;; esac
  case "$m" in /proc|/proc/*|/dev/pts) continue ;; esac
  case "$m" in /sys/*) case " $rest " in *" - sysfs "*|*" - cgroup "*|*" - cgroup2 "*|*" - securityfs "*|*" - debugfs "*|*" - tracefs "*|*" - pstore "*|*" - bpf "*|*" - configfs "*|*" - fusectl "*|*" - efivarfs "*|*" - selinuxfs "*|*" - binfmt_misc "*|*" - hugetlbfs "*|*" - mqueue "*|*" - autofs "*) continue ;; esac ;; esac
  case "$m" in @KEPT_PATHS@) continue ;; esac
  remount "$m" "$o" ,ro
done < /proc/self/mountinfo
