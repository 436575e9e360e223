#!/usr/bin/env bash
# The man pages against the programs (ctest package.man_pages):
#  - every flag in `atraced --help`, `atracectl --help` and `atracectl CMD --help` for every
#    command the global help lists appears in the page as **--flag** (docs/man/*.md);
#  - every command appears as a section "## CMD" of atracectl(1);
#  - every **--flag** an OPTIONS-style list in the page defines exists in some --help
#    (no documented flag the program lacks);
#  - each flag is an entry of the right place: atraced's of OPTIONS, each atracectl
#    command's of its "## CMD" section (or a shared "## Options of" naming it), the global
#    ones of GLOBAL OPTIONS; each SYNOPSIS holds command forms only;
#  - the rendered pages have no "()" where Markdown swallowed a <placeholder>;
#  - every key of conf/atraced.conf (its "key = value" lines, set or commented out) is a "**key** =" entry of
#    atraced.conf(5), and every such entry is a key of the file;
#  - with pandoc and man available: each page renders without groff warnings and has a
#    NAME line lexgrog can parse.
# Usage: check_man.sh SOURCE_DIR ATRACED [ATRACECTL]
set -euo pipefail
srcdir=$1 atraced=$2 atracectl=${3:-}
man_dir=$srcdir/docs/man
bad=0
problem() { echo "FAIL: $*" >&2; bad=1; }

