/**
 * The baseline of the socket benchmark (`realtime-bench.ts`): a bare `node:http` server with a
 * `ws` WebSocketServer that checks a fixed bearer token on the upgrade, answers a hello frame and
 * keeps each socket's user in a Map — what any socket server holds at least. `POST /__gc` runs a
 * full garbage collection (started with --expose-gc) so resident memory can be compared; `POST
 * /__heap` writes a heap snapshot to the temporary directory and answers its path.
 *
 * Fan-out baseline (case (b)): with REDIS_URL and BENCH_CHANNEL, every message of that Redis
 * channel is sent as it is to every socket of this process, and `POST /__publish` publishes its
 * body on the channel — an HTTP request, one PUBLISH, every process's sockets: the least a
 * multi-process socket server does to fan a change out.
 * Prints `{"ready":true,"port":…}`.
 */
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { Redis } from 'ioredis';
import { WebSocketServer, type WebSocket } from 'ws';

const TOKEN = process.env.BENCH_TOKEN ?? 'bare';
const sockets = new Map<WebSocket, { uid: number }>();
const CHANNEL = process.env.BENCH_CHANNEL ?? 'bare:bus';
const publisher = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : null;
const subscriber = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : null;
if (subscriber) {
  await subscriber.subscribe(CHANNEL);
  subscriber.on('message', (_channel: string, text: string) => {
    for (const ws of sockets.keys()) ws.send(text);
  });
}
const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/__publish' && publisher) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void publisher.publish(CHANNEL, Buffer.concat(chunks).toString()).then(() => res.end('{"ok":true}'));
    });
    return;
  }
  if (req.method === 'POST' && req.url === '/__gc') {
    (globalThis as { gc?: () => void }).gc?.();
    res.end(JSON.stringify({ sockets: sockets.size }));
    return;
  }
  if (req.method === 'POST' && req.url === '/__heap') {
    (globalThis as { gc?: () => void }).gc?.();
    res.end(JSON.stringify({ path: writeHeapSnapshot(join(tmpdir(), `bare-bench-${process.pid}-${Date.now()}.heapsnapshot`)) }));
    return;
  }
  res.statusCode = 404;
  res.end();
});
const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
server.on('upgrade', (req, socket, head) => {
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    sockets.set(ws, { uid: 1 });
    ws.on('close', () => sockets.delete(ws));
    ws.on('message', () => {});
    ws.send(JSON.stringify({ type: 'realtime_data', data: { event: 'hello', user_id: 1, db: 'bare' } }));
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0 }));
});
process.once('SIGTERM', () => {
  for (const ws of sockets.keys()) ws.terminate();
  publisher?.disconnect();
  subscriber?.disconnect();
  server.close(() => process.exit(0));
});
