import fs from 'node:fs';
import path from 'node:path';
import { treeSnapshot } from './tree-snapshot.js';
import { addServer } from './warden.js';
import { makingDir, nameOf, publish, published } from './run-scratch.js';

// A server package enrolled once per test run and node release, for tests that each need that same package
// enrolled in a home of their own and then only run it: `add` digests the node binary (100+ MB) and launches the
// server three times, most of a test's time when it was done per test. The template is made once (in the run's
// scratch directory, test/helpers/run-scratch.ts) and never used itself: each test gets a copy of its home
// (copyTemplateHome). The package stays where it was enrolled, shared by the copies, so a test must not change
// it: its servers may write only outside it. Each copy checks first that the package is still as laid out, and
// checkTemplate after a test says so if the test changed it; a test whose server writes into its package, or
// whose package differs from the template's, lays out and enrolls its own.

export interface TemplateSpec {
  /** Names the layout: one template per name and node, so one name must always lay out the same package. */
  name: string;
  /** Lays out the package under `dir` (nothing outside it); returns the server's script. */
  layout: (dir: string) => string;
  /** The server id it is enrolled under. */
  id: string;
}

export interface EnrolledTemplate {
  spec: TemplateSpec;
  node: string;
  /** The server's script, in the laid-out tree. */
  server: string;
  /** The laid-out tree's directory and what it held when it was enrolled. */
  tree: string;
  snapshot: Record<string, string>;
  /** The enrolled home, to be copied. */
  home: string;
}

const made = new Map<string, EnrolledTemplate>();

function load(spec: TemplateSpec, node: string, dir: string): EnrolledTemplate {
  const tree = path.join(dir, 'tree');
  const { server, snapshot } = JSON.parse(fs.readFileSync(path.join(dir, 'laid-out.json'), 'utf8')) as { server: string; snapshot: Record<string, string> };
  return { spec, node, server, tree, snapshot, home: path.join(dir, 'home') };
}

/** `spec`'s package enrolled with `node` (made at its first use in the run; `add` must succeed). */
export function enrolledTemplate(spec: TemplateSpec, node: string): EnrolledTemplate {
  const key = `template-${spec.name}-${nameOf(node)}`;
  const known = made.get(key);
  if (known) return known;
  let dir = published(key);
  if (!dir) {
    const fresh = makingDir(spec.name);
    const tree = path.join(fresh, 'tree');
    const server = spec.layout(tree);
    fs.writeFileSync(path.join(fresh, 'laid-out.json'), JSON.stringify({ server, snapshot: treeSnapshot(tree) }));
    addServer(path.join(fresh, 'home'), spec.id, [node, server]);
    dir = publish(fresh, key);
  }
  const template = load(spec, node, dir);
  made.set(key, template);
  return template;
}

/** Throws unless the template's package holds what it held when it was enrolled. */
export function checkTemplate(template: EnrolledTemplate): void {
  const now = treeSnapshot(template.tree);
  const was = template.snapshot;
  const changed = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((p) => was[p] !== now[p]);
  if (changed.length) {
    throw new Error(`the package of template '${template.spec.name}' (${template.tree}) was changed after it was enrolled, at: ${changed.join(', ')}; a test whose server writes into its package must lay out and enroll its own`);
  }
}

/** A copy of `spec`'s enrolled home (with `node`) at `home`, which must not exist yet; returns the template. */
export function copyTemplateHome(spec: TemplateSpec, node: string, home: string): EnrolledTemplate {
  const template = enrolledTemplate(spec, node);
  checkTemplate(template);
  fs.cpSync(template.home, home, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
  return template;
}
