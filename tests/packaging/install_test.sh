#!/usr/bin/env bash
# `cmake --install` and the systemd unit as installed: install_test.sh CASE BUILD_DIR.
# Each case installs into a fresh directory under BUILD_DIR ($CMAKE: the cmake to use).
#   tree         every component lands where its consumer looks, rules with modes the daemon accepts
#   rules        the installed binary decides with the installed rules, found by itself
#   destdir      a DESTDIR install writes the prefix's paths into the unit, never DESTDIR's
#   unit         systemd-analyze verify accepts the installed unit and has nothing to say
#                about it; its exposure score stays where it is
#   unit_broken  ... and the same check fails on deliberately broken copies of it
#   sandbox      the unit's sandbox, emulated (unshare, setpriv), leaves the envelope working
set -euo pipefail
case_name=${1:?case} build=$(cd "${2:?build dir}" && pwd)
cmake=${CMAKE:-cmake}
work=$(mktemp -d "$build/install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset WARDEN_RULES
checks=0

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
pass() {
  checks=$((checks + 1))
}

# install_to PREFIX COMPONENT…: cmake --install, one component at a time (DESTDIR from the
# environment applies).
install_to() {
  local prefix=$1 component
  shift
  for component in "$@"; do
    "$cmake" --install "$build" --prefix "$prefix" --component "$component" >"$work/install.log" 2>&1 ||
      { cat "$work/install.log" >&2; fail "cmake --install --component $component failed (is everything built? ninja -C $build)"; }
  done
}

# systemd-analyze verify, without a running systemd (a container, a build machine): it loads
# the unit and what it refers to, and exits 1 on an error such as an ExecStart= that is not
# executable or a Documentation= man page that `man` cannot find (MANPATH: the installed
# pages). But it only warns, and exits 0, about an unknown key or a value it cannot parse. So a
# unit passes only when verify exits 0 and prints nothing at all.
verify_unit() {
  local unit=$1 man_path=$2 rc=0
  MANPATH=$man_path systemd-analyze verify "$unit" >"$work/verify.out" 2>&1 || rc=$?
  [[ $rc -eq 0 && ! -s $work/verify.out ]]
}

command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (Debian package systemd; scripts/setup.sh installs it)"

case $case_name in
tree)
  p=$work/usr
  install_to "$p" runtime systemd docs man completions
  [[ -x $p/bin/warden ]] || fail "bin/warden"
  src_rules=$(cd "$WARDEN_SOURCE_DIR/rules" && find . -type f | sort)
  inst_rules=$(cd "$p/share/warden/rules" && find . -type f | sort)
  [[ -n $src_rules && $src_rules == "$inst_rules" ]] || fail "share/warden/rules differs from rules/"
  pass
  # The daemon refuses rules that others can write: nothing installed is group- or world-writable,
  # and nothing is a link (a link's target may not be installed).
  writable=$(find "$p" \( -perm /022 -o -type l \) -print)
  [[ -z $writable ]] || fail "group- or world-writable, or a link: $writable"
  cmp -s "$WARDEN_SOURCE_DIR/rules/effects.toml" "$p/share/doc/warden/examples/team-policy/effects.toml" ||
    fail "the team policy example's link to the effects table is not installed as the table"
  pass
  for f in lib/systemd/system/warden.service lib/sysusers.d/warden.conf share/warden/warden.toml \
           share/doc/warden/README.md share/doc/warden/docs/ACTUATORS.md share/doc/warden/docs/CLI.md \
           share/doc/warden/examples/warden.toml share/bash-completion/completions/warden \
           share/fish/vendor_completions.d/warden.fish; do
    [[ -s $p/$f ]] || fail "$f is not installed"
    pass
  done
  # zsh: vendor-completions for /usr (Debian's zsh), site-functions for other prefixes.
  [[ -s $p/share/zsh/site-functions/_warden || -s $p/share/zsh/vendor-completions/_warden ]] ||
    fail "the zsh completion is not installed"
  cmp -s "$build/packaging/completions/warden.bash" "$p/share/bash-completion/completions/warden" ||
    fail "the installed bash completion is not the generated one"
  # A page per command, the same set the build generated, and man finds them by name.
  built=$(cd "$build/packaging/man" && ls)
  installed=$(cd "$p/share/man/man1" && ls)
  [[ $built == "$installed" && $installed == *warden-serve.1* && $installed == *warden-audit-query.1* ]] ||
    fail "man pages: built [$built], installed [$installed]"
  MANPATH=$p/share/man man -w warden-serve >/dev/null || fail "man -w warden-serve"
  pass
  ;;
