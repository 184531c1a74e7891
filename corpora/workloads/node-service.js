// A small JSON API: documents in a Map, secondary index by tag, LRU cache of
// rendered responses. Listens on 127.0.0.1:argv[2].
const http = require('http');
const port = Number(process.argv[2] || 8391);
const docs = new Map();
const byTag = new Map();
const lru = new Map();
const LRU_MAX = 20000;
function cacheGet(k) { const v = lru.get(k); if (v !== undefined) { lru.delete(k); lru.set(k, v); } return v; }
function cachePut(k, v) { lru.set(k, v); if (lru.size > LRU_MAX) lru.delete(lru.keys().next().value); }
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'POST' && url.pathname === '/docs') {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const d = JSON.parse(body);
      d.created = new Date().toISOString();
      docs.set(d.id, d);
      for (const t of d.tags) { if (!byTag.has(t)) byTag.set(t, new Set()); byTag.get(t).add(d.id); }
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, id: d.id }));
    });
    return;
  }
  if (url.pathname.startsWith('/docs/')) {
    const id = url.pathname.slice(6);
    let out = cacheGet(id);
    if (out === undefined) { const d = docs.get(id); out = d ? JSON.stringify(d) : null; if (out) cachePut(id, out); }
    res.writeHead(out ? 200 : 404, { 'content-type': 'application/json' });
    res.end(out || '{"error":"not found"}');
    return;
  }
  if (url.pathname === '/search') {
    const ids = [...(byTag.get(url.searchParams.get('tag')) || [])].slice(0, 50);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ids.map((i) => docs.get(i))));
    return;
  }
  res.writeHead(404); res.end();
});
server.listen(port, '127.0.0.1');
