// The three scripts without the command tree ({{NAME}}s filled by completion-shells.ts). Each walks the
// words before the cursor (skipping flags and their values, descending into subcommands, counting
// arguments), then offers a flag's value, else flags, else subcommands and the next argument.

// bash and zsh alike: the two lookups of the tables filled in (zsh's flags are name:description)
const LOOKUPS = `# The value flag $1 takes, in REPLY (see _crm_add); status 1 for a flag that takes none.
_crm_flag() {
  case "$1" in
{{FLAG_CASES}}
    *) return 1 ;;
  esac
}

# subs, flags and args (each positional argument's kind) of command path $1; status 1 if none.
_crm_node() {
  case "$1" in
{{NODE_CASES}}
    *) return 1 ;;
  esac
}
`;

export const BASH = `{{HEADER}}
# bash: add \`source <(crm completion bash)\` to ~/.bashrc, or save it as
# ~/.local/share/bash-completion/completions/crm (bash-completion loads it on first use).

${LOOKUPS}
# Adds to COMPREPLY kind $1 for word $2: "=w1 w2" those words, file, dir, profile, data (@file), none.
_crm_add() {
  local kind=$1 cur=$2 line
  local -a opts
  case "$kind" in
    =*) opts=(-W "\${kind#=}") ;;
    file) opts=(-f) ;;
    dir) opts=(-d) ;;
    data) [[ $cur == @* ]] || return 0; opts=(-f -P @); cur=\${cur#@} ;;
    profile) opts=(-W "$("\${COMP_WORDS[0]/#\\~\\//$HOME/}" __complete profiles 2>/dev/null)") ;;
    *) return 0 ;;
  esac
  [[ $kind == file || $kind == dir || $kind == data ]] && compopt -o filenames 2>/dev/null
  while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen "\${opts[@]}" -- "$cur")
}

_crm() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=crm w i npos=0 expect= rest= REPLY subs flags
  local globals={{GLOBALS}}
  local -a args
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    # a flag's value; bash splits --flag=value into three words
    if [[ -n $expect ]]; then [[ $w == = ]] || expect=; continue; fi
    if [[ -z $rest ]]; then
      case "$w" in
        --) rest=1; continue ;;
        -*) _crm_flag "$w" && expect=$w; continue ;;
      esac
    fi
    if ((npos == 0)) && _crm_node "$cmd $w"; then cmd="$cmd $w"; else ((npos++)); fi
  done
  [[ $cur == = ]] && cur=
  if [[ -n $expect ]]; then _crm_flag "$expect"; _crm_add "$REPLY" "$cur"; return 0; fi
  _crm_node "$cmd"
  if [[ $cur == -* && -z $rest ]]; then
    [[ $cmd != crm ]] && flags="$flags $globals"
    _crm_add "=$flags" "$cur"
    return 0
  fi
  ((npos == 0)) && _crm_add "=$subs" "$cur"
  _crm_add "\${args[npos]:-none}" "$cur"
}
complete -F _crm crm
`;

export const ZSH = `#compdef crm
{{HEADER}}
# zsh: save it as _crm in a folder of $fpath, before compinit runs, e.g. in ~/.zshrc:
#   fpath=(~/.zfunc $fpath); autoload -Uz compinit; compinit
# (crm completion zsh > ~/.zfunc/_crm), or add \`source <(crm completion zsh)\` after compinit.

${LOOKUPS}
# Offers kind $1: "=w1 w2" those words, file, dir, profile, data (@file), none (free text).
_crm_add() {
  local kind=$1
  local -a w
  case $kind in
    '='*) w=(\${=kind#=}); compadd -a w ;;
    file) _files ;;
    dir) _files -/ ;;
    data) compset -P '@' && _files ;;
    profile) w=(\${(f)"$($~words[1] __complete profiles 2>/dev/null)"}); compadd -a w ;;
  esac
}

_crm() {
  local cmd=crm w expect= rest= REPLY
  integer npos=0
  local -a subs flags args globals
  globals=({{GLOBALS}})
  for w in "\${(@)words[2,CURRENT-1]}"; do
    if [[ -n $expect ]]; then expect=; continue; fi
    if [[ -z $rest ]]; then
      case $w in
        --) rest=1; continue ;;
        -*) _crm_flag $w && expect=$w; continue ;;
      esac
    fi
    if (( npos == 0 )) && _crm_node "$cmd $w"; then cmd="$cmd $w"; else (( npos++ )); fi
  done
  if [[ -z $expect && -z $rest && $PREFIX == -*=* ]] && _crm_flag "\${PREFIX%%=*}"; then
    compset -P '*='
    _crm_add $REPLY
    return
  fi
  if [[ -n $expect ]]; then _crm_flag $expect; _crm_add $REPLY; return; fi
  _crm_node $cmd
  if [[ $PREFIX == -* && -z $rest ]]; then
    [[ $cmd != crm ]] && flags+=($globals)
    _describe -t options option flags
    return
  fi
  (( npos == 0 && $#subs )) && _describe -t commands command subs
  _crm_add \${args[npos+1]:-none}
}

if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _crm "$@"
else
  compdef _crm crm
fi
`;

export const FISH = `{{HEADER}}
# fish: save it as ~/.config/fish/completions/crm.fish (crm completion fish > …).
set -g __crm_paths {{PATHS}}
set -g __crm_valued {{VALUED}}

# Command path, positional count and whether a flag's value comes next (cached: every line asks).
function __crm_state
  set -l line (commandline -opc)
  set -q __crm_line; and test "$__crm_line" = "$line"; and return
  set -l cmd crm
  set -l npos 0
  set -l expect 0
  set -l rest 0
  for t in $line[2..-1]
    test $expect = 1; and set expect 0; and continue
    if test $rest = 0
      test "$t" = --; and set rest 1; and continue
      if string match -q -- '-*' $t
        contains -- $t $__crm_valued; and set expect 1
        continue
      end
    end
    if test $npos = 0; and contains -- "$cmd $t" $__crm_paths
      set cmd "$cmd $t"
    else
      set npos (math $npos + 1)
    end
  end
  set -g __crm_line "$line"
  set -g __crm_s $cmd $npos $expect
end

# At command path $1 (and, given $2, at its positional argument $2, not at a flag's value)?
function __crm_at
  __crm_state
  test "$__crm_s[1]" = "$argv[1]"; or return 1
  set -q argv[2]; or return 0
  test "$__crm_s[2]" = "$argv[2]" -a "$__crm_s[3]" = 0
end

# the saved profile names, from the crm being completed
function __crm_profiles
  set -l bin (commandline -opc)[1]
  command $bin __complete profiles 2>/dev/null
end

# --data @file.json: files after the @
function __crm_at_files
  set -l t (string replace -r -- '^--[^=]*=' '' (commandline -ct))
  string match -q -- '@*' $t; or return
  __fish_complete_path (string sub -s 2 -- $t) | string replace -r '^' '@'
end

complete -c crm -f
{{LINES}}
`;
