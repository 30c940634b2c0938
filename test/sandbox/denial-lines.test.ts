import { describe, expect, it } from 'vitest';
import { recordDenials } from '../../src/sandbox/egress.js';

// The operator's stderr line for what a confined server's proxy refused (src/sandbox/egress.ts recordDenials):
// the host and the address come from the server's request and from the resolver, so they go through the one
// escaper (src/escape.ts) like every untrusted string printed. The proxy's authority pattern admits no hidden code
// point today; the line must not rely on it.

const ESC = '\u001b[2J\u202e';

function lineFor(denial: Parameters<ReturnType<typeof recordDenials>>[0]): string {
  const lines: string[] = [];
  recordDenials('probe', () => {}, (m) => lines.push(m))(denial);
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

describe("the line said for a connection a sandbox's proxy refused", () => {
  it('shows a host with hidden code points escaped (not granted)', () => {
    const line = lineFor({ kind: 'connect', host: `evil${ESC}.example`, port: 443, reason: 'not_granted' });
    expect(line).toContain('evil\\u001b[2J\\u202e.example:443');
    expect(line).not.toMatch(/[\u001b\u202e]/);
  });

  it('shows a host and the address it resolved to with hidden code points escaped (not a public address)', () => {
    const line = lineFor({ kind: 'connect', host: `evil${ESC}.example`, port: 443, reason: 'private_address', address: `10.0.0.1${ESC}` });
    expect(line).toContain('evil\\u001b[2J\\u202e.example:443');
    expect(line).toContain('resolved to 10.0.0.1\\u001b[2J\\u202e,');
    expect(line).not.toMatch(/[\u001b\u202e]/);
  });
});
