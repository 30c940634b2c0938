// A preload that registers loader hooks which do nothing (bench/module-guard.mjs): what node 20's loader thread
// costs by itself, the floor under the module guard.
import { register } from 'node:module';

register('./noop-hooks.mjs', import.meta.url);
