/**
 * Asks a server's `GET /health` on a fixed schedule from a process of its own, so that what it
 * measures is the server's answer and not the test process's own pauses (building and encoding
 * a 90 MB body, collecting its garbage). Each probe is due at its slot on the schedule and sent
 * then, whether or not the previous one has answered; its latency counts from the moment it was
 * due. `stop()` ends the schedule and gives every latency (ms).
 */
import { spawn } from 'node:child_process';

const SCRIPT = `
const [base, every] = [process.argv[1], Number(process.argv[2])];
const latencies = [];
const start = performance.now();
let stop = false;
process.stdin.on('end', () => (stop = true));
process.stdin.resume();
const probes = [];
for (let k = 0; !stop; k++) {
  const due = start + k * every;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  probes.push(fetch(base + '/health').then(async (res) => {
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error('/health answered ' + res.status);
    latencies.push(performance.now() - due);
    if (latencies.length === 1) process.stdout.write('ready\\n');
  }));
}
await Promise.all(probes);
process.stdout.write(JSON.stringify(latencies) + '\\n');
`;

export interface HealthProbe {
  /** Ends the schedule once the probes sent have answered; their latencies (ms). */
  stop(): Promise<number[]>;
}

/** Starts probing `base` every `everyMs`; resolves once the first answer has come back. */
export async function startHealthProbe(base: string, everyMs: number): Promise<HealthProbe> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, base, String(everyMs)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (out.includes('ready\n')) resolve();
      else if (child.exitCode !== null) reject(new Error(`the health probe exited: ${err}`));
      else setTimeout(check, 5);
    };
    check();
  });
  return {
    async stop() {
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`the health probe failed (${code}): ${err}`);
      return JSON.parse(out.trim().split('\n').at(-1)!) as number[];
    },
  };
}
