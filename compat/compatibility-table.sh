#!/bin/sh
# Copies the table that the compatibility suite (CompatibilityTests, tag compat) wrote into
# cave-sandbox-core/target/compat/compatibility.md into docs/compatibility.md, between the markers
# "<!-- compat-table:start -->" and "<!-- compat-table:end -->". Run the suite first:
#   ./mvnw -B -pl cave-sandbox-core verify -Dgroups=compat && compat/compatibility-table.sh
set -eu
cd "$(dirname "$0")/.."
table=cave-sandbox-core/target/compat/compatibility.md
page=docs/compatibility.md
if [ ! -f "$table" ]; then
  echo "compat/compatibility-table.sh: $table is missing; run the suite first:" \
    "./mvnw -B -pl cave-sandbox-core verify -Dgroups=compat" >&2
  exit 1
fi
if [ "$(grep -c -e '^<!-- compat-table:start -->$' -e '^<!-- compat-table:end -->$' "$page")" -ne 2 ]; then
  echo "compat/compatibility-table.sh: $page must hold each compat-table marker once, on a line of its own" >&2
  exit 1
fi
awk -v table="$table" '
  $0 == "<!-- compat-table:start -->" { print; print ""; while ((getline line < table) > 0) print line; print ""; skip = 1; next }
  $0 == "<!-- compat-table:end -->" { skip = 0 }
  !skip { print }
' "$page" > "$page.new"
mv "$page.new" "$page"
echo "$page: compatibility table copied from $table"
