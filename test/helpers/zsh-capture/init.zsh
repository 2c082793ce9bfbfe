# Sourced in the interactive zsh that capture.zsh types into: the completion system with the
# folder $CAPTURE_FPATH (where _crm is installed) first in fpath, and a compadd that prints.
PROMPT= RPROMPT= PS2=
fpath=($CAPTURE_FPATH $fpath)
autoload -Uz compinit && compinit -u -D
# or loaded after compinit, e.g. CAPTURE_SOURCE='source <(crm completion zsh)'
[[ -n $CAPTURE_SOURCE ]] && eval "$CAPTURE_SOURCE"
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
# markers around the matches, for capture.zsh (each TAB empties these arrays, so they re-arm)
capture-begin() { print -r -- CAPTURE-BEGIN; compprefuncs=(capture-begin) }
capture-end() { print -r -- CAPTURE-END; comppostfuncs=(capture-end) }
compprefuncs=(capture-begin)
comppostfuncs=(capture-end)
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
zmodload zsh/zutil
# Prints each match as TAB would insert it (with its prefixes), then " -- " and its display text.
# Calls that only fill arrays (-O, -A, -D) are completion internals and pass through.
compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a __hits __dscr apre hpre
  if (( $@[(I)-d] )); then
    local __d=${@[$(( ${@[(i)-d]} + 1 ))]}
    if [[ $__d == \(* ]]; then eval "__dscr=$__d"; else __dscr=("${(@P)__d}"); fi
  fi
  builtin compadd -A __hits -D __dscr "$@"
  # also add them, so that functions checking whether anything matched (_files) go on as usual
  builtin compadd "$@"
  setopt localoptions norcexpandparam extendedglob
  zparseopts -E P:=apre p:=hpre
  local i
  for i in {1..$#__hits}; do
    print -r -- "$IPREFIX${apre[2]}${hpre[2]}${__hits[i]}${__dscr[i]:+ -- ${__dscr[i]}}"
  done
}
print CAPTURE-READY
