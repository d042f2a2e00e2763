#!/usr/bin/env bash
# What Conveyor needs from the operating system, checked in one place: `npm test` (pretest), `npm start` (prestart)
# and `.ci/run` all call this script. Whatever is missing is installed with apt when running as root (the way CI
# and containers run); otherwise the script stops at once with the exact command to run, so nothing fails later
# with ENOENT halfway through a test run.
#
#   scripts/system-deps.sh test    Chromium, fonts, poppler-utils (the PDF tests read pages with pdftoppm/pdftotext),
#                                  kubectl (renders deploy/kubernetes) and pgbouncer (the pooler tests)
#   scripts/system-deps.sh start   Chromium and fonts (the generate_pdf handler prints with them)
#
# CONVEYOR_SYSTEM_DEPS=skip skips the check, for those who know what they skip (e.g. running only tests that need
# none of it, or a Chromium elsewhere set in PUPPETEER_EXECUTABLE_PATH).
set -euo pipefail

purpose="${1:-}"
case "$purpose" in
  test | start) ;;
  *)
    echo "usage: scripts/system-deps.sh test|start" >&2
    exit 2
    ;;
esac
if [ "${CONVEYOR_SYSTEM_DEPS:-}" = "skip" ]; then exit 0; fi

has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }

missing=()
has chromium || has chromium-browser || missing+=(chromium)
[ -e /usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf ] || missing+=(fonts-liberation)
if [ "$purpose" = test ]; then
  { has pdftoppm && has pdftotext; } || missing+=(poppler-utils)
  has kubectl || missing+=(kubectl)
  has pgbouncer || missing+=(pgbouncer)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

say() { printf '[system-deps] %s\n' "$*" >&2; }
command="apt-get install -y --no-install-recommends ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  say "npm $purpose needs these system packages, which are missing: ${missing[*]}."
  say "Install them with your system's package manager (they are Debian's names), or set CONVEYOR_SYSTEM_DEPS=skip to go on without them."
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  say "npm $purpose needs these system packages, which are missing: ${missing[*]}. Install them with:"
  say "  sudo apt-get update && sudo $command"
  say "(or set CONVEYOR_SYSTEM_DEPS=skip to go on without them)."
  exit 1
fi
say "installing ${missing[*]} with apt"
export DEBIAN_FRONTEND=noninteractive
# Another apt run (an unattended upgrade, a second checkout's install) holds the dpkg lock for a while: wait for it
# rather than fail.
lock_wait="-o DPkg::Lock::Timeout=300"
if ! { apt-get $lock_wait update -qq && $command $lock_wait -qq >/dev/null; }; then
  say "could not install ${missing[*]} (\`$command\` failed above); install them, or set CONVEYOR_SYSTEM_DEPS=skip."
  exit 1
fi
