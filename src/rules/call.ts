import { foldName } from '../protocol/fold.js';
import type { JsonObject } from '../protocol/json/reader.js';
import type { ToolVerdict } from './verdict.js';

// A tools/call of an admitted tool against its denied and fixed parameters. A call that supplies either is
// refused, never rewritten silently (an approval must never show one value while the server receives another);
// otherwise the fixed values are added to the arguments the server receives.

export type CallRefusalReason = 'parameter_denied' | 'parameter_fixed' | 'arguments_invalid';

export type ArgumentsVerdict =
  | { ok: true; params: JsonObject | undefined; fixed: string[] }
  | { ok: false; reason: CallRefusalReason; detail: string };

type Admitted = Extract<ToolVerdict, { decision: 'allow' | 'ask' }>;

/** Argument names that a JavaScript object copy (Object.assign, spread into a literal's [[Set]]) does not keep
 *  as data. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** `params` of the call as the client sent it. `params` is returned rewritten when values were fixed, else
 *  undefined (the client's bytes are forwarded as they are). */
export function admitArguments(verdict: Admitted, params: JsonObject): ArgumentsVerdict {
  if (verdict.deny.size === 0 && verdict.fixed.size === 0) return { ok: true, params: undefined, fixed: [] };
  const args = params.get('arguments');
  if (args !== undefined && !(args instanceof Map)) {
    return { ok: false, reason: 'arguments_invalid', detail: 'its arguments are not an object, so denied and fixed parameters cannot be checked' };
  }
  const given = args ?? new Map();
  // A member that another reader takes for a hidden one: another spelling of it (protocol/fold.ts), or one that
  // a JavaScript server's object copy turns into a prototype whose members it then reads.
  const prototypeKey = [...given.keys()].find((k) => PROTOTYPE_KEYS.has(k));
  if (prototypeKey) return { ok: false, reason: 'arguments_invalid', detail: `its arguments carry "${prototypeKey}", which a JavaScript server may read as the prototype of its options (a way around denied and fixed parameters)` };
  const denied = [...verdict.deny].filter((n) => given.has(n));
  if (denied.length > 0) return { ok: false, reason: 'parameter_denied', detail: `the operator denied the parameter${denied.length === 1 ? '' : 's'} ${denied.map((n) => `"${n}"`).join(', ')}` };
  const fixed = [...verdict.fixed.keys()];
  const overridden = fixed.filter((n) => given.has(n));
  if (overridden.length > 0) return { ok: false, reason: 'parameter_fixed', detail: `the operator fixed the value of ${overridden.map((n) => `"${n}"`).join(', ')}; a call may not set it` };
  const hidden = new Map<string, { n: string; reason: CallRefusalReason }>();
  for (const n of verdict.deny) hidden.set(foldName(n), { n, reason: 'parameter_denied' });
  for (const n of fixed) hidden.set(foldName(n), { n, reason: 'parameter_fixed' });
  for (const key of given.keys()) {
    const as = hidden.get(foldName(key));
    if (as) return { ok: false, reason: as.reason, detail: `its arguments carry ${JSON.stringify(key).slice(0, 80)}, which a server reading names without regard to case takes for the ${as.reason === 'parameter_denied' ? 'denied' : 'fixed'} parameter "${as.n}"` };
  }
  if (fixed.length === 0) return { ok: true, params: undefined, fixed: [] };
  const rewritten = new Map(params);
  rewritten.set('arguments', new Map([...given, ...verdict.fixed]));
  return { ok: true, params: rewritten, fixed };
}
