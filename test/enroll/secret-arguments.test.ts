import { describe, expect, it } from 'vitest';
import { secretArgument } from '../../src/enroll/secret-arguments.js';

// Arguments that look like credentials are refused at enrollment (tools.lock records arguments); what a server
// commonly takes as arguments that are not credentials must pass.

describe('arguments that look like credentials', () => {
  it.each([
    [['--token=abc'], '--token=…'],
    [['--access-token', 'abc'], '--access-token …'],
    [['--api-key=abc'], '--api-key=…'],
    [['--api_key', 'abc'], '--api_key …'],
    [['-password', 'hunter2'], '-password …'],
    [['--client-secret=x'], '--client-secret=…'],
    [['--auth-token=x'], '--auth-token=…'],
    [['OPENAI_API_KEY=abc'], 'OPENAI_API_KEY=…'],
    [['GITHUB_TOKEN=abc'], 'GITHUB_TOKEN=…'],
    [['DB_PASSWORD=abc'], 'DB_PASSWORD=…'],
    [['ghp_0123456789abcdefghijABCDEFGHIJ012345'], '(a value in the form of a known token)'],
    [['--header', 'x', '--key=sk-proj-abc'], '--key=…'],
    [['AKIAIOSFODNN7EXAMPLE'], '(a value in the form of a known token)'],
  ])('%j is refused, shown as %s', (args, shown) => {
    expect(secretArgument(args)?.shown).toBe(shown);
  });

  it.each([
    [['/home/me/projects', '/tmp']],
    [['--allowed-directories', '/srv']],
    [['--token-file', '/run/secrets/token']],
    [['--api-key-env', 'SENTRY_KEY']],
    [['--secret-path=/etc/x']],
    [['--port', '3000', '--transport', 'stdio']],
    [['--password', '--verbose']],
    [['--token=']],
    [['KEY=value']],
    [['stdio']],
    [['--mode=token']],
  ])('%j passes', (args) => {
    expect(secretArgument(args)).toBeUndefined();
  });
});
