import fs from 'node:fs';
import { WardenError } from '../error.js';

// /etc/ld.so.preload: glibc's ld.so reads it for every dynamic program, whatever its environment, and maps the
// objects it names (names separated by white space or ':') before any DT_NEEDED one, running their constructors
// first. A name it cannot load is skipped with a message. The warden resolves each as a startup object of every
// ELF launch (attest/libraries.ts), and refuses to run itself under a non-system one (attest/self.ts)
// (docs/adr/0065-native-libraries.md).

export const LD_PRELOAD_FILE = '/etc/ld.so.preload';
/** Real files name one or two objects. */
const MAX_BYTES = 64 * 1024;
const MAX_NAMES = 64;

/** The names in /etc/ld.so.preload, in order; none when the file does not exist. Throws LIBRARY_PATH_UNSUPPORTED
 *  when it cannot be read or is larger than the warden reads. */
export function preloadNames(file = LD_PRELOAD_FILE): string[] {
  let raw: Buffer;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const buf = Buffer.alloc(MAX_BYTES + 1);
      raw = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new WardenError('LIBRARY_PATH_UNSUPPORTED', `cannot read ${file}, whose libraries ld.so loads into every program: ${(err as Error).message}. Make it readable, or remove it.`);
  }
  if (raw.length > MAX_BYTES) throw new WardenError('LIBRARY_PATH_UNSUPPORTED', `${file}, whose libraries ld.so loads into every program, is larger than the ${MAX_BYTES} bytes the warden reads. Remove what does not belong there.`);
  const text = raw.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(raw)) throw new WardenError('LIBRARY_PATH_UNSUPPORTED', `${file}, whose libraries ld.so loads into every program, names a file that is not UTF-8, which the warden cannot open to attest. Remove it.`);
  const names = text.split(/[ \t\n\r\f\v:]+/).filter((n) => n.length > 0);
  if (names.length > MAX_NAMES) throw new WardenError('LIBRARY_PATH_UNSUPPORTED', `${file} names ${names.length} libraries, more than the ${MAX_NAMES} the warden follows. Remove what does not belong there.`);
  return names;
}
