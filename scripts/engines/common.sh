# shellcheck shell=bash
# Shared helpers of scripts/engines/*.sh. Sourced, never run. The sourcing script sets QIM_ENGINE (a short
# name used in every message) before sourcing, and runs with `set -euo pipefail`.
#
# Environment (all optional):
#   QIM_RUN_DIR     where running engines keep their config, data, logs and pid files  (/tmp/qim-engines)
#   QIM_CACHE_DIR   where downloaded jars are kept between runs                         ($HOME/.cache/qim)
#   QIM_MAVEN_REPO  the Maven local repository used to fetch them                       ($QIM_CACHE_DIR/m2)
#   JAVA_HOME       a Java 17+ to use instead of the `java` on PATH

QIM_ENGINE="${QIM_ENGINE:-engines}"
QIM_RUN_DIR="${QIM_RUN_DIR:-/tmp/qim-engines}"
QIM_CACHE_DIR="${QIM_CACHE_DIR:-${HOME:-/root}/.cache/qim}"
QIM_MAVEN_REPO="${QIM_MAVEN_REPO:-$QIM_CACHE_DIR/m2}"
QIM_ENGINES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# ---------------------------------------------------------------------------------------------- messages

qim_log() { printf '[%s %s] %s\n' "$QIM_ENGINE" "$(date +%H:%M:%S)" "$*"; }
qim_warn() { printf '[%s %s] WARNING: %s\n' "$QIM_ENGINE" "$(date +%H:%M:%S)" "$*" >&2; }
qim_err() { printf '[%s %s] ERROR: %s\n' "$QIM_ENGINE" "$(date +%H:%M:%S)" "$*" >&2; }
qim_die() { qim_err "$@"; exit 1; }

# Prints the last lines of a log file to stderr, framed, so a failure shows its cause right away.
qim_show_log_tail() {
  local file=$1 lines=${2:-25}
  [[ -s $file ]] || { printf '  (log %s is empty or missing)\n' "$file" >&2; return 0; }
  printf -- '----- last %s lines of %s -----\n' "$lines" "$file" >&2
  tail -n "$lines" "$file" >&2
  printf -- '----- end of %s -----\n' "$file" >&2
}

# Milliseconds since the epoch, and a duration in seconds with one decimal.
qim_now_ms() { date +%s%3N; }
qim_since() { local t0=$1 t1; t1=$(qim_now_ms); printf '%d.%ds' $(((t1 - t0) / 1000)) $((((t1 - t0) % 1000) / 100)); }

# ---------------------------------------------------------------------------------------------- processes

# qim_alive PID: the process exists and is not a zombie (a daemon's exited child may wait a while to be reaped).
qim_alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z && $state != X ]]
}

