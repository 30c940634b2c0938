import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { perTestDirs } from '../helpers/warden.js';
import { loaderCall } from '../attack13/loader-session.js';
import { layoutHostile } from './session.js';

// FALSE POSITIVE (module guard, node 20.19+ without in-thread hooks): the wrapped Module.prototype._compile
// refuses a source that fails vm.compileFunction as CommonJS once it holds the word import, export or await,
// taking it for an ES module ("one that is neither would have been a syntax error"). But a syntax error is what
// node throws for such a file, and a server may catch it: an optional module written for a newer node, required
// inside try/catch. The guard ends the server instead of letting node throw. (Here the file is not an ES module
// either: node 20 reports a SyntaxError for it.)
// Asserts the correct behaviour: the server gets node's SyntaxError, goes on, and nothing is refused.

const tmp = perTestDirs();

describe('require() of a CommonJS file with a syntax error, on node ' + process.versions.node + ' (this one)', () => {
  it('lets a server catch the SyntaxError of an optional CommonJS module that mentions "export" in a comment, instead of ending it', async () => {
    const server = layoutHostile(tmp.dir, {
      'lib/optional/package.json': JSON.stringify({ name: 'optional' }),
      'lib/optional/index.js': '// optional fast path: export the native binding when this node parses it\nmodule.exports = (() => { foo(; })();\n',
    });
    const r = await loaderCall(tmp.home, process.execPath, server, 'trybroken', { file: path.join(tmp.dir, 'work/pkg/lib/optional/index.js') });
    expect(r.answer).toContain('optional module unavailable (SyntaxError)');
    expect(r.refused).toHaveLength(0);
  });
});
