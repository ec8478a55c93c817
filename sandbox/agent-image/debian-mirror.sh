#!/usr/bin/env bash
# Prints the Debian mirror build-image.sh debootstraps from: AMBIENT_DEBIAN_MIRROR when set, else
# the main Debian archive this host's apt uses (the first `deb` entry of a Debian suite that is
# not the security archive), read from APT_DIR/sources.list (one-line entries), then
# APT_DIR/sources.list.d/*.list and *.sources (deb822 `URIs:`), in name order.
#
# Usage: debian-mirror.sh [APT_DIR]   (APT_DIR defaults to /etc/apt)
# Exits 1, saying what to set, when no entry names a Debian archive.
set -euo pipefail

if [ -n "${AMBIENT_DEBIAN_MIRROR:-}" ]; then
  printf '%s\n' "$AMBIENT_DEBIAN_MIRROR"
  exit 0
fi

APT_DIR=${1:-/etc/apt}
files=()
[ -f "$APT_DIR/sources.list" ] && files+=("$APT_DIR/sources.list")
if [ -d "$APT_DIR/sources.list.d" ]; then
  while IFS= read -r file; do files+=("$file"); done < <(
    find "$APT_DIR/sources.list.d" -maxdepth 1 -type f \( -name '*.list' -o -name '*.sources' \) |
      LC_ALL=C sort
  )
fi

# A Debian suite (codename or alias, optionally -updates/-backports/-proposed-updates) and a
# URI debootstrap can use that is not the security archive.
mirror=$(
  [ ${#files[@]} -eq 0 ] || awk '
    function debian_suite(s) {
      sub(/-(updates|backports|proposed-updates)$/, "", s)
      return s ~ /^(stable|testing|unstable|oldstable|oldoldstable|sid|experimental|buster|bullseye|bookworm|trixie|forky|duke)$/
    }
    function usable(uri) {
      return uri ~ /^(https?|ftp|file):/ && uri !~ /-security\/?$/
    }
    function found(uri) { print uri; done = 1; exit }
    function stanza_end() {
      if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled !~ /^[Nn]o$/ && uris != "") {
        n = split(suites, s, /[ \t]+/)
        ok = 0
        for (i = 1; i <= n; i++) if (s[i] != "" && debian_suite(s[i])) ok = 1
        split(uris, u, /[ \t]+/)
        if (ok && usable(u[1])) found(u[1])
      }
      types = uris = suites = enabled = ""
    }
    FNR == 1 { if (NR > 1) stanza_end(); deb822 = FILENAME ~ /\.sources$/ }
    { sub(/\r$/, "") }
    deb822 {
      if ($0 ~ /^[ \t]*$/) { stanza_end(); next }
      if ($0 ~ /^#/) next
      line = $0
      if (match(line, /^[A-Za-z-]+:/)) {
        key = tolower(substr(line, 1, RLENGTH - 1))
        value = substr(line, RLENGTH + 1)
        gsub(/^[ \t]+|[ \t]+$/, "", value)
        if (key == "types") types = value
        else if (key == "uris") uris = value
        else if (key == "suites") suites = value
        else if (key == "enabled") enabled = value
      }
      next
    }
    {
      sub(/#.*/, "")
      if ($1 != "deb") next
      f = 2
      # [ option=value ... ]
      if ($f ~ /^\[/) { while (f <= NF && $f !~ /\]$/) f++; f++ }
      uri = $f; suite = $(f + 1)
      if (uri != "" && usable(uri) && debian_suite(suite)) found(uri)
    }
    END { if (!done) stanza_end() }
  ' "${files[@]}"
)

if [ -z "$mirror" ]; then
  printf 'debian-mirror: no Debian archive in %s (sources.list, sources.list.d): set AMBIENT_DEBIAN_MIRROR to a Debian mirror URL\n' "$APT_DIR" >&2
  exit 1
fi
printf '%s\n' "${mirror%/}"
