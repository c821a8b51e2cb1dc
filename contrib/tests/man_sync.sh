#!/bin/sh
# The committed man pages are what help2roff.py makes of the tools' --help
# (run "make -C contrib man" after changing a --help).
. "$(dirname "$0")/lib.sh"
for tool in easypp-sacct2swf easypp-sweep; do
  case $tool in
    easypp-sacct2swf) title=${SACCT2SWF_TITLE:-convert Slurm accounting to the Standard Workload Format} ;;
    easypp-sweep) title=${SWEEP_TITLE:-sweep easypp-sim over a grid of EASY++ knobs and loads} ;;
  esac
  python3 "$CONTRIB_DIR/help2roff.py" "$CONTRIB_DIR/$tool" "$title" >"$T/$tool.1"
  if cmp -s "$T/$tool.1" "$CONTRIB_DIR/$tool.1"; then pass "$tool.1 matches --help"
  else fail "$tool.1 is stale (make -C contrib man): $(diff "$CONTRIB_DIR/$tool.1" "$T/$tool.1" | head -5)"; fi
  if command -v groff >/dev/null 2>&1; then
    if groff -man -Tutf8 -ww -z "$CONTRIB_DIR/$tool.1" 2>"$T/groff.err" && [ ! -s "$T/groff.err" ]; then
      pass "$tool.1 formats without warnings"
    else fail "$tool.1 groff warnings: $(head -3 "$T/groff.err")"; fi
  fi
done
finish
