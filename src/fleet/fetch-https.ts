import http from 'node:http';
import https from 'node:https';
import { refusedUrl } from '../store/fleet-config.js';
import { FILES, fetchFailed, tooLarge, type FetchContext, type Fetched } from './fetch-common.js';

// A URL source: any static https host. node:http(s) directly, so that every bound is ours: at most MAX_REDIRECTS
// redirects, each to a URL the fleet section itself would accept and never from https down to http; a body over
// the cap is refused from its Content-Length or as soon as it grows past it; the caller's deadline aborts the
// request. No cookies, no credentials, no proxy (git honours the operator's proxy settings; this does not), no
// compression asked for (a small compressed body could expand past any cap).

export const MAX_REDIRECTS = 5;

/** A URL as messages show it: without a query (a redirect may carry a signed token in it). */
const shown = (u: URL): string => `${u.origin}${u.pathname}`;

function getOnce(url: URL, max: number, what: string, signal: AbortSignal): Promise<{ redirect?: string; body?: Buffer }> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.get(url, { signal, headers: { accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'mcp-warden-daemon' }, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && status !== 304) {
        res.resume();
        const location = res.headers.location;
        if (!location) return reject(fetchFailed(shown(url), `HTTP ${status} without a Location`));
        return resolve({ redirect: new URL(location, url).href });
      }
      if (status !== 200) {
        res.resume();
        return reject(fetchFailed(shown(url), `HTTP ${status} for the ${what}`));
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) {
        res.destroy();
        return reject(tooLarge(shown(url), what, max, declared));
      }
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n > max) {
          res.destroy();
          reject(tooLarge(shown(url), what, max));
        } else chunks.push(c);
      });
      res.on('end', () => resolve({ body: Buffer.concat(chunks) }));
      res.on('error', (err) => reject(fetchFailed(shown(url), err.message)));
    });
    req.on('error', (err) => reject(fetchFailed(shown(url), (err as NodeJS.ErrnoException).code ?? err.message)));
  });
}

/** GETs `start`, following at most MAX_REDIRECTS redirects that stay acceptable. */
async function getCapped(start: string, max: number, what: string, signal: AbortSignal): Promise<Buffer> {
  let url = new URL(start);
  for (let hop = 0; ; hop++) {
    const r = await getOnce(url, max, what, signal);
    if (r.body) return r.body;
    const next = r.redirect as string;
    if (hop >= MAX_REDIRECTS) throw fetchFailed(start, `more than ${MAX_REDIRECTS} redirects`);
    const why = refusedUrl(next.replace(/[?#].*$/s, ''));
    if (why) throw fetchFailed(start, `a redirect to a URL the fleet section would refuse (${why})`);
    const to = new URL(next);
    if (url.protocol === 'https:' && to.protocol !== 'https:') throw fetchFailed(start, 'a redirect from https to http');
    url = to;
  }
}

export async function fetchFromUrl(url: string, ctx: FetchContext): Promise<Fetched> {
  const [bundle, signature] = await Promise.all(FILES.map((f) => getCapped(url + f.suffix, f.max, f.what, ctx.signal)));
  return { bundle: bundle as Buffer, signature: signature as Buffer };
}
