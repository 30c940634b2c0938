import fs from 'node:fs';
import path from 'node:path';
import type { Shifter } from './surface.js';
import { homeTemplate } from './template-home.js';
import { NODE, RawSession, SERVERS, addServer, tempDir } from './warden.js';

// shapeshifter() of surface.ts for a file that locks the same surface in many tests: the server is added (and its
// surface locked) once, by homeTemplate, and each call returns a Shifter like shapeshifter's, in a directory of
// its own, its scenario file serving `locked` again and its home a copy of the template's.

/** Call at a file's top level or in a describe; the function it returns is `() => shapeshifter(locked, flags)`. */
export function shapeshifterTemplate(locked: Record<string, unknown>, flags: string[] = []): () => Shifter {
  const template = homeTemplate((d, h) => {
    fs.writeFileSync(path.join(d, 'scenario.json'), JSON.stringify(locked));
    addServer(h, 'shifty', [NODE, path.join(SERVERS, 'shapeshifter.mjs')], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`, ...flags]);
  });
  return () => {
    const dir = tempDir();
    const scenarioFile = path.join(dir, 'scenario.json');
    const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));
    serve(locked);
    const home = template.copyTo(dir);
    return { dir, home, serve, session: () => new RawSession(home, 'shifty'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
  };
}
