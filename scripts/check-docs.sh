#!/usr/bin/env bash
# check-docs.sh - re-runs the commands shown in the user documentation and
# checks that the outputs printed there are still exact.
#
# Usage: scripts/check-docs.sh [--update] CUEUE_BINARY [FILE.md...]
#
#   CUEUE_BINARY  the built binary (for example build/cueue); the word
#                 `cueue` in a documented command runs it.
#   FILE.md       the files to check (default: README.md and docs/*.md).
#   --update      rewrite the outputs of exact blocks that differ with what
#                 the binary prints now (excerpts are only reported).
#
# Exit codes: 0 every checked block matches, 1 some block differs, 2 bad
# usage or a malformed marker in a document. A command that pipes into jq
# is skipped, with a SKIPPED line, when jq is not installed.
#
# Which blocks are checked (the convention the documents follow):
#
# 1. Transcripts. A fenced block with the info string `console` whose first
#    line starts with `$ ` holds commands and their outputs. Each `$ ` line
#    is a command (a line ending in `\` continues on the next line); the
#    lines up to the next `$ ` line are its output.
#
#        ```console
#        $ cueue simulate sim/scenarios/001-basic-fit.yaml
#        ClusterQueue cq (no cohort)  1 admitted, 0 pending
#        ...
#        ```
#
# 2. Marked blocks. An HTML comment on its own line, followed (blank lines
#    allowed in between) by a fenced block of any kind:
#
#        <!-- check: COMMAND -->     the block is the whole output of COMMAND
#        <!-- excerpt: COMMAND -->   the block's lines appear, consecutively,
#                                    somewhere in the output of COMMAND
#        <!-- nocheck: REASON -->    the block is illustrative: not checked
#                                    (use it for a console transcript that
#                                    cannot be re-run)
#
#    COMMAND is any shell command; `cat docs/examples/x.yaml` checks that
#    an inline copy of an example file is the same as the file.
#
# In any checked block, a line that is exactly `...` stands for any number
# of output lines (zero or more). Commands run with bash from the
# repository root, with stdout and stderr merged (2>&1), so warnings appear
# where the program prints them. Exit statuses are not checked. A fenced
# block that is indented (inside a list item) has that indentation removed.
# The prefixes `./build/cueue` and `build/cueue` in a command are read as
# `cueue`, so the README can show the path a fresh build has.
set -u

