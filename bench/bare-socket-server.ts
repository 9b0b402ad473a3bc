/**
 * The baseline of the socket benchmark (`realtime-bench.ts`): a bare `node:http` server with a
 * `ws` WebSocketServer that checks a fixed bearer token on the upgrade, answers a hello frame and
 * keeps each socket's user in a Map — what any socket server holds at least. `POST /__gc` runs a
 * full garbage collection (started with --expose-gc) so resident memory can be compared.
 * Prints `{"ready":true,"port":…}`.
 */
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

const TOKEN = process.env.BENCH_TOKEN ?? 'bare';
const sockets = new Map<WebSocket, { uid: number }>();
const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/__gc') {
    (globalThis as { gc?: () => void }).gc?.();
    res.end(JSON.stringify({ sockets: sockets.size }));
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
  server.close(() => process.exit(0));
});
