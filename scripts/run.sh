#!/usr/bin/env bash
# The main job: installs, builds and runs QIM on the embedded default (`qim up`), data under ./qim-data, with
# the web chat page on the client port (clients/web, with development tokens for loopback browsers: the
# banner prints its address; docs/running.md "The web chat page").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
echo "run: building the TypeScript SDK for the web page (clients/js)"
(cd clients/js && { [[ -d node_modules ]] || PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund; } && npm run build >/dev/null)
export QIM_WEB_DIR=${QIM_WEB_DIR:-$PWD/clients/web}
export QIM_WEB_DEV_TOKENS=${QIM_WEB_DEV_TOKENS:-1}
exec ./build/release/src/app/qim up "$@"
