/**
 * Summarizes a V8 CPU profile (as returned by the inspector's `Profiler.stop`): where the CPU time
 * went, by area (our source directories, each package, Node internals, GC) and by function (self
 * time and inclusive time along the synchronous stack).
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  areas: [string, number][];
  selfTop: [string, number][];
  inclusiveTop: [string, number][];
}

const ROOT = process.cwd();

export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8/native (program)';
    return functionName ? `native ${functionName}` : 'native';
  }
  const path = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (nm) return nm[1]!;
  if (path.startsWith('node:')) return 'node internals';
  if (path.startsWith(ROOT)) {
    const rel = path.slice(ROOT.length + 1);
    const parts = rel.split('/');
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : rel;
  }
  return path;
}

function frameKey(frame: CallFrame): string {
  const path = frame.url.replace(/^file:\/\//, '');
  const short = path.startsWith(ROOT)
    ? path.slice(ROOT.length + 1)
    : path.replace(/^.*node_modules\//, '');
  return `${frame.functionName || '(anonymous)'} ${short ? `${short}:${frame.lineNumber + 1}` : ''}`.trim();
}

/** One summary over several profiles (e.g. the rounds of one case). */
export function summarizeProfiles(profiles: readonly CpuProfile[], top = 15): ProfileSummary {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    for (let i = 0; i < samples.length; i++) {
      // A sample's time is the gap to the next sample.
      const dt = (deltas[i + 1] ?? 0) / 1000;
      const node = byId.get(samples[i]!);
      if (!node) continue;
      const area = areaOf(node.callFrame);
      if (area === 'idle') {
        idle += dt;
        continue;
      }
      total += dt;
      areas.set(area, (areas.get(area) ?? 0) + dt);
      const key = frameKey(node.callFrame);
      self.set(key, (self.get(key) ?? 0) + dt);
      // Inclusive: every distinct function on the sampled (synchronous) stack.
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const f = byId.get(id)!.callFrame;
        if (!f.url) continue;
        const k = frameKey(f);
        if (seen.has(k)) continue;
        seen.add(k);
        inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
      }
    }
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    totalMs: total,
    idleMs: idle,
    areas: sorted(areas),
    selfTop: sorted(self).slice(0, top),
    inclusiveTop: sorted(inclusive).filter(([k]) => !/^\(anonymous\)\s*$/.test(k)).slice(0, top),
  };
}

export function formatSummary(s: ProfileSummary, requests: number): string {
  const pct = (ms: number) => `${((100 * ms) / (s.totalMs || 1)).toFixed(1).padStart(5)}%`;
  const perReq = (ms: number) => `${((1000 * ms) / Math.max(1, requests)).toFixed(0).padStart(5)} µs/req`;
  const lines: string[] = [];
  lines.push(`    busy ${s.totalMs.toFixed(0)} ms (${perReq(s.totalMs)}), idle ${s.idleMs.toFixed(0)} ms`);
  lines.push('    by area (self time):');
  for (const [k, v] of s.areas.slice(0, 14)) lines.push(`      ${pct(v)} ${perReq(v)}  ${k}`);
  lines.push('    hottest functions (self time):');
  for (const [k, v] of s.selfTop) lines.push(`      ${pct(v)} ${perReq(v)}  ${k}`);
  lines.push('    inclusive (synchronous stack) time:');
  for (const [k, v] of s.inclusiveTop) lines.push(`      ${pct(v)} ${perReq(v)}  ${k}`);
  return lines.join('\n');
}
