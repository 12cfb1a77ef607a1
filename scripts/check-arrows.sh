#!/usr/bin/env bash
# check-arrows.sh BUILD_DIR - a wrong arrow between modules fails to build.
# Each probe target (CMakeLists.txt, "arrow probes") compiles
# scripts/arrows/probe.c, which includes one header, linked to one module:
# arrow_bad_* link a module that may not see the header and must fail with
# the header not found; arrow_ok_* link the header's own module and must
# build.
set -uo pipefail
build=${1:?usage: check-arrows.sh BUILD_DIR}
fail=0
for t in $(cmake --build "$build" --target help | sed -n 's/^\.\.\. \(arrow_[a-z_0-9]*\).*/\1/p'); do
    out=$(cmake --build "$build" --target "$t" 2>&1)
    rc=$?
    case $t in
    arrow_bad_*)
        if [ $rc -eq 0 ]; then
            echo "FAIL $t: built, but the arrow it probes is not allowed"; fail=1
        elif ! grep -q "No such file or directory" <<<"$out"; then
            echo "FAIL $t: failed for another reason:"; tail -5 <<<"$out"; fail=1
        else
            echo "ok   $t: refused ($(grep -o '[a-z_]*\.h: No such file' <<<"$out" | head -1))"
        fi ;;
    arrow_ok_*)
        if [ $rc -ne 0 ]; then
            echo "FAIL $t: the probe does not build even with the right arrow:"; tail -5 <<<"$out"; fail=1
        else
            echo "ok   $t: built"
        fi ;;
    esac
done
[ $fail -eq 0 ] && echo "arrows: all wrong arrows refused"
exit $fail
