// Copies the compiled SDK (dist/*.js) next to the web chat page (clients/web/sdk/), which the gateway
// serves from QIM_WEB_DIR; both are build output (git-ignored).
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const target = join(here, '..', '..', 'web', 'sdk');
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
for (const f of readdirSync(dist)) if (f.endsWith('.js') || f.endsWith('.js.map')) cpSync(join(dist, f), join(target, f));
