#!/usr/bin/env bash
# Installs what this machine lacks to build, test and run the demo.
# Idempotent: each step is skipped when its tool is already there.
# Used by `npm start`, `npm test` and .ci/run alike.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# The wasm-bindgen CLI must be the exact version Cargo.toml pins.
WASM_BINDGEN_VERSION=$(sed -nE 's/^wasm-bindgen = "=([0-9.]+)"/\1/p' crates/wasm/Cargo.toml)

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for component in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$component"; then
    say "adding rustup component $component"
    rustup component add "$component"
  fi
done
# rust-src only serves the optional size build (SIZE_BUILD=1, which falls
# back to the stable build without it): tried, never required.
if ! rustup component list --installed | grep -q "^rust-src"; then
  rustup component add rust-src 2>/dev/null || say "rust-src unavailable: SIZE_BUILD=1 will build with stable flags"
fi

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 3 minutes)"
  # Not --locked: its lock file pins a webpki-roots the registry no longer has.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  say "installing Debian's chromium and chromium-driver"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# Firefox (driven by puppeteer-core over WebDriver BiDi) and WebKitGTK's
# WebKitWebDriver + MiniBrowser (driven by selenium-webdriver; MiniBrowser has
# no headless mode, so its tests run under xvfb-run, which needs xauth). The
# two npm drivers are devDependencies, installed with the npm packages below.
missing_apt=()
[ -x /usr/bin/firefox-esr ] || missing_apt+=(firefox-esr)
[ -x /usr/bin/WebKitWebDriver ] || missing_apt+=(webkit2gtk-driver)
command -v xvfb-run >/dev/null || missing_apt+=(xvfb)
command -v xauth >/dev/null || missing_apt+=(xauth)
if [ ${#missing_apt[@]} -gt 0 ]; then
  say "installing Debian's ${missing_apt[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null
fi

# geckodriver, for wasm-bindgen-test in Firefox: Debian has no package and the
# npm one downloads from the internet, so it is built from crates.io.
if ! command -v geckodriver >/dev/null && [ ! -x "$HOME/.cargo/bin/geckodriver" ]; then
  say "installing geckodriver (cargo install, about 5 minutes)"
  cargo install --locked geckodriver
fi

# npm packages (pi reference packages, TypeScript, Vite, playwright-core,
# binaryen's wasm-opt): reinstall when the lock file changed.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  npm ci --no-audit --no-fund
fi