rules)
  p=$work/usr
  install_to "$p" runtime
  proposal='{"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"look"}'
  out=$(printf '%s\n' "$proposal" | "$p/bin/warden" dry-run --format text - 2>&1) ||
    fail "the installed binary, without --rules, does not approve ls: $out"
  [[ $out == *everyday-shell* ]] || fail "not decided by the shipped rules: $out"
  pass
  # Proof that the rules it read are the installed ones: one that does not compile, added
  # there, stops it, and names the installed file.
  printf '(defrule broken\n' >"$p/share/warden/rules/zz_broken.clp"
  rc=0
  out=$(printf '%s\n' "$proposal" | "$p/bin/warden" dry-run --format text - 2>&1) || rc=$?
  [[ $rc -eq 2 && $out == *"$p/share/warden/rules/zz_broken.clp"* ]] ||
    fail "a broken installed rule file did not stop the installed binary (exit $rc): $out"
  pass
  # The binary in the build tree keeps the checkout's rules (no installed tree beside it).
  out=$(printf '%s\n' "$proposal" | "$build/cli/warden" dry-run --format text - 2>&1) ||
    fail "the build tree's binary no longer finds the checkout's rules: $out"
  [[ $out == *everyday-shell* ]] || fail "the build tree's binary: $out"
  pass
  ;;
destdir)
  DESTDIR=$work/stage install_to /usr runtime systemd
  unit=$work/stage/usr/lib/systemd/system/warden.service
  [[ -x $work/stage/usr/bin/warden && -s $unit ]] || fail "DESTDIR install: $(cd "$work/stage" && find . -maxdepth 4)"
  grep -qx 'ExecStart=/usr/bin/warden serve --config %E/warden/warden.toml --state-dir %S/warden' "$unit" ||
    fail "ExecStart= is not the prefix's binary: $(grep ExecStart= "$unit")"
  ! grep -q "$work" "$unit" || fail "the unit names the DESTDIR staging directory"
  grep -q '/usr/share/warden/warden.toml' "$unit" || fail "the unit does not name the example configuration"
  pass
  ;;
unit)
  p=$work/usr
  install_to "$p" runtime systemd man
  unit=$p/lib/systemd/system/warden.service
  grep -qx "ExecStart=$p/bin/warden serve --config %E/warden/warden.toml --state-dir %S/warden" "$unit" ||
    fail "ExecStart= is not the installed binary: $(grep ExecStart= "$unit")"
  pass
  verify_unit "$unit" "$p/share/man" || fail "systemd-analyze verify on the installed unit: $(cat "$work/verify.out")"
  pass
  # The sandbox, scored by systemd itself (0 best, 10 worst): it may only get better. What it
  # leaves open, it leaves for the envelope of approved commands (see the unit's comments).
  systemd-analyze security --offline=yes --threshold=30 "$unit" >"$work/security.out" 2>&1 ||
    fail "exposure above 3.0: $(tail -3 "$work/security.out")"
  pass
  grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$unit" || fail "ExecReload= does not send SIGHUP"
  pass
  ;;
unit_broken)
  p=$work/usr
  install_to "$p" runtime systemd man
  unit=$p/lib/systemd/system/warden.service
  verify_unit "$unit" "$p/share/man" || fail "the installed unit does not verify to begin with: $(cat "$work/verify.out")"
  mkdir "$work/broken"
  broken=$work/broken/warden.service
  # break SED_EXPRESSION WHAT: a copy changed by the expression must fail the check.
  break_unit() {
    sed -e "$1" "$unit" >"$broken"
    ! cmp -s "$unit" "$broken" || fail "the expression for '$2' changed nothing"
    if verify_unit "$broken" "${3:-$p/share/man}"; then fail "systemd-analyze verify passed a unit with $2"; fi
    pass
  }
  break_unit 's/^ProtectSystem=/ProtectSytem=/' "a misspelled key (verify warns and exits 0)"
  break_unit 's/^ProtectHome=tmpfs/ProtectHome=maybe/' "a value it cannot parse"
  break_unit 's/@obsolete/@obsolete-calls/' "an unknown system call group"
  break_unit "s|^ExecStart=$p/bin/warden|ExecStart=$p/bin/warden-missing|" "an ExecStart= that does not exist (exit 1)"
  break_unit 's/^Documentation=man:warden-serve(1)/Documentation=man:warden-serves(1)/' "a man page that does not exist"
  break_unit '/^ExecStart=/d' "no ExecStart="
  ;;
