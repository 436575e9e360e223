# Sourced by the bench scripts: `timed_run NAME CMD...` runs CMD with its output in
# $scratch/out and $scratch/err and prints its wall seconds and peak RSS in MiB (GNU time's
# "Maximum resident set size"); on failure, the end of its stderr.
timed_run() {
  local name="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$scratch/time" "$@" >"$scratch/out" 2>"$scratch/err" || {
    echo "$name failed:"
    tail -5 "$scratch/err"
    return 1
  }
  read -r secs kib <"$scratch/time"
  printf '%-44s %8.2f s %8.1f MiB\n' "$name" "$secs" "$(echo "$kib / 1024" | bc -l)"
}
