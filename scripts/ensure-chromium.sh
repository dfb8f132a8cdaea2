#!/usr/bin/env bash
# The impact page test renders HTML in headless Chromium. Detect it; install the Debian package when root.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then exit 0; fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: Chromium not found; installing the chromium package with apt-get" >&2
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    exit 0
  fi
  echo "ensure-chromium: apt-get could not install chromium; the browser test will be skipped" >&2
  exit 0
fi
echo "ensure-chromium: Chromium not found (install the 'chromium' package); the browser test will be skipped" >&2
exit 0