# section PAGE HEADING: the lines under "HEADING" (e.g. "# OPTIONS", "## emit") up to the
# next heading of the same or a higher level.
section() {
  awk -v h="$2" '
    BEGIN { level = index(h, " ") - 1 }
    $0 == h { on = 1; next }
    on && /^#+ / { if (index($0, " ") - 1 <= level) exit }
    on { print }' "$1"
}
flags_of() { grep -oE '(^|[[:space:]\[])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
defined_in_page() { { grep -oE '^\*\*(-[a-z](\*\*)?, (\*\*)?)?--[a-z][a-z0-9-]*\*\*' "$1" || true; } | { grep -oE -- '--[a-z][a-z0-9-]*' || true; } | sort -u; }
defined_in_text() { defined_in_page /dev/stdin; }
# check_defined WHERE FLAGS DEFINED: each of FLAGS (one per line) is among DEFINED.
check_defined() {
  local where=$1 flags=$2 defined=$3
  while read -r flag; do
    [[ -n $flag ]] || continue
    grep -qxF -- "$flag" <<<"$defined" || problem "$where does not define $flag (as a **$flag** entry)"
  done <<<"$flags"
}
# check_synopsis PAGE: the SYNOPSIS holds command forms only (lines that start with ** or [),
# never a definition list that slipped in (atraced(8) once had --max-use's text there).
check_synopsis() {
  local text
  text=$(section "$1" "# SYNOPSIS")
  [[ -n $(tr -d '[:space:]' <<<"$text") ]] || problem "$(basename "$1"): empty SYNOPSIS"
  while IFS= read -r line; do
    [[ -z ${line// } ]] && continue
    [[ $line == '**'* || $line == '['* ]] || problem "$(basename "$1"): SYNOPSIS line is not a command form: $line"
  done <<<"$text"
}
check_flags() {  # check_flags PAGE HELP_TEXT...
  local page=$1; shift
  local help
  help=$(printf '%s\n' "$@")
  while read -r flag; do
    [[ -n $flag ]] || continue
    grep -qF -- "**$flag**" "$page" || problem "$(basename "$page"): $flag is in --help but not in the page"
  done < <(flags_of <<<"$help")
}

# atraced(8): every flag of --help is an entry of OPTIONS, not merely mentioned somewhere.
atraced_help=$("$atraced" --help)
check_flags "$man_dir/atraced.8.md" "$atraced_help"
check_defined "atraced.8.md OPTIONS" "$(flags_of <<<"$atraced_help")" \
  "$(section "$man_dir/atraced.8.md" "# OPTIONS" | defined_in_text)"
check_synopsis "$man_dir/atraced.8.md"
while read -r flag; do
  grep -qxF -- "$flag" < <(flags_of <<<"$atraced_help") || problem "atraced.8.md documents $flag, which atraced --help lacks"
done < <(defined_in_page "$man_dir/atraced.8.md")
(( $(flags_of <<<"$atraced_help" | wc -l) >= 10 )) || problem "atraced --help lists too few flags; the parser is broken"

# atracectl(1)
if [[ -n $atracectl ]]; then
  global_help=$("$atracectl" --help)
  commands=$(awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1; next } on { exit }' <<<"$global_help")
  (( $(wc -w <<<"$commands") >= 5 )) || problem "atracectl --help lists too few commands: $commands"
  all_help=$global_help
  for cmd in $commands; do
    cmd_help=$("$atracectl" "$cmd" --help)
    all_help+=$'\n'$cmd_help
    grep -qx "## $cmd" "$man_dir/atracectl.1.md" || problem "atracectl.1.md has no section for the command $cmd"
    # Its own flags are entries of its section, or of a shared "## Options of ..." that names it.
    shared=$(grep -E "^## Options of .*\b$cmd\b" "$man_dir/atracectl.1.md" || true)
    defined=$(section "$man_dir/atracectl.1.md" "## $cmd" | defined_in_text)
    [[ -z $shared ]] || defined+=$'\n'$(section "$man_dir/atracectl.1.md" "$shared" | defined_in_text)
    own=$(comm -23 <(flags_of <<<"$cmd_help" || true) <(flags_of <<<"$global_help" || true))  # the global ones are GLOBAL OPTIONS
    check_defined "atracectl.1.md, command $cmd," "$own" "$defined"
  done
  check_defined "atracectl.1.md GLOBAL OPTIONS" "$(flags_of <<<"$global_help" | grep -vx -- '--help')" \
    "$(section "$man_dir/atracectl.1.md" "# GLOBAL OPTIONS" | defined_in_text)"
  check_synopsis "$man_dir/atracectl.1.md"
  check_flags "$man_dir/atracectl.1.md" "$all_help"
  while read -r flag; do
    grep -qxF -- "$flag" < <(flags_of <<<"$all_help") || problem "atracectl.1.md documents $flag, which no atracectl --help lists"
  done < <(defined_in_page "$man_dir/atracectl.1.md")
fi

# atraced.conf(5)
conf_keys=$(sed -nE 's/^(# ?)?([a-z][a-z0-9-]*) = .*/\2/p' "$srcdir/conf/atraced.conf" | sort -u)  # set or commented out
(( $(wc -w <<<"$conf_keys") >= 10 )) || problem "conf/atraced.conf: too few keys found: $conf_keys"
page_keys=$(sed -nE 's/^\*\*([a-z][a-z0-9-]*)\*\* = .*/\1/p' "$man_dir/atraced.conf.5.md" | sort -u)
for key in $conf_keys; do
  grep -qx "$key" <<<"$page_keys" || problem "atraced.conf.5.md does not document the key $key of conf/atraced.conf"
done
for key in $page_keys; do
  grep -qx "$key" <<<"$conf_keys" || problem "atraced.conf.5.md documents $key, which conf/atraced.conf lacks"
  grep -qF -- "**--$key**" "$man_dir/atraced.8.md" || problem "the key $key has no flag --$key in atraced.8.md"
done

# Rendering.
if command -v pandoc >/dev/null && command -v man >/dev/null; then
  tmp=$(mktemp -d /tmp/atraced-man.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  for md in "$man_dir"/*.md; do
    page=$tmp/$(basename "${md%.md}")
    pandoc --standalone --from markdown-smart --to man "$md" -o "$page"
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null || true)
    [[ -z $warnings ]] || problem "$(basename "$md"): groff: $warnings"
    # What Markdown swallowed: "<N>" read as an HTML tag left "priority prefixes ()".
    text=$(MANWIDTH=200 man -l -Tutf8 "$page" 2>/dev/null | col -b || true)
    ! grep -n '()' <<<"$text" >/dev/null || problem "$(basename "$md"): empty parentheses in the rendered page: $(grep -n '()' <<<"$text" | head -3)"
    if command -v lexgrog >/dev/null; then
      lexgrog "$page" >/dev/null || problem "$(basename "$md"): no NAME line lexgrog can parse"
    fi
  done
else
  echo "note: pandoc or man missing, rendering not checked"
fi

(( bad == 0 )) || exit 1
echo "OK: man pages match --help and conf/atraced.conf"
