#!/usr/bin/env sh
# Prints the path of a Python interpreter of version $1 (e.g. 3.12): from
# PATH, else from pyenv. Exits 1 with a message saying how to get one.
set -eu
want="$1"
check() {
  [ -x "$1" ] && [ "$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$want" ]
}
for candidate in "$(command -v "python$want" 2>/dev/null || true)" \
                 "$(command -v python3 2>/dev/null || true)"; do
  if [ -n "$candidate" ] && check "$candidate"; then echo "$candidate"; exit 0; fi
done
root="${PYENV_ROOT:-$HOME/.pyenv}"
for candidate in $(ls -d "$root"/versions/"$want"*/bin/python"$want" 2>/dev/null | sort -V -r); do
  if check "$candidate"; then echo "$candidate"; exit 0; fi
done
echo "Python $want was not found on PATH or in pyenv ($root/versions)." >&2
echo "Install it (e.g. 'pyenv install $want', or your distribution's python$want package)," >&2
echo "or point make at one: make PYTHON_$(echo "$want" | tr -d .)=/path/to/python$want ..." >&2
exit 1
