# zsh -f zsh_complete.zsh DIR LINE: types LINE and a Tab into an interactive zsh (in a
# pseudo-terminal, zsh/zpty) whose $fpath holds DIR/_warden, and prints each match the
# completion offered, one a line. compadd is wrapped to print its matches; a function run after
# the completion (comppostfuncs) prints the end marker the reader waits for.
zmodload zsh/zpty || exit 9
dir=$1 line=$2
zpty z "HOME=${(q)dir} zsh -f -i"
zpty -w z 'PS1=""; PS2=""; fpath=('${(q)dir}' $fpath); autoload -Uz compinit; compinit -u -d '${(q)dir}'/zcompdump
compadd() {
  if [[ " $* " == *" -"[OAD]" "* ]]; then builtin compadd "$@"; return; fi
  local -a hits; builtin compadd -O hits "$@"
  local h; for h in $hits; do print -r -- "MATCH:$h"; done
  builtin compadd "$@"
}
end_marker() { print -r -- "COMPLETION""-DONE"; }
comppostfuncs=(end_marker)
print "SET""UP-DONE"; bindkey "^M" undefined-key; bindkey "^J" undefined-key'
zpty -r z out '*SETUP-DONE*' || exit 8
zpty -w -n z $line$'\t'
zpty -r z out '*COMPLETION-DONE*' || exit 7
print -r -- "$out" | tr -d '\r' | grep -a 'MATCH:' | sed 's/.*MATCH://' | sort -u
zpty -d z