# qim_pid PIDFILE [MARKER]: prints the pid recorded in PIDFILE if that process is alive (and, with MARKER,
# its command line contains MARKER, which guards against a recycled pid). Fails otherwise.
qim_pid() {
  local file=$1 marker=${2:-} pid
  [[ -s $file ]] || return 1
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  qim_alive "$pid" || return 1
  if [[ -n $marker ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$marker" || return 1
  fi
  printf '%s\n' "$pid"
}

# qim_stop_pidfile WHAT PIDFILE [TIMEOUT_S] [MARKER]: SIGTERM, wait up to TIMEOUT_S, then SIGKILL.
# Idempotent: a missing or stale pid file only says so. Signals only the recorded pid.
qim_stop_pidfile() {
  local what=$1 file=$2 timeout=${3:-30} marker=${4:-} pid t0
  if ! pid=$(qim_pid "$file" "$marker"); then
    [[ -e $file ]] && rm -f "$file"
    qim_log "$what: not running"
    return 0
  fi
  t0=$(qim_now_ms)
  qim_log "$what: stopping pid $pid (SIGTERM, up to ${timeout}s)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + timeout))
  while qim_alive "$pid"; do
    if ((SECONDS >= deadline)); then
      qim_warn "$what: pid $pid still alive after ${timeout}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.2
  done
  rm -f "$file"
  qim_log "$what: stopped after $(qim_since "$t0")"
}

# qim_close_fds: closes every file descriptor above 2; called in a subshell right before `exec DAEMON`, so the
# daemon inherits none of its caller's (a daemon that kept, say, the write end of the caller's pipe would
# keep a `... | grep` or a test harness waiting forever).
qim_close_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}

# qim_spawn [--timer-slack-ns N] PIDFILE LOGFILE CMD...: starts CMD detached (own session, stdin from
# /dev/null, stdout and stderr appended to LOGFILE) and records its pid.
# The pid is written by the process itself just before it becomes CMD, so it is right whether or not
# setsid had to fork. --timer-slack-ns N (N > 0) sets the timer slack CMD and all its threads inherit
# (prctl PR_SET_TIMERSLACK through /proc/self/timerslack_ns; kept across exec): their timed sleeps may
# then end up to N ns late, and a wake-up by another thread is not delayed. 0 keeps the kernel's default.
qim_spawn() {
  local slack=0
  if [[ $1 == --timer-slack-ns ]]; then
    slack=$2
    shift 2
    [[ $slack =~ ^[0-9]+$ ]] || qim_die "qim_spawn: --timer-slack-ns '$slack' is not a number of nanoseconds"
  fi
  local pidfile=$1 logfile=$2
  shift 2
  rm -f "$pidfile"
  (
    qim_close_fds
    # shellcheck disable=SC2016 # expanded by the inner bash
    exec setsid bash -c 'printf "%s\n" "$$" >"$0"
      if (($1 > 0)); then echo "$1" >"/proc/$$/timerslack_ns" || echo "warning: timer slack $1 ns not set" >&2; fi
      shift
      exec "$@"' "$pidfile" "$slack" "$@"
  ) </dev/null >>"$logfile" 2>&1 &
  local i
  for i in $(seq 50); do [[ -s $pidfile ]] && return 0; sleep 0.1; done
  qim_die "could not start $1 (no pid file $pidfile after 5s); see $logfile"
}

# qim_wait_for WHAT TIMEOUT_S LOGFILE PIDFILE CHECK...: runs CHECK (a command) until it succeeds. Reports
# progress every 5 s, fails early if the process of PIDFILE died (PIDFILE may be ""), and on time-out names
# what it waited for and shows the end of LOGFILE.
qim_wait_for() {
  local what=$1 timeout=$2 logfile=$3 pidfile=$4
  shift 4
  local t0 next=5 elapsed
  t0=$(qim_now_ms)
  qim_log "waiting for $what (timeout ${timeout}s)"
  while :; do
    if "$@" >/dev/null 2>&1; then
      qim_log "$what: ready after $(qim_since "$t0")"
      return 0
    fi
    if [[ -n $pidfile ]] && ! qim_pid "$pidfile" >/dev/null; then
      qim_err "$what: the process died while starting (pid file $pidfile); see the log $logfile"
      qim_show_log_tail "$logfile" 40
      return 1
    fi
    elapsed=$((($(qim_now_ms) - t0) / 1000))
    if ((elapsed >= timeout)); then
      qim_err "timed out after ${timeout}s waiting for $what; see the log $logfile"
      qim_show_log_tail "$logfile" 40
      return 1
    fi
    if ((elapsed >= next)); then
      qim_log "still waiting for $what (${elapsed}s of ${timeout}s)"
      next=$((next + 5))
    fi
    sleep 0.5
  done
}

# ---------------------------------------------------------------------------------------------- network

# qim_port_open HOST PORT: true if something accepts TCP connections there.
qim_port_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null; }

# qim_wait_ports_closed WHAT TIMEOUT_S HOST:PORT...: until nothing accepts connections on any of them. A
# process reads as gone (its pid a zombie) while its last threads still hold its listening sockets, so a
# stop waits for its ports too: the next start (another mode on the same ports) would find them in use.
qim_wait_ports_closed() {
  local what=$1 timeout=$2 hp deadline
  shift 2
  deadline=$((SECONDS + timeout))
  for hp in "$@"; do
    while qim_port_open "${hp%:*}" "${hp##*:}"; do
      if ((SECONDS >= deadline)); then
        qim_err "$what: $hp still accepts connections ${timeout}s after the process exited"
        return 1
      fi
      sleep 0.2
    done
  done
}

qim_require_port_free() {
  local host=$1 port=$2 what=$3
  if qim_port_open "$host" "$port"; then
    qim_die "$what: $host:$port is already in use by another process (not one this script started); stop it or choose another port"
  fi
}

# ---------------------------------------------------------------------------------------------- java and maven

qim_java() {
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then printf '%s\n' "$JAVA_HOME/bin/java"; else command -v java || true; fi
}

