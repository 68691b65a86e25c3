#!/usr/bin/env bash
# run_c_tests.sh: builds every csrc/tests/test_*.c together with the C core (csrc/src/**/*.c,
# never csrc/python/) three ways -- plain -O2, ThreadSanitizer, AddressSanitizer + UBSan -- into
# csrc/tests/bin/ and runs each binary. The core is compiled once per mode into a static library
# (both cores in parallel) and every test links against it. Run it from the repository root:
#
#     bash csrc/tests/run_c_tests.sh
#
# A test passes when it builds, exits 0 and its output holds no sanitizer report. The last line
# is always "C tests: N passed, M failed" (counted over binaries x modes); the exit status is
# non-zero when M > 0.
set -euo pipefail

if [[ ! -d csrc/src || ! -d csrc/tests ]]; then
    echo "run_c_tests.sh: run me from the repository root (bash csrc/tests/run_c_tests.sh)" >&2
    exit 2
fi

CC=${CC:-gcc}
BIN=csrc/tests/bin
mkdir -p "$BIN"

COMMON=(-std=gnu11 -pthread -Wall -Wextra -Werror -Icsrc/include -Icsrc/src)
MODES=(plain tsan asan)
declare -A FLAGS=(
    [plain]="-O2"
    [tsan]="-O1 -g -fsanitize=thread"
    [asan]="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer"
)

mapfile -t CORE_SOURCES < <(find csrc/src -name '*.c' | sort)
mapfile -t TESTS < <(find csrc/tests -maxdepth 1 -name 'test_*.c' | sort)

# allocator_may_return_null=1: the tests ask for impossible sizes on purpose and expect
# TT_ERR_NOMEM, which the sanitizers' allocators would otherwise turn into a fatal report.
export TSAN_OPTIONS="halt_on_error=1:abort_on_error=0:second_deadlock_stack=1:allocator_may_return_null=1:exitcode=66"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
ASAN_BASE="halt_on_error=1:allocator_may_return_null=1:detect_stack_use_after_return=1"

# LeakSanitizer needs ptrace-like access that some containers forbid; detect that once.
probe_leak_sanitizer() {
    local src="$BIN/lsan_probe.c" exe="$BIN/lsan_probe" out
    printf '#include <stdlib.h>\nint main(void) { return malloc(1) == NULL; }\n' > "$src"
    "$CC" -O0 -fsanitize=address "$src" -o "$exe" 2>/dev/null || { echo 0; return; }
    out=$(ASAN_OPTIONS=detect_leaks=1 "$exe" 2>&1 || true)
    if grep -q "LeakSanitizer has encountered a fatal error" <<< "$out"; then
        echo 0
    else
        echo 1
    fi
}
DETECT_LEAKS=$(probe_leak_sanitizer)
if [[ "$DETECT_LEAKS" == 0 ]]; then
    echo "note: LeakSanitizer cannot run here (ptrace restricted); detect_leaks=0, leaks are" \
         "checked by the tests' own counters only"
fi
export ASAN_OPTIONS="detect_leaks=$DETECT_LEAKS:$ASAN_BASE"

SANITIZER_REPORT='WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|LeakSanitizer: detected|SUMMARY: UndefinedBehaviorSanitizer'

passed=0
failed=0
failures=()
start_all=$SECONDS

# One static library of the core per mode: each source compiled once, two at a time.
build_core() {
    local mode=$1 dir="$BIN/core_$1"
    rm -rf "$dir"
    mkdir -p "$dir"
    # shellcheck disable=SC2086  # FLAGS holds several words on purpose
    printf '%s\n' "${CORE_SOURCES[@]}" | xargs -P 2 -I{} sh -c \
        'src="$1"; shift; obj="$0/$(echo "$src" | tr / _).o"; exec "$@" -c "$src" -o "$obj"' \
        "$dir" {} "$CC" "${COMMON[@]}" ${FLAGS[$mode]} || return 1
    ar rcs "$BIN/libttcore_$mode.a" "$dir"/*.o
}
declare -A CORE_OK=()
for mode in "${MODES[@]}"; do
    rm -f "$BIN/libttcore_$mode.a"
    if build_core "$mode" > "$BIN/core_$mode.log" 2>&1; then
        CORE_OK[$mode]=1
    else
        cat "$BIN/core_$mode.log"
        echo "FAIL  the C core [$mode]: does not build"
    fi
done

for test_src in "${TESTS[@]}"; do
    name=$(basename "$test_src" .c)
    for mode in "${MODES[@]}"; do
        exe="$BIN/${name}_${mode}"
        log="$BIN/${name}_${mode}.log"
        # shellcheck disable=SC2086  # FLAGS holds several words on purpose
        if [[ -z "${CORE_OK[$mode]+x}" ]] || ! "$CC" "${COMMON[@]}" ${FLAGS[$mode]} "$test_src" \
                "$BIN/libttcore_$mode.a" -o "$exe" -lm > "$log" 2>&1; then
            cat "$log"
            echo "FAIL  $name [$mode]: does not build"
            failed=$((failed + 1))
            failures+=("$name [$mode] (build)")
            continue
        fi
        t0=$(date +%s.%N)
        status=0
        "$exe" > "$log" 2>&1 || status=$?
        t1=$(date +%s.%N)
        elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
        report=0
        grep -Eq "$SANITIZER_REPORT" "$log" && report=1
        if [[ $status -eq 0 && $report -eq 0 ]]; then
            echo "ok    $name [$mode] (${elapsed} s)"
            sed 's/^/      /' "$log"
            passed=$((passed + 1))
        else
            cat "$log"
            why="exit status $status"
            [[ $report -eq 1 ]] && why="$why, sanitizer report"
            echo "FAIL  $name [$mode] (${elapsed} s): $why"
            failed=$((failed + 1))
            failures+=("$name [$mode] ($why)")
        fi
    done
done

echo "total time: $((SECONDS - start_all)) s"
for f in "${failures[@]+"${failures[@]}"}"; do
    echo "failed: $f"
done
echo "C tests: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
