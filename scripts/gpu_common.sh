# Shared by the GPU run scripts (gpu_sft, gpu_qat, gpu_recovery); sourced, not run. Each caller
# sets `out` (its output folder) first.

# unpack_input PATH MARKER: a folder is printed as it is; a .tar.xz is unpacked under $out and the
# folder inside it holding MARKER printed (Python's tarfile reads xz without the xz tool).
unpack_input() {
  if [ -d "$1" ]; then echo "$1"; return; fi
  local dest="$out/unpacked-$(basename "$1" .tar.xz)"
  mkdir -p "$dest"
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$dest"
  dirname "$(find "$dest" -name "$2" | head -1)"
}

# wait_runs TAG NAME:PID...: waits for each run, says how it ended; a run that failed (not
# stopped by `timeout`, status 124) has the end of $out/NAME.out shown and makes this return 1.
wait_runs() {
  local tag="$1" failed=0 run status
  shift
  for run in "$@"; do
    status=0
    wait "${run#*:}" || status=$?
    echo "$tag: run ${run%%:*} ended with status $status (124: stopped at the time budget)" >&2
    if [ "$status" -ne 0 ] && [ "$status" -ne 124 ]; then
      tail -5 "$out/${run%%:*}.out" >&2
      failed=1
    fi
  done
  return "$failed"
}
