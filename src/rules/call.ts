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

/** `params` of the call as the client sent it. `params` is returned rewritten when values were fixed, else
 *  undefined (the client's bytes are forwarded as they are). */
export function admitArguments(verdict: Admitted, params: JsonObject): ArgumentsVerdict {
  if (verdict.deny.size === 0 && verdict.fixed.size === 0) return { ok: true, params: undefined, fixed: [] };
  const args = params.get('arguments');
  if (args !== undefined && !(args instanceof Map)) {
    return { ok: false, reason: 'arguments_invalid', detail: 'its arguments are not an object, so denied and fixed parameters cannot be checked' };
  }
  const given = args ?? new Map();
  const denied = [...verdict.deny].filter((n) => given.has(n));
  if (denied.length > 0) return { ok: false, reason: 'parameter_denied', detail: `the operator denied the parameter${denied.length === 1 ? '' : 's'} ${denied.map((n) => `"${n}"`).join(', ')}` };
  const fixed = [...verdict.fixed.keys()];
  const overridden = fixed.filter((n) => given.has(n));
  if (overridden.length > 0) return { ok: false, reason: 'parameter_fixed', detail: `the operator fixed the value of ${overridden.map((n) => `"${n}"`).join(', ')}; a call may not set it` };
  if (fixed.length === 0) return { ok: true, params: undefined, fixed: [] };
  const rewritten = new Map(params);
  rewritten.set('arguments', new Map([...given, ...verdict.fixed]));
  return { ok: true, params: rewritten, fixed };
}
