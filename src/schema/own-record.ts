import * as v from 'valibot';

// valibot's record() silently drops the keys "__proto__", "prototype" and "constructor" (prototype-pollution
// hardening). For the warden's files those keys are ids and names like any other: a server id `constructor`
// was written and then "not found", and a tool or prompt named so lost its pin. This record keeps every own
// key, and stores each as an own property (Object.defineProperty, so "__proto__" never sets a prototype);
// lookups into it must use Object.hasOwn or a Map.

type MutableIssue = { path?: unknown[] };
type KeySchema = v.GenericSchema<string, string | number | symbol>;

export function ownRecord<K extends KeySchema, V extends v.GenericSchema>(key: K, value: V): v.RecordSchema<K, V, undefined> {
  const base = v.record(key, value);
  const run: (typeof base)['~run'] = (dataset, config) => {
    const input = dataset.value as unknown;
    if (!input || typeof input !== 'object' || Array.isArray(input)) return base['~run'](dataset, config);
    const out: Record<PropertyKey, unknown> = {};
    const issues: MutableIssue[] = [];
    let typed = true;
    for (const entryKey of Object.keys(input)) {
      const entryValue = (input as Record<string, unknown>)[entryKey];
      const keyDataset = key['~run']({ value: entryKey }, config);
      if (keyDataset.issues) {
        for (const issue of keyDataset.issues as unknown as MutableIssue[]) {
          issue.path = [{ type: 'object', origin: 'key', input: input as Record<string, unknown>, key: entryKey, value: entryValue }];
          issues.push(issue);
        }
      }
      const valueDataset = value['~run']({ value: entryValue }, config);
      if (valueDataset.issues) {
        for (const issue of valueDataset.issues as unknown as MutableIssue[]) {
          const item = { type: 'object' as const, origin: 'value' as const, input: input as Record<string, unknown>, key: entryKey, value: entryValue };
          if (issue.path) issue.path.unshift(item);
          else issue.path = [item];
          issues.push(issue);
        }
      }
      if (!keyDataset.typed || !valueDataset.typed) typed = false;
      if (keyDataset.typed) Object.defineProperty(out, keyDataset.value as PropertyKey, { value: valueDataset.value, enumerable: true, writable: true, configurable: true });
      if (issues.length > 0 && config.abortEarly) break;
    }
    const d = dataset as unknown as { typed: boolean; value: unknown; issues?: MutableIssue[] };
    d.typed = typed;
    d.value = out;
    if (issues.length > 0) d.issues = [...(d.issues ?? []), ...issues];
    return dataset as unknown as ReturnType<(typeof base)['~run']>;
  };
  return { ...base, '~run': run };
}

/** An ownRecord that is a JSON object (valibot's record takes a list too, as an empty object). */
export function objectRecord<K extends KeySchema, V extends v.GenericSchema>(key: K, value: V) {
  return v.pipe(
    v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'expected an object'),
    ownRecord(key, value),
  );
}