update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
if [ $# -lt 1 ] || [ ! -x "$1" ] || [ -d "$1" ]; then
    echo "usage: $0 [--update] CUEUE_BINARY [FILE.md...]" >&2
    exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
root=$(cd "$(dirname "$0")/.." && pwd)
files=()
for f in "$@"; do
    case $f in /*) files+=("$f") ;; *) files+=("$PWD/$f") ;; esac
done
cd "$root" || exit 2
[ ${#files[@]} -gt 0 ] || files=(README.md docs/*.md)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/cueue"

checked=0
failed=0
malformed=0
skipped=0
have_jq=0
command -v jq > /dev/null 2>&1 && have_jq=1

# run_cmd COMMAND OUTFILE: runs COMMAND from the repository root with the
# binary first on PATH, stdout and stderr merged into OUTFILE.
run_cmd() {
    local cmd
    cmd=$(printf '%s' "$1" | sed -E 's#(^|[|;&(][[:space:]]*)(\./)?build/cueue([[:space:]]|$)#\1cueue\3#g')
    (cd "$root" && PATH="$tmp/bin:$PATH" timeout 120 bash -c "$cmd") > "$2" 2>&1 < /dev/null
}

# match EXPECTED_FILE ACTUAL_FILE: 0 if ACTUAL matches EXPECTED, where a
# line `...` in EXPECTED matches any run of lines. On a mismatch, sets
# mm_chunk_line (0-based line in EXPECTED of the chunk that failed) and
# mm_window (0-based line in ACTUAL where it was looked for).
match() {
    local -a exp act
    mapfile -t exp < "$1"
    mapfile -t act < "$2"
    local ne=${#exp[@]} na=${#act[@]}
    mm_chunk_line=0
    mm_window=0
    local i has_wild=0
    for ((i = 0; i < ne; i++)); do
        [ "${exp[i]}" = "..." ] && { has_wild=1; break; }
    done
    if [ $has_wild -eq 0 ]; then
        [ "$ne" -eq "$na" ] || return 1
        for ((i = 0; i < ne; i++)); do
            [ "${exp[i]}" = "${act[i]}" ] || return 1
        done
        return 0
    fi
    # chunks: [start, end) ranges of EXPECTED between `...` lines
    local -a cs ce
    local s=0
    for ((i = 0; i <= ne; i++)); do
        if [ $i -eq "$ne" ] || [ "${exp[i]}" = "..." ]; then
            cs+=("$s"); ce+=("$i"); s=$((i + 1))
        fi
    done
    local nc=${#cs[@]} c pos=0 len at k ok
    for ((c = 0; c < nc; c++)); do
        len=$((ce[c] - cs[c]))
        [ $len -eq 0 ] && continue
        if [ $c -eq 0 ]; then
            at=0                         # first chunk: anchored at the start
        elif [ $c -eq $((nc - 1)) ]; then
            at=$((na - len))             # last chunk: anchored at the end
            [ $at -ge $pos ] || at=-1
        else
            at=-1                        # middle chunk: leftmost occurrence
            for ((k = pos; k + len <= na; k++)); do
                ok=1
                for ((i = 0; i < len; i++)); do
                    [ "${exp[cs[c] + i]}" = "${act[k + i]}" ] || { ok=0; break; }
                done
                [ $ok -eq 1 ] && { at=$k; break; }
            done
        fi
        ok=0
        if [ "$at" -ge 0 ] && [ $((at + len)) -le "$na" ]; then
            ok=1
            for ((i = 0; i < len; i++)); do
                [ "${exp[cs[c] + i]}" = "${act[at + i]}" ] || { ok=0; break; }
            done
        fi
        if [ $ok -eq 0 ]; then
            mm_chunk_line=${cs[c]}
            mm_chunk_len=$len
            # show the chunk against the window of the output most like it:
            # the most equal lines, then the longest common start of its
            # first line
            mm_window=$pos
            [ "$at" -ge 0 ] && mm_window=$at
            local best=-1 eq pre a b lo=$pos hi=$((na - len))
            [ "$at" -ge 0 ] && { lo=$at; hi=$at; }
            for ((k = lo; k <= hi; k++)); do
                eq=0
                for ((i = 0; i < len; i++)); do
                    [ "${exp[cs[c] + i]}" = "${act[k + i]}" ] && eq=$((eq + 1))
                done
                a=${exp[cs[c]]} b=${act[k]} pre=0
                while [ $pre -lt ${#a} ] && [ "${a:pre:1}" = "${b:pre:1}" ]; do pre=$((pre + 1)); done
                if [ $((eq * 100000 + pre)) -gt $best ]; then best=$((eq * 100000 + pre)); mm_window=$k; fi
            done
            return 1
        fi
        pos=$((at + len))
    done
    return 0
}

# check_one FILE LINE WHAT COMMAND EXPECTED_FILE BASE: runs and compares
# one command; prints a report on a mismatch (BASE is the line of FILE that
# holds EXPECTED's first line). Returns 0 on a match, 1 on a mismatch, 2 if
# skipped. Leaves the output in $tmp/actual.
check_one() {
    local file=$1 line=$2 what=$3 cmd=$4 exp=$5 base=$6
    local jq_re='(^|[|;&(][[:space:]]*)jq([[:space:]]|$)'
    if [ $have_jq -eq 0 ] && [[ $cmd =~ $jq_re ]]; then
        echo "SKIPPED $file:$line: jq is not installed: $cmd"
        skipped=$((skipped + 1))
        return 2
    fi
    checked=$((checked + 1))
    run_cmd "$cmd" "$tmp/actual"
    if match "$exp" "$tmp/actual"; then return 0; fi
    failed=$((failed + 1))
    echo "MISMATCH $file:$line: $what: $cmd"
    if grep -qx '\.\.\.' "$exp"; then
        local from=$((mm_chunk_line + 1)) to=$((mm_chunk_line + mm_chunk_len))
        sed -n "${from},${to}p" "$exp" > "$tmp/chunk"
        sed -n "$((mm_window + 1)),$((mm_window + mm_chunk_len))p" "$tmp/actual" > "$tmp/window"
        echo "  ($file:$((base + from - 1))-$((base + to - 1)), against the closest lines of the output)"
        diff -u --label "$file (documented)" --label "output" "$tmp/chunk" "$tmp/window" | sed 's/^/  /'
    else
        diff -u --label "$file (documented)" --label "output" "$exp" "$tmp/actual" | sed 's/^/  /'
    fi
    return 1
}

# Replacements for --update: "FILE START END CONTENT_FILE" (1-based lines of
# the block's content, END < START for an empty block).
: > "$tmp/updates"
nrep=0

# check_block FILE FENCE_LINE INDENT KIND COMMAND CONTENT_FILE
check_block() {
    local file=$1 fl=$2 indent=$3 kind=$4 cmd=$5 content=$6
    local -a lines
    mapfile -t lines < "$content"
    local n=${#lines[@]}
    case $kind in
    check|excerpt)
        if [ "$kind" = excerpt ]; then
            { echo "..."; cat "$content"; echo "..."; } > "$tmp/exp"
        else
            cp "$content" "$tmp/exp"
        fi
        local base=$((fl + 1))
        [ "$kind" = excerpt ] && base=$fl
        check_one "$file" "$fl" "$kind" "$cmd" "$tmp/exp" "$base"
        if [ $? -eq 1 ] && [ $update -eq 1 ]; then
            if [ "$kind" = check ] && ! grep -qx '\.\.\.' "$content"; then
                nrep=$((nrep + 1))
                sed "s/^/$indent/; s/^[[:space:]]*\$//" "$tmp/actual" > "$tmp/rep.$nrep"
                echo "$file $((fl + 1)) $((fl + n)) $tmp/rep.$nrep" >> "$tmp/updates"
            else
                echo "  (not updated: an excerpt; edit it by hand)"
            fi
        fi
        ;;
    console)
        # split into commands and their outputs
        local i=0 c cl out_start j
        : > "$tmp/newblock"
        local block_changed=0
        while [ $i -lt "$n" ]; do
            case ${lines[i]} in
            '$ '*) ;;
            *) echo "MALFORMED $file:$((fl + 1 + i)): console line outside a command: ${lines[i]}"
               malformed=$((malformed + 1)); return ;;
            esac
            cl=$((fl + 1 + i))
            c=${lines[i]#\$ }
            printf '%s\n' "${lines[i]}" >> "$tmp/newblock"
            while [[ ${lines[i]} == *\\ ]] && [ $((i + 1)) -lt "$n" ]; do
                i=$((i + 1))
                c="${c%\\}"$'\n'"${lines[i]}"
                printf '%s\n' "${lines[i]}" >> "$tmp/newblock"
            done
            i=$((i + 1))
            out_start=$i
            while [ $i -lt "$n" ] && [[ ${lines[i]} != '$ '* ]]; do i=$((i + 1)); done
            : > "$tmp/exp"
            for ((j = out_start; j < i; j++)); do printf '%s\n' "${lines[j]}" >> "$tmp/exp"; done
            check_one "$file" "$cl" "command" "$c" "$tmp/exp" "$((fl + 1 + out_start))"
            if [ $? -ne 1 ]; then
                cat "$tmp/exp" >> "$tmp/newblock"
            elif grep -qx '\.\.\.' "$tmp/exp"; then
                cat "$tmp/exp" >> "$tmp/newblock"
                [ $update -eq 1 ] && echo "  (not updated: an excerpt; edit it by hand)"
            else
                cat "$tmp/actual" >> "$tmp/newblock"
                block_changed=1
            fi
        done
        if [ $update -eq 1 ] && [ $block_changed -eq 1 ]; then
            nrep=$((nrep + 1))
            sed "s/^/$indent/; s/^[[:space:]]*\$//" "$tmp/newblock" > "$tmp/rep.$nrep"
            echo "$file $((fl + 1)) $((fl + n)) $tmp/rep.$nrep" >> "$tmp/updates"
        fi
        ;;
    esac
}

marker_re='^[[:space:]]*<!--[[:space:]]*(check|excerpt|nocheck)(:[[:space:]]*(.*[^[:space:]]))?[[:space:]]*-->[[:space:]]*$'

for file in "${files[@]}"; do
    if [ ! -f "$file" ]; then
        echo "MALFORMED $file: no such file"; malformed=$((malformed + 1)); continue
    fi
    lineno=0
    in_fence=0
    fence=""
    indent=""
    info=""
    mk_kind=""
    mk_cmd=""
    mk_line=0
    start=0
    while IFS= read -r l || [ -n "$l" ]; do
        lineno=$((lineno + 1))
        if [ $in_fence -eq 1 ]; then
            if [[ $l =~ ^[[:space:]]*(\`{3,}|~{3,})[[:space:]]*$ ]] && [ "${BASH_REMATCH[1]}" = "$fence" ]; then
                in_fence=0
                kind=""
                if [ -n "$mk_kind" ]; then
                    kind=$mk_kind
                elif [ "$info" = console ] && [[ $(head -n 1 "$tmp/content") == '$ '* ]]; then
                    kind=console
                fi
                case $kind in
                check|excerpt|console) check_block "$file" "$start" "$indent" "$kind" "$mk_cmd" "$tmp/content" ;;
                esac
                mk_kind=""
                continue
            fi
            # remove the fence's indentation
            if [ -n "$indent" ] && [[ $l == "$indent"* ]]; then l=${l#"$indent"};
            elif [[ $l =~ ^[[:space:]]*$ ]]; then l=""; fi
            printf '%s\n' "$l" >> "$tmp/content"
            continue
        fi
        if [[ $l =~ ^([[:space:]]*)(\`{3,}|~{3,})[[:space:]]*([^[:space:]]*) ]]; then
            indent=${BASH_REMATCH[1]}
            fence=${BASH_REMATCH[2]}
            info=${BASH_REMATCH[3]}
            in_fence=1
            start=$lineno
            : > "$tmp/content"
            continue
        fi
        if [[ $l =~ $marker_re ]]; then
            if [ -n "$mk_kind" ]; then
                echo "MALFORMED $file:$mk_line: marker not followed by a fenced block"
                malformed=$((malformed + 1))
            fi
            mk_kind=${BASH_REMATCH[1]}
            mk_cmd=${BASH_REMATCH[3]}
            mk_line=$lineno
            if [ "$mk_kind" != nocheck ] && [ -z "$mk_cmd" ]; then
                echo "MALFORMED $file:$lineno: '$mk_kind' marker without a command"
                malformed=$((malformed + 1)); mk_kind=""
            fi
            continue
        fi
        if [[ $l =~ \<!--[[:space:]]*(check|excerpt|nocheck) ]]; then
            echo "MALFORMED $file:$lineno: a marker must be one line: <!-- check: COMMAND -->"
            malformed=$((malformed + 1))
            continue
        fi
        if [ -n "$mk_kind" ] && [[ ! $l =~ ^[[:space:]]*$ ]]; then
            echo "MALFORMED $file:$mk_line: marker not followed by a fenced block"
            malformed=$((malformed + 1))
            mk_kind=""
        fi
    done < "$file"
    if [ $in_fence -eq 1 ]; then
        echo "MALFORMED $file:$start: fenced block never closed"; malformed=$((malformed + 1))
    fi
    if [ -n "$mk_kind" ]; then
        echo "MALFORMED $file:$mk_line: marker not followed by a fenced block"; malformed=$((malformed + 1))
    fi
done

if [ $update -eq 1 ] && [ -s "$tmp/updates" ]; then
    # apply bottom-up so that earlier line numbers stay valid
    sort -k1,1 -k2,2nr "$tmp/updates" | while read -r f s e rep; do
        { head -n $((s - 1)) "$f"; cat "$rep"; tail -n +$((e + 1)) "$f"; } > "$tmp/new"
        cat "$tmp/new" > "$f"
        echo "updated $f:$((s - 1))"
    done
fi

echo "check-docs: $checked outputs checked, $failed differ, $malformed malformed, $skipped skipped"
[ $malformed -eq 0 ] || exit 2
[ $failed -eq 0 ] || exit 1
exit 0