# qim_require_java: sets QIM_JAVA to a Java 17+ or fails with what to install.
qim_require_java() {
  QIM_JAVA=$(qim_java)
  [[ -n $QIM_JAVA ]] || qim_die "no java found: install openjdk-17-jre-headless (scripts/install-deps.sh) or set JAVA_HOME"
  local props v
  props=$("$QIM_JAVA" -XshowSettings:properties -version 2>&1)
  v=$(sed -n 's/^ *java.specification.version = //p' <<<"$props")
  [[ ${v%%.*} =~ ^[0-9]+$ ]] || qim_die "cannot tell the version of $QIM_JAVA"
  ((${v%%.*} >= 17)) || qim_die "$QIM_JAVA is Java $v; the engines need Java 17 or newer (set JAVA_HOME)"
  # the exact JVM build, as a file-name-safe tag (class data sharing archives are valid for one build only)
  QIM_JAVA_TAG=$(sed -n 's/^ *java.vm.version = //p' <<<"$props" | tr -c 'A-Za-z0-9._\n-' '_')
}

# qim_fetch_jars NAME POM_DIR DEST [MAVEN_ARGS...]: makes sure DEST/lib holds the runtime jars of the pom
# in POM_DIR, downloading them with Maven the first time only. DEST/.complete marks a finished download; a
# lock keeps two starts from downloading at once.
qim_fetch_jars() {
  local name=$1 pomdir=$2 dest=$3
  shift 3
  if [[ -f $dest/.complete ]]; then
    qim_log "$name: using cached jars in $dest/lib ($(du -sh "$dest/lib" | cut -f1))"
    return 0
  fi
  command -v mvn >/dev/null || qim_die "$name: mvn (Maven) is needed to download the jars once: install maven (scripts/install-deps.sh)"
  command -v flock >/dev/null || qim_die "$name: flock (util-linux) is missing"
  mkdir -p "$(dirname "$dest")"
  local lockfd
  exec {lockfd}>"$dest.lock"
  if ! flock -n "$lockfd"; then
    qim_log "$name: another process is downloading the jars; waiting for it"
    flock "$lockfd"
  fi
  if [[ -f $dest/.complete ]]; then
    exec {lockfd}>&-
    qim_log "$name: using cached jars in $dest/lib"
    return 0
  fi
  local tmp="$dest.partial" mvnlog="$dest.mvn.log" t0
  rm -rf "$tmp"
  mkdir -p "$tmp"
  t0=$(qim_now_ms)
  qim_log "$name: first start: downloading jars with Maven into $dest (Maven repository $QIM_MAVEN_REPO, log $mvnlog)"
  if ! mvn -B -q -f "$pomdir/pom.xml" -Dmaven.repo.local="$QIM_MAVEN_REPO" "$@" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib" >"$mvnlog" 2>&1; then
    rm -rf "$tmp"
    exec {lockfd}>&-
    qim_err "$name: Maven could not fetch the jars (is Maven Central reachable?); see $mvnlog"
    qim_show_log_tail "$mvnlog" 30
    exit 1
  fi
  cp "$pomdir/pom.xml" "$tmp/pom.xml"
  touch "$tmp/.complete"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  exec {lockfd}>&-
  qim_log "$name: fetched $(find "$dest/lib" -name '*.jar' | wc -l) jars, $(du -sh "$dest/lib" | cut -f1), in $(qim_since "$t0")"
}

# ---------------------------------------------------------------------------------------------- misc

# qim_rss_mb PID: resident set size of a process in MiB (0 if gone).
qim_rss_mb() { awk '/^VmRSS:/ {printf "%d\n", $2 / 1024; found=1} END {if (!found) print 0}' "/proc/$1/status" 2>/dev/null || echo 0; }

# qim_rotate_log FILE: keeps the previous run's log as FILE.prev, so each start logs into a fresh file.
qim_rotate_log() { [[ -s $1 ]] && mv -f "$1" "$1.prev"; : >"$1"; }

# qim_render TEMPLATE OUT KEY=VALUE...: copies TEMPLATE to OUT replacing each @KEY@ by VALUE.
qim_render() {
  local template=$1 out=$2
  shift 2
  local content kv
  content=$(<"$template")
  for kv in "$@"; do content=${content//@${kv%%=*}@/${kv#*=}}; done
  printf '%s\n' "$content" >"$out"
}
