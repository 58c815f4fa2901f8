# shellcheck shell=sh
# SPDX-License-Identifier: Apache-2.0
# pid_lib.sh - stop only the processes this script started (sourced)
#
# The scripts record the PIDs of what they start and stop them all at exit.
# A recorded process that ended earlier (killed on purpose, crashed, or
# stopped and waited for) leaves its number free, and the kernel hands it
# out again: pid_max is 32768 on the test machines, and a parallel `make
# check` forks over a thousand processes a second, so within seconds the
# number can name a server of another test running beside this one.
# Signalling it blindly made that test fail at random (its advisor got
# SIGTERM between two checks). So each script marks its environment, which
# every process it starts inherits, and kill_own signals a PID only while
# the process behind it carries this script's mark.

PV_PID_MARK="$$.$(date +%s%N)"
export PV_PID_MARK

# pv_pid_own PID: true while PID is a live process started under this
# mark (a name of its own: a script's helper called "own" once shadowed it,
# and nothing was stopped)
pv_pid_own() {
    [ -r "/proc/$1/environ" ] &&
        tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qxF "PV_PID_MARK=$PV_PID_MARK"
}

# kill_own SIGNAL PID...: send SIGNAL (TERM, KILL, ...) to each PID that is
# still ours; the others are left alone
kill_own() {
    ko_sig=$1
    shift
    for ko_p in "$@"; do
        if pv_pid_own "$ko_p"; then
            kill -s "$ko_sig" "$ko_p" 2>/dev/null
        fi
    done
    return 0
}
