#!/usr/bin/env bash
# What the tests need on this machine kind (Debian), installed or started where missing; run by `npm test`.
# - PostgreSQL at 127.0.0.1:5432 (trust auth, database `test`): the store tests run on it too. Started when down.
# - Debian's Chromium at /usr/bin/chromium: the portal's browser tests drive it through playwright-core (no browser
#   download). Installed with apt-get when missing (sudo when not root), waiting up to 10 minutes for another apt-get
#   holding the package lock.
set -euo pipefail

if command -v pg_isready >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "test prerequisites: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "test prerequisites: PostgreSQL is not answering at 127.0.0.1:5432; install and start it (Debian: apt-get install postgresql)" >&2
  exit 1
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "test prerequisites: installing Debian's chromium"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q chromium
fi
