# Drives zsh's real completion system in a pseudo-terminal (zsh/zpty): types each line given as
# an argument, then a TAB, into one interactive `zsh -f -i` set up by init.zsh, and prints every
# match offered, one per line, then a line "--END--".
zmodload zsh/zpty
zpty capture zsh -f -i
zpty -w capture "source ${0:A:h}/init.zsh"
local line input
repeat 100; do zpty -r capture line; [[ $line == *CAPTURE-READY* ]] && break; done
for input in "$@"; do
  # Ctrl-U clears what the last TAB left on the line
  zpty -w -n capture $'\C-u'"$input"$'\t'
  # init.zsh prints markers before and after the matches; lines end in CR LF on a terminal
  until [[ $line == *CAPTURE-BEGIN* ]]; do zpty -r capture line; done
  while zpty -r capture line && [[ $line != *CAPTURE-END* ]]; do print -r -- "${${line%$'\n'}%$'\r'}"; done
  print -- --END--
done
zpty -d capture
