#!/usr/bin/env bash
# Debian packages the tests need: Java for METEOR 1.5, WordNet for nltk METEOR, Chromium for the browser test
# (and a CJK font, so the page's Chinese renders in its screenshot).
set -euo pipefail
need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
[ -d /usr/share/wordnet ] || need+=(wordnet-base)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -d /usr/share/fonts/truetype/wqy ] || need+=(fonts-wqy-microhei)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "missing Debian packages: ${need[*]} (run as root to install)" >&2; exit 0; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
