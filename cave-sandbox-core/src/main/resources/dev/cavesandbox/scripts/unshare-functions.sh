#!/bin/sh
# The functions of the unshare mechanism's set-up script (UnshareMountScript), after
# pid1-start.sh:
# flags MOUNT_POINT sets f to the per-mount options of the topmost mount there (mountinfo,
# proc(5); blanks and backslashes in a mount point are octal escapes such as \040,
# decoded before the comparison).
# remount MOUNT_POINT FLAGS OPTIONS remounts it with the options, repeating its nosuid,
# nodev, noexec and atime flags, which a user namespace inherited locked with the mount
# and a remount must repeat (mount_namespaces(7)).
# bind FD SOURCE TARGET OPTIONS binds a listed path recursively onto a mount point it
# creates where missing (a directory, or an empty file for a file, by what descriptor FD
# is), refuses the mount unless it is the file of descriptor FD (same device and inode:
# a component swapped after the launcher's outer opened it stops the set-up, as bwrap's
# --bind-fd does) and remounts it with the options.
flags() { f=; while read -r _ _ _ _ m o _; do case "$m" in *\\*) m=$(printf '%b' "$m") ;; esac; [ "$m" != "$1" ] || f=$o; done < /proc/self/mountinfo; }
remount() { x=$3; for o in nosuid nodev noexec noatime nodiratime strictatime; do case ",$2," in *,$o,*) x=$x,$o ;; esac; done; mount -n -c -o "remount,bind$x" "$1"; }
bind() { d=/proc/self/fd/$1; if [ ! -e "$3" ]; then if [ -d "$d" ]; then mkdir -p "$3"; else mkdir -p "${3%/*}"; : > "$3"; fi; fi
  mount -n -c --rbind "$2" "$3"
  [ "$(stat -L -c %d:%i "$d")" = "$(stat -c %d:%i "$3")" ] || { echo "cave-sandbox: the listed path $2 is not the one the launcher opened: it changed during set-up" >&2; exit 125; }
  flags "$3"; remount "$3" "$f" "$4"; }
