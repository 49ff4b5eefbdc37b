# Sourced by the scripts (from the repository root): messages, installing the
# programs scripts/commands.txt declares, waiting for a server with its log's
# last lines on failure.
#
# Every program a script or test runs is declared in scripts/commands.txt with
# its Debian package (scripts/check-commands makes sure of it), so `need NAME`
# installs by package name whatever a fresh machine lacks.

say() { echo "${0#./}: $*" >&2; }
die() {
    say "$*"
    exit 2
}

free_port() { # free_port FROM: the first loopback port from FROM up that nothing listens on
    # Below 32768 the kernel never hands a port to an outgoing connection, so
    # one found free stays free for the server about to bind it.
    local p=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
        p=$((p + 1))
        [ "$p" -lt $(($1 + 200)) ] || die "no free loopback port in $1-$p: stop what listens there"
    done
    echo "$p"
}

log_tail() { # log_tail FILE...: the last lines of each file, for an error message
    local f
    for f in "$@"; do
        [ -s "$f" ] || continue
        echo "  --- the last lines of $f:" >&2
        tail -n 15 "$f" | sed 's/^/  | /' >&2
    done
}

declared() { # declared NAME: prints "PACKAGE WHERE" as scripts/commands.txt has them
    local name pkg where
    while read -r name pkg where; do
        [ "$name" = "$1" ] && echo "$pkg $where" && return 0
    done < <(sed 's/#.*//' scripts/commands.txt)
    return 1
}

present() { # present NAME WHERE: whether the declared program or file is installed
    case $1 in
    /*) compgen -G "$1" >/dev/null ;;
    *)
        # a program declared in a directory is only that one (psql on PATH may
        # be a wrapper from another package)
        case $2 in /*) compgen -G "$2/$1" >/dev/null ;; *) command -v "$1" >/dev/null 2>&1 ;; esac
        ;;
    esac
}

APT_UPDATED=
apt_install() { # apt_install PACKAGE...: without recommended packages; apt's own error on failure
    [ "$(id -u)" = 0 ] ||
        die "$* not installed: run as root, or install them: sudo apt-get install --no-install-recommends $*"
    say "installing $* with apt-get"
    local log
    log=$(mktemp)
    if [ -z "$APT_UPDATED" ]; then
        # a failed update leaves the old lists, which may still hold the packages
        apt-get update -q >"$log" 2>&1 || { say "apt-get update failed; trying the old package lists"; log_tail "$log"; }
        APT_UPDATED=1
    fi
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1; then
        say "apt-get install --no-install-recommends $* failed:"
        log_tail "$log"
        rm -f "$log"
        exit 2
    fi
    rm -f "$log"
}

need() { # need NAME...: installs the declared packages of the programs or files missing
    local name decl pkg where missing=()
    for name in "$@"; do
        decl=$(declared "$name") || die "$name is not declared in scripts/commands.txt; add it with its package"
        read -r pkg where <<<"$decl"
        # built by the scripts themselves, or needed only outside the tests
        [ "$pkg" = - ] || [ "$where" = optional ] && continue
        present "$name" "$where" && continue
        [ "$pkg" != machine ] ||
            die "$name is not installed; it comes with the machine (see the README: what a fresh machine needs)"
        missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] || apt_install $(printf '%s\n' "${missing[@]}" | sort -u)
}

need_all() { # need_all: every declared program and file the tests use
    local name rest names=()
    while read -r name rest; do
        [ -n "$name" ] && names+=("$name")
    done < <(sed 's/#.*//' scripts/commands.txt)
    need "${names[@]}"
}

wait_for() { # wait_for SECONDS NAME "LOG..." CMD...: polls CMD until it succeeds
    local secs=$1 name=$2 logs=$3
    shift 3
    local _
    for _ in $(seq $((secs * 10))); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    say "$name did not become ready within ${secs}s"
    # shellcheck disable=SC2086 # LOG is a list of paths
    log_tail $logs
    exit 2
}
