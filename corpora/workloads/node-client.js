// Load client for node-service.js: creates documents, then mixes reads and
// tag searches for argv[3] seconds. Talks only to 127.0.0.1.
const http = require('http');
const port = Number(process.argv[2] || 8391);
const seconds = Number(process.argv[3] || 25);
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
let seed = 12345;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const words = 'river stone cloud ember maple quartz harbor meadow signal lantern orbit falcon'.split(' ');
const tags = ['news', 'sports', 'tech', 'food', 'travel', 'music', 'science', 'art'];
function request(method, path, body) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent,
      headers: body ? { 'content-type': 'application/json' } : {} }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', resolve);
    if (body) req.write(body);
    req.end();
  });
}
async function waitUp() { for (let i = 0; i < 100; i++) { try { await new Promise((ok, bad) => { const r = http.get({ host: '127.0.0.1', port, path: '/x' }, (res) => { res.resume(); ok(); }); r.on('error', bad); }); return; } catch (e) { await new Promise((r) => setTimeout(r, 100)); } } }
(async () => {
  await waitUp();
  const end = Date.now() + seconds * 1000;
  let n = 0;
  while (Date.now() < end) {
    const batch = [];
    for (let k = 0; k < 64; k++, n++) {
      if (n < 60000 || rnd(4) === 0) {
        const title = Array.from({ length: 6 }, () => words[rnd(words.length)]).join(' ');
        const doc = { id: `doc-${n}`, title, author: `writer${rnd(900)}`, tags: [tags[rnd(8)], tags[rnd(8)]],
          body: Array.from({ length: 20 + rnd(60) }, () => words[rnd(words.length)]).join(' '), score: rnd(1000) / 10 };
        batch.push(request('POST', '/docs', JSON.stringify(doc)));
      } else if (rnd(3) === 0) {
        batch.push(request('GET', `/search?tag=${tags[rnd(8)]}`));
      } else {
        batch.push(request('GET', `/docs/doc-${rnd(n)}`));
      }
    }
    await Promise.all(batch);
  }
  agent.destroy();
})();
