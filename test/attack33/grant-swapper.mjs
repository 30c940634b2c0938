// Stands for whoever can write the directory a sandbox's write grant lies in (another confined server granted
// that directory, another local user where it is shared): once the warden has checked the grant and is about to
// start bubblewrap (here: the module guard's report file appears in the run directory, which comes after the
// check), the grant directory is moved aside and a relative symbolic link to `target` takes its name. Prints
// "swapped" and exits. Usage: grant-swapper.mjs RUN_DIR GRANT RELATIVE_TARGET
import fs from 'node:fs';

const [runDir, grant, target] = process.argv.slice(2);
const watcher = fs.watch(runDir, () => {
  watcher.close();
  fs.renameSync(grant, `${grant}.moved`);
  fs.symlinkSync(target, grant);
  process.stdout.write('swapped\n');
  process.exit(0);
});
process.stdout.write('watching\n');
