#!/usr/bin/env bash
# Install the Debian packages a target needs when they are missing: graphviz (the `dot`
# layout engine the dashboard uses for clickable graphs) and chromium (the browser test).
# Needs root and apt-get; otherwise says what to install and carries on (both are optional:
# without dot the graph is laid out in the browser, without chromium the browser test skips).
set -u
missing=()
for pkg in "$@"; do
  case "$pkg" in
    graphviz) command -v dot >/dev/null 2>&1 || missing+=(graphviz) ;;
    chromium) command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium) ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  (apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "system-deps: apt-get could not install ${missing[*]}; continuing without" >&2
else
  echo "system-deps: please install ${missing[*]} (Debian: apt-get install ${missing[*]}); continuing without" >&2
fi
exit 0
