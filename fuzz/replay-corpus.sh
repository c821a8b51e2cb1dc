#!/bin/sh
# 'make check': every fuzz target (built with standalone_main.cc) on every
# file of its corpus, fuzz/corpus/<target without fuzz_>/: the seeds and the
# inputs that once crashed. A crash, a failed property (abort) or, in the
# sanitizer build, any sanitizer report fails the test.
set -u
corpus=${FUZZ_CORPUS:-$(dirname "$0")/corpus}
targets=${FUZZ_TARGETS:-fuzz_swf fuzz_state fuzz_settings fuzz_ctl fuzz_accounting}
fails=0
for t in $targets; do
  dir=$corpus/${t#fuzz_}
  if ./"$t" "$dir"; then echo "ok   $t: corpus $dir"
  else echo "FAIL $t: corpus $dir (exit $?)"; fails=$((fails + 1)); fi
done
[ "$fails" -eq 0 ] || { echo "$fails fuzz target(s) failed on their corpus"; exit 1; }
echo "every fuzz target passed its corpus"
