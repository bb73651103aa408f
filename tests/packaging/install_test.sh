#!/usr/bin/env bash
# `cmake --install` and the systemd unit as installed: install_test.sh CASE BUILD_DIR.
# Each case installs into a fresh directory under BUILD_DIR ($CMAKE: the cmake to use).
#   tree         every component lands where its consumer looks, rules with modes the daemon accepts
#   rules        the installed binary decides with the installed rules, found by itself
#   destdir      a DESTDIR install writes the prefix's paths into the unit, never DESTDIR's
#   unit         systemd-analyze verify accepts the installed unit and has nothing to say
#                about it; its exposure score stays where it is
#   unit_broken  ... and the same check fails on deliberately broken copies of it
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
  # The daemon refuses rules that others can write: nothing installed is group- or world-writable.
  writable=$(find "$p" -perm /022 -print)
  [[ -z $writable ]] || fail "group- or world-writable: $writable"
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
*)
  fail "unknown case"
  ;;
esac
[[ $checks -gt 0 ]] || fail "checked nothing"
echo "ok ($case_name): $checks checks"
