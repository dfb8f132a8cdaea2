#!/usr/bin/env bash
# Spark 4 needs Java 17+. Detect it; install it with apt-get when we are root on Debian/Ubuntu.
set -euo pipefail
java_major() { java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'; }
if command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ] 2>/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-java: Java 17+ not found; installing openjdk-17-jre-headless with apt-get" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  exit 0
fi
cat >&2 <<'MSG'
ensure-java: Spark 4 needs Java 17 or newer, and none was found on PATH.
  Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless
  macOS:         brew install openjdk@17
  Other:         install a Java 17 JDK (e.g. Temurin) and put `java` on PATH or set JAVA_HOME.
MSG
exit 2
