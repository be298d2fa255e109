#!/usr/bin/env bash
# Assembles the sm_90a kernels of every layer of a `moegen draw --target sm_90a`
# directory with ptxas, here, without a GPU: each spec of DIR/draws.txt is
# compiled to PTX (`moegen compile --target sm_90a`, into DIR/ptx/NAME) and
# each kernel assembled for sm_90a. Prints each kernel's registers and spill
# stores (ptxas -v); fails (exit 1) on a layer that does not compile, PTX that
# ptxas refuses, or any ptxas warning (wgmma serialization among them).
#
#   tools/layer-check/ptxas-draws.sh DIR [MOEGEN [PTXAS]]
#
# MOEGEN defaults to moegen on PATH, PTXAS to ptxas on PATH, else
# /usr/local/cuda/bin/ptxas.
set -uo pipefail

dir=${1:?usage: ptxas-draws.sh DIR [MOEGEN [PTXAS]]}
moegen=${2:-moegen}
ptxas=${3:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
manifest=$dir/draws.txt
if [ ! -f "$manifest" ]; then
  echo "ptxas-draws.sh: $manifest: no such file (write it with 'moegen draw --target sm_90a')" >&2
  exit 2
fi
if [ ! -x "$ptxas" ]; then
  echo "ptxas-draws.sh: no ptxas at '$ptxas'" >&2
  exit 2
fi

bad=0
kernels=0
while read -r file _tokens _cus; do
  [ -z "$file" ] && continue
  name=${file%.moe}
  out=$dir/ptx/$name
  rm -rf "$out"
  mkdir -p "$dir/ptx"
  if ! "$moegen" compile "$dir/$file" --target sm_90a -o "$out" > "$out.compile.log" 2>&1; then
    echo "FAIL $file: does not compile"
    sed 's/^/  /' "$out.compile.log" | tail -n 8
    bad=$((bad + 1))
    continue
  fi
  for ptx in "$out"/*.ptx; do
    kernels=$((kernels + 1))
    log=${ptx%.ptx}.ptxas.log
    if ! "$ptxas" -arch=sm_90a -v "$ptx" -o "${ptx%.ptx}.cubin" > "$log" 2>&1; then
      echo "FAIL $file: ptxas refuses $(basename "$ptx")"
      sed 's/^/  /' "$log" | tail -n 8
      bad=$((bad + 1))
      continue
    fi
    if grep -qi "warning" "$log"; then
      echo "FAIL $file: ptxas warns on $(basename "$ptx")"
      grep -i "warning" "$log" | sed 's/^/  /' | head -n 4
      bad=$((bad + 1))
    fi
    regs=$(grep -o 'Used [0-9]* registers' "$log" | grep -o '[0-9]*')
    spills=$(grep -o '[0-9]* bytes spill stores' "$log" | grep -o '^[0-9]*')
    echo "$file $(basename "$ptx" .ptx) registers ${regs:-?} spill-stores ${spills:-?}"
  done
done < "$manifest"
echo "ptxas-draws: $kernels kernel(s), $bad problem(s) in $dir"
[ "$bad" -eq 0 ]