sandbox)
  # The unit's file-system and credential settings, rebuilt with unshare and setpriv (no
  # systemd runs here), must leave the shell actuator's envelope working: the installed
  # binary runs a command confined, as an unprivileged user, the workspace writable, the
  # system read-only. Every [Service] setting is either emulated, known not to touch what the
  # envelope needs, or known to break it (then the test fails and says why).
  [[ $(id -u) -eq 0 ]] || fail "needs root (unshare -m, mount), as the other confinement tests"
  p=$work/usr
  install_to "$p" runtime systemd
  unit=$p/lib/systemd/system/warden.service
  emulate=()
  while IFS='=' read -r key value; do
    case $key in
      Type | ExecStart | ExecReload | EnvironmentFile | Restart | RestartPreventExitStatus | TimeoutStopSec | \
        LimitNOFILE | Group | AmbientCapabilities | RestrictSUIDSGID | PrivateMounts | StateDirectory | \
        StateDirectoryMode | ConfigurationDirectory | ConfigurationDirectoryMode | RuntimeDirectory | \
        RuntimeDirectoryMode | UMask | ProtectKernelModules | ProtectClock | LockPersonality | RestrictRealtime | \
        RemoveIPC | SystemCallArchitectures | SystemCallFilter | SystemCallErrorNumber | RestrictAddressFamilies) ;;
      User | CapabilityBoundingSet | NoNewPrivileges) ;;  # setpriv, below
      ProtectSystem) [[ $value == strict ]] || fail "ProtectSystem=$value: emulated as strict only"; emulate+=(system) ;;
      ProtectHome) [[ $value == tmpfs ]] || fail "ProtectHome=$value: emulated as tmpfs only"; emulate+=(home) ;;
      PrivateTmp) emulate+=(tmp) ;;
      PrivateDevices) emulate+=(dev) ;;
      ProtectControlGroups) emulate+=(cgroup) ;;
      ProtectKernelTunables | ProtectKernelLogs | ProtectProc | ProcSubset | ProtectHostname)
        fail "$key= covers or remounts /proc: the keeper's fresh /proc in its PID namespace is refused (EPERM)" ;;
      RestrictNamespaces | PrivateUsers) fail "$key=: the keeper creates user, mount, PID, network, IPC, UTS and cgroup namespaces" ;;
      MemoryDenyWriteExecute) fail "$key=: approved commands (node, java) map writable executable memory" ;;
      *) fail "$key= is not known to this test: emulate it here, or say why it cannot matter" ;;
    esac
  done < <(sed -n '/^\[Service\]/,/^\[/{/^[A-Za-z]/p}' "$unit")
  [[ ${#emulate[@]} -eq 5 ]] || fail "expected ProtectSystem, ProtectHome, PrivateTmp, PrivateDevices, ProtectControlGroups: ${emulate[*]}"
  pass
  # What the confined command may do: everything, by the rules (the envelope is what limits it).
  mkdir -p "$work/rules" "$work/workspace"
  cp "$WARDEN_SOURCE_DIR/tests/effects_cases/approve_all.clp" "$WARDEN_SOURCE_DIR/rules/effects.toml" \
     "$WARDEN_SOURCE_DIR/rules/paths.toml" "$work/rules/"
  chmod 755 "$work" "$work/rules"
  chmod 644 "$work/rules"/*
  chown nobody "$work/workspace"
  # sandboxed EXTRA_SETUP: runs the installed binary's `exec` under the emulated unit; EXTRA_SETUP
  # runs (as root) just before the user switch.
  sandboxed() {
    local w=/mnt/warden-test
    unshare -m --propagation private sh -euc '
      work=$1 w=$2 extra=$3
      # The test tree, reachable whatever ProtectHome= hides (the checkout may be in a home).
      mount -t tmpfs -o mode=755 tmpfs /mnt && mkdir "$w" && mount --bind "$work" "$w"
      mount --bind "$w/workspace" "$w/workspace"                    # ReadWritePaths= (StateDirectory=)
      mount -t tmpfs -o mode=755,nosuid tmpfs /dev                   # PrivateDevices=
      for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
        IFS=: read -r n major minor <<EOF
$d
EOF
        mknod -m 666 "/dev/$n" c "$major" "$minor"
      done
      mount -o remount,bind,ro /                                     # ProtectSystem=strict
      mount -o remount,bind,ro "$w"
      mount -t tmpfs -o mode=1777 tmpfs /tmp                         # PrivateTmp=
      mount -t tmpfs -o mode=1777 tmpfs /var/tmp
      for h in /home /root; do mount -t tmpfs -o ro,mode=755 tmpfs "$h"; done   # ProtectHome=tmpfs
      mount --bind -o ro /sys/fs/cgroup /sys/fs/cgroup               # ProtectControlGroups=
      eval "$extra"
      cd "$w/workspace"
      exec setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
        "$w/usr/bin/warden" exec --rules "$w/rules" --workspace "$w/workspace" --home "$w/workspace" -- \
        sh -c "touch $w/workspace/written && echo workspace-writable; touch /usr/warden-test 2>/dev/null || echo system-read-only"
    ' sandboxed "$work" "$w" "${1:-}"
  }
  out=$(sandboxed 2>&1) || fail "the envelope does not work under the unit's sandbox: $out"
  [[ $out == *workspace-writable*system-read-only* && -e $work/workspace/written ]] || fail "confined run: $out"
  pass
  # The control: what ProtectKernelTunables= does (a read-only /proc/sys) stops the envelope.
  rc=0
  out=$(sandboxed 'mount --bind -o ro /proc/sys /proc/sys' 2>&1) || rc=$?
  [[ $rc -eq 125 && $out == *"mounting /proc failed"* ]] ||
    fail "a covered /proc did not stop the envelope (exit $rc): $out"
  pass
  ;;
*)
  fail "unknown case"
  ;;
esac
[[ $checks -gt 0 ]] || fail "checked nothing"
echo "ok ($case_name): $checks checks"
