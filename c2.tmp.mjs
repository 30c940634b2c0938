import { spawn } from 'node:child_process';
const init = JSON.stringify({jsonrpc:'2.0',id:1,method:'initialize',params:{protocolVersion:'2025-06-18',capabilities:{},clientInfo:{name:'t',version:'1'}}})+'\n';
async function once(cmd, args) {
  const t0 = performance.now();
  const p = spawn(cmd, args, {stdio:['pipe','pipe','ignore']});
  p.stdin.write(init);
  await new Promise(r => p.stdout.once('data', r));
  const dt = performance.now()-t0;
  p.stdin.end(); await new Promise(r => p.once('exit', r));
  return dt;
}
const direct = ['node', ['/work/main/node_modules/@modelcontextprotocol/server-everything/dist/index.js','stdio']];
const warden = ['node', ['/work/main/dist/cli/main.js','--home',process.argv[2],'run','everything']];
for (let i=0;i<3;i++) console.log('direct', (await once(...direct)).toFixed(0), 'warden', (await once(...warden)).toFixed(0));
