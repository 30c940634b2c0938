import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// FALSE POSITIVE (module guard, worker threads): a server that sets process.env.NODE_OPTIONS for the node child
// processes it spawns (here a bigger heap), then starts a worker thread of its own package with no options, is
// ended: the wrapper compares process.env's NODE_OPTIONS with the one the process started with even when the
// worker gets neither an env nor an execArgv option, and node reads NODE_OPTIONS for a worker only when it gets one
// of those (node_worker.cc; checked: an options-less worker of a plain node ignores a NODE_OPTIONS --require).
// On node 20, 22 and 24. Asserts the correct behaviour: the worker runs and the server answers.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('a worker thread without options after the server set NODE_OPTIONS for its children, on %s', (_label, node) => {
  it('lets a server start a worker thread with no options after it set process.env.NODE_OPTIONS, which node does not read for that worker', async () => {
    const r = await templateCall(tmp.home, node, HOSTILE, 'worker', {});
    expect(r.refused).toEqual([]);
    expect(r.answer).toContain('worker said hello');
  });
});
