#!/usr/bin/env bash
# Installs whatever the build and tests need that is not already here, and nothing else.
# Safe to run repeatedly: every step checks first, so a warm machine passes through in about a
# second. CI runs it on a clean clone with no stdin, so nothing here may prompt.
#
#   scripts/setup.sh            Rust wasm target, wasm-bindgen-cli, npm dependencies
#   scripts/setup.sh --browser  the same, plus Debian's chromium, firefox-esr and webkit2gtk-driver
#                               (with xvfb) for the browser tests
set -euo pipefail

cd "$(dirname "$0")/.."

want_browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

# Progress goes to stderr so that commands chained after setup (`npm run bench -- --json`) own stdout.
say() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# rustup installs cargo into ~/.cargo/bin; a non-login shell (CI) may not have it on PATH yet.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust stable with rustup first"
command -v node >/dev/null 2>&1 || die "node not found: Node.js 20 or newer is required"
command -v npm >/dev/null 2>&1 || die "npm not found"

node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "Node.js $node_major is too old: 20 or newer is required"

# Another `cargo install` writing the same binaries into ~/.cargo/bin would race with ours.
wait_for_other_cargo_install() {
  local waited=0
  while pgrep -f 'cargo install' >/dev/null 2>&1; do
    if [ "$waited" -eq 0 ]; then say "another 'cargo install' is running; waiting for it"; fi
    sleep 5
    waited=$((waited + 5))
    if [ "$waited" -ge 1200 ]; then die "gave up waiting for the other 'cargo install' after 20 minutes"; fi
  done
}

# --- Rust target ---------------------------------------------------------------------------
if command -v rustup >/dev/null 2>&1; then
  if rustup target list --installed 2>/dev/null | grep -qx 'wasm32-unknown-unknown'; then
    say "rust target wasm32-unknown-unknown: present"
  else
    say "rust target wasm32-unknown-unknown: installing"
    rustup target add wasm32-unknown-unknown >&2
  fi
else
  # Without rustup (a distro Rust) we cannot add targets; the build will say what is missing.
  say "rustup not found; assuming the wasm32-unknown-unknown target is available"
fi

# --- wasm-bindgen-cli ----------------------------------------------------------------------
# The CLI must be exactly the version of the wasm-bindgen crate the Wasm was linked against,
# otherwise it refuses the module (schema mismatch). Cargo.lock is the truth; before the first
# cargo run there is none, and then the exact pin in Cargo.toml is.
wb_version=""
if [ -f wasm/Cargo.lock ]; then
  wb_version=$(awk '
    /^\[\[package\]\]/ { in_wb = 0 }
    /^name = "wasm-bindgen"$/ { in_wb = 1; next }
    in_wb && /^version = / { gsub(/"/, "", $3); print $3; exit }
  ' wasm/Cargo.lock)
fi
if [ -z "$wb_version" ]; then
  wb_version=$(sed -n 's/^wasm-bindgen *= *"=\([0-9][0-9.]*\)".*/\1/p' wasm/Cargo.toml | head -n1)
fi
[ -n "$wb_version" ] || die "cannot tell which wasm-bindgen version wasm/ uses (no Cargo.lock entry, no exact pin)"

installed_wb() { wasm-bindgen --version 2>/dev/null | awk '{print $2}'; }

have_wb=$(installed_wb || true)
if [ "$have_wb" != "$wb_version" ]; then
  wait_for_other_cargo_install
  have_wb=$(installed_wb || true)
fi
if [ "$have_wb" = "$wb_version" ]; then
  say "wasm-bindgen-cli $wb_version: present"
else
  if [ -n "$have_wb" ]; then
    say "wasm-bindgen-cli: have $have_wb, need $wb_version; reinstalling (takes a few minutes)"
  else
    say "wasm-bindgen-cli $wb_version: installing (takes a few minutes)"
  fi
  # --locked first (the CLI's own tested dependency set). Its lockfile can name a dependency
  # version the registry no longer serves (0.2.130 pins a webpki-roots release that is gone),
  # and then the same CLI version resolved against the registry is the next best thing.
  if ! cargo install wasm-bindgen-cli --locked --force --version "$wb_version" >&2; then
    say "wasm-bindgen-cli: --locked install failed; retrying with freshly resolved dependencies"
    cargo install wasm-bindgen-cli --force --version "$wb_version" >&2
  fi
  have_wb=$(installed_wb || true)
  [ "$have_wb" = "$wb_version" ] || die "wasm-bindgen on PATH reports '$have_wb' after installing $wb_version (check PATH order)"
fi

# --- npm dependencies ----------------------------------------------------------------------
# npm records what it installed in node_modules/.package-lock.json; if the committed lockfile
# is newer, someone changed dependencies since.
if [ -L node_modules ]; then
  # A worktree sharing another checkout's packages: `npm ci` would wipe the shared copy.
  say "npm dependencies: node_modules is a symlink; leaving it alone"
elif [ -f package-lock.json ]; then
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm dependencies: installing (npm ci)"
    npm ci --no-audit --no-fund >&2
  else
    say "npm dependencies: present"
  fi
else
  if [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ]; then
    say "npm dependencies: installing (npm install, no lockfile yet)"
    npm install --no-audit --no-fund >&2
  else
    say "npm dependencies: present"
  fi
fi

# --- Browsers (browser tests only) --------------------------------------------------------
# Debian's packages only (Playwright's own browser builds cannot be downloaded on these machines):
# chromium (driven by playwright-core), firefox-esr (puppeteer-core over WebDriver BiDi),
# webkit2gtk-driver (WebKitWebDriver and WebKitGTK's MiniBrowser) with xvfb for its display.
# Each is checked by the file the launchers in scripts/lib/ run, and all missing ones are
# installed in one apt-get call.
if [ "$want_browser" -eq 1 ]; then
  # package  file that shows it is installed
  browser_packages=(
    "chromium /usr/bin/chromium"
    "firefox-esr /usr/bin/firefox-esr"
    "webkit2gtk-driver /usr/bin/WebKitWebDriver"
    "xvfb /usr/bin/Xvfb"
  )
  missing=()
  for entry in "${browser_packages[@]}"; do
    pkg=${entry%% *}
    file=${entry#* }
    if [ -x "$file" ]; then
      say "$pkg: present"
    else
      missing+=("$pkg")
    fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || die "${missing[*]} missing and there is no apt-get to install them with"
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null 2>&1 || die "${missing[*]} missing; installing needs root (or sudo)"
      sudo_cmd=(sudo -n)
    fi
    # A second apt-get would fail on the dpkg lock rather than wait for it.
    apt_busy() { pgrep -x apt-get >/dev/null || pgrep -x apt >/dev/null || pgrep -x dpkg >/dev/null; }
    waited=0
    while apt_busy; do
      if [ "$waited" -eq 0 ]; then say "another apt/dpkg process is running; waiting for it"; fi
      sleep 5
      waited=$((waited + 5))
      [ "$waited" -lt 1200 ] || die "gave up waiting for the other apt/dpkg process after 20 minutes"
    done
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
      say "apt package lists are empty: apt-get update"
      "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    fi
    say "installing from Debian: ${missing[*]}"
    if ! "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
      # Stale lists name package versions the mirror no longer has.
      say "install failed; refreshing package lists and retrying once"
      "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
      "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
    fi
    for entry in "${browser_packages[@]}"; do
      [ -x "${entry#* }" ] || die "apt-get finished but ${entry#* } (package ${entry%% *}) is still missing"
    done
  fi
fi

say "done"
