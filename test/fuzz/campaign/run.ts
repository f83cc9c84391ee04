/**
 * The fuzz campaign: `npm run fuzz -- [--parser NAME[,NAME]] [--cases N | --seconds S] [--seed X]
 * [--workers W] [--timeout-ms T] [--case I] [--json FILE] [--no-save]`.
 *
 * Parsers run one after another; each gets N cases (default 10,000) or S seconds, spread over W worker
 * threads (default: min(2, cores)) in chunks. Every case is regenerated from (seed, parser, index), so
 * `--case I` reproduces one anywhere. A worker whose case overruns the limit is terminated (a hang) and
 * replaced; failing inputs are minimised in the worker and saved under test/fixtures/fuzz/. Exit status 1
 * when anything failed.
 */
import { availableParallelism } from "node:os";
import { writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { loadZstd } from "../../../src/compress/zstd-wasm.js";
import { installAllocationWatch } from "./alloc.js";
import { generateCase, runCase } from "./check.js";
import type { FailureKind } from "./check.js";
import { saveFailure } from "./corpus.js";
import type { ChunkDone, FoundFailure, RunChunk } from "./messages.js";
import { HEARTBEAT_BYTES } from "./messages.js";
import { TARGETS, targetNamed } from "./targets.js";
import type { FuzzTarget } from "./target.js";

interface Options {
  parsers: FuzzTarget[];
  cases: number | undefined;
  seconds: number | undefined;
  seed: string;
  workers: number;
  timeoutMs: number;
  reproduce: number | undefined;
  json: string | undefined;
  save: boolean;
}

function parseOptions(argv: string[]): Options {
  const options: Options = { parsers: [...TARGETS], cases: undefined, seconds: undefined, seed: "offload-kit", workers: Math.min(2, availableParallelism()), timeoutMs: 2000, reproduce: undefined, json: undefined, save: true };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? "";
    switch (flag) {
      case "--parser":
        options.parsers = value().split(",").map((name) => {
          const target = targetNamed(name);
          if (target === undefined) throw new Error(`unknown parser '${name}'; known: ${TARGETS.map((t) => t.name).join(", ")}`);
          return target;
        });
        break;
      case "--cases": options.cases = Number(value()); break;
      case "--seconds": options.seconds = Number(value()); break;
      case "--seed": options.seed = value(); break;
      case "--workers": options.workers = Math.max(1, Number(value())); break;
      case "--timeout-ms": options.timeoutMs = Number(value()); break;
      case "--case": options.reproduce = Number(value()); break;
      case "--json": options.json = value(); break;
      case "--no-save": options.save = false; break;
      default: throw new Error(`unknown option '${argv[i]}'`);
    }
  }
  if (options.cases === undefined && options.seconds === undefined) options.cases = 10_000;
  return options;
}

interface ParserReport {
  parser: string;
  about: string;
  cases: number;
  accepted: number;
  seconds: number;
  largestAllocation: number;
  slowestCaseMs: number;
  peakHeap: number;
  failures: Record<FailureKind, number>;
  saved: string[];
}

const KINDS: FailureKind[] = ["crash", "hang", "disagreement", "round-trip", "allocation", "afterwards"];

class Pool {
  private readonly workers: { worker: Worker; heartbeat: SharedArrayBuffer; busy?: RunChunk; resolve?: (d: ChunkDone) => void; ready: Promise<void> }[] = [];

  constructor(private readonly size: number, private readonly onHang: (chunk: RunChunk, index: number) => void) {}

  private spawn(): (typeof this.workers)[number] {
    const heartbeat = new SharedArrayBuffer(HEARTBEAT_BYTES);
    const worker = new Worker(new URL("./worker.js", import.meta.url), { workerData: { heartbeat } });
    worker.unref();
    let ready!: () => void;
    const slot: (typeof this.workers)[number] = { worker, heartbeat, ready: new Promise<void>((r) => (ready = r)) };
    worker.on("message", (m: ChunkDone | { type: "ready" }) => {
      if (m.type === "ready") ready();
      if (m.type === "done" && slot.resolve) {
        const resolve = slot.resolve;
        slot.busy = undefined;
        slot.resolve = undefined;
        resolve(m);
      }
    });
    worker.on("error", (e) => {
      console.error(`worker error: ${e instanceof Error ? e.stack : String(e)}`);
      process.exit(2);
    });
    return slot;
  }

  /** Starts the workers and waits until each has loaded (so time budgets count cases, not start-up). */
  async start(): Promise<void> {
    while (this.workers.length < this.size) this.workers.push(this.spawn());
    await Promise.all(this.workers.map((w) => w.ready));
  }

  /** Runs a chunk on a free worker; a hang ends the chunk there and resumes after the hung case. */
  run(chunk: RunChunk): Promise<ChunkDone> {
    const slot = this.workers.find((w) => w.busy === undefined)!;
    slot.busy = chunk;
    return new Promise((resolve) => {
      slot.resolve = resolve;
      slot.worker.postMessage(chunk);
    });
  }

  get free(): number {
    return this.workers.filter((w) => w.busy === undefined).length;
  }

  /** Terminates workers stuck on one case for longer than the limit (plus start-up grace). */
  watch(timeoutMs: number): void {
    for (let i = 0; i < this.workers.length; i++) {
      const slot = this.workers[i]!;
      if (slot.busy === undefined) continue;
      const state = new Int32Array(slot.heartbeat, 0, 2);
      const started = new Float64Array(slot.heartbeat, 8, 1)[0]!;
      if (Atomics.load(state, 1) !== 1 || Date.now() - started < timeoutMs + 3000) continue;
      const index = state[0]!;
      const chunk = slot.busy;
      const resolve = slot.resolve!;
      void slot.worker.terminate();
      this.workers[i] = this.spawn();
      this.onHang(chunk, index);
      // The cases before the hung one are not counted as run: report the hung one alone and go on after it.
      resolve({ type: "done", parser: chunk.parser, start: chunk.start, ran: index - chunk.start + 1, accepted: 0, largest: 0, slowestMs: Date.now() - started, peakHeap: 0, failures: [] });
      if (index + 1 < chunk.start + chunk.count) void this.run({ ...chunk, start: index + 1, count: chunk.start + chunk.count - index - 1 });
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

function save(options: Options, report: ParserReport, f: FoundFailure): void {
  if (!options.save) return;
  report.saved.push(saveFailure({
    parser: report.parser, kind: f.kind, detail: f.detail, seed: options.seed, index: f.index, capacity: f.capacity, chunked: f.chunked,
    bytes: f.minimised, originalLength: f.input.length,
  }));
}

async function campaign(options: Options): Promise<ParserReport[]> {
  const reports: ParserReport[] = [];
  let current: ParserReport | undefined;
  const hangs: { chunk: RunChunk; index: number }[] = [];
  const pool = new Pool(options.workers, (chunk, index) => hangs.push({ chunk, index }));
  await pool.start();
  const timer = setInterval(() => pool.watch(options.timeoutMs), 200);
  try {
    for (const target of options.parsers) {
      const report: ParserReport = {
        parser: target.name, about: target.about, cases: 0, accepted: 0, seconds: 0, largestAllocation: 0, slowestCaseMs: 0, peakHeap: 0,
        failures: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<FailureKind, number>, saved: [],
      };
      current = report;
      const t0 = Date.now();
      const deadline = options.seconds !== undefined ? t0 + options.seconds * 1000 : 0;
      const total = options.cases ?? Number.MAX_SAFE_INTEGER;
      const chunkSize = options.seconds !== undefined ? 200 : Math.min(2000, Math.max(1, Math.ceil(total / (options.workers * 4))));
      let next = 0;
      let lastPrint = t0;
      const running = new Set<Promise<void>>();
      while ((next < total && (deadline === 0 || Date.now() < deadline)) || running.size > 0) {
        while (pool.free > 0 && next < total && (deadline === 0 || Date.now() < deadline)) {
          const chunk: RunChunk = { type: "run", parser: target.name, seed: options.seed, start: next, count: Math.min(chunkSize, total - next), deadline, timeoutMs: options.timeoutMs };
          next += chunk.count;
          const p = pool.run(chunk).then((done) => {
            report.cases += done.ran;
            report.accepted += done.accepted;
            report.largestAllocation = Math.max(report.largestAllocation, done.largest);
            report.slowestCaseMs = Math.max(report.slowestCaseMs, done.slowestMs);
            report.peakHeap = Math.max(report.peakHeap, done.peakHeap);
            for (const f of done.failures) {
              report.failures[f.kind]++;
              save(options, report, f);
              console.error(`${target.name} case ${f.index}: ${f.kind}: ${f.detail.split("\n")[0]}`);
            }
          });
          running.add(p);
          void p.then(() => running.delete(p));
        }
        await Promise.race([...running, new Promise((r) => setTimeout(r, 100))]);
        while (hangs.length > 0) {
          const { chunk, index } = hangs.shift()!;
          report.failures.hang++;
          const c = generateCase(target, chunk.seed, index);
          save(options, report, { index, kind: "hang", detail: `no answer within ${options.timeoutMs} ms (worker terminated)`, input: c.input, minimised: c.input, capacity: c.capacity, chunked: c.chunked });
          console.error(`${target.name} case ${index}: hang`);
        }
        if (Date.now() - lastPrint > 30_000) {
          lastPrint = Date.now();
          console.error(`  ${target.name}: ${report.cases} cases, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        }
      }
      report.seconds = (Date.now() - t0) / 1000;
      reports.push(report);
      printRow(report);
      writeJson(options, reports);
    }
  } finally {
    clearInterval(timer);
    void current;
    await pool.close();
  }
  return reports;
}

/** The reports so far, written after every parser: a campaign cut short keeps the parsers it finished. */
function writeJson(options: Options, reports: ParserReport[]): void {
  if (!options.json) return;
  writeFileSync(options.json, `${JSON.stringify({ seed: options.seed, workers: options.workers, timeoutMs: options.timeoutMs, node: process.version, reports }, null, 2)}\n`);
}

function printRow(r: ParserReport): void {
  const f = r.failures;
  console.log(
    `${r.parser.padEnd(15)} ${String(r.cases).padStart(9)} cases  ${String(r.accepted).padStart(8)} accepted  ${r.seconds.toFixed(1).padStart(7)} s  ` +
    `${String(Math.round(r.cases / Math.max(r.seconds, 0.001))).padStart(6)}/s  crash ${f.crash}  hang ${f.hang}  disagree ${f.disagreement}  ` +
    `round-trip ${f["round-trip"]}  alloc ${f.allocation}  afterwards ${f.afterwards}  largest alloc ${r.largestAllocation}  peak heap ${(r.peakHeap / 1048576).toFixed(0)} MiB  slowest ${r.slowestCaseMs.toFixed(0)} ms`,
  );
}

async function reproduce(options: Options): Promise<number> {
  await loadZstd();
  installAllocationWatch();
  let failed = 0;
  for (const target of options.parsers) {
    await target.setup?.();
    const result = await runCase(target, options.seed, options.reproduce!);
    console.log(`${target.name} case ${options.reproduce}: ${result.input.length} bytes, window ${result.capacity}, chunked ${result.chunked}`);
    console.log(Buffer.from(result.input).toString("hex"));
    console.log(result.failure ? `${result.failure.kind}: ${result.failure.detail}` : "passes");
    if (result.failure) failed++;
  }
  return failed > 0 ? 1 : 0;
}

const options = parseOptions(process.argv.slice(2));
if (options.reproduce !== undefined) {
  process.exitCode = await reproduce(options);
} else {
  await loadZstd();
  console.log(`fuzz campaign: seed '${options.seed}', ${options.cases !== undefined ? `${options.cases} cases` : `${options.seconds} s`} per parser, ${options.workers} worker(s), ${options.timeoutMs} ms per case`);
  const reports = await campaign(options);
  const failures = reports.reduce((n, r) => n + KINDS.reduce((m, k) => m + r.failures[k], 0), 0);
  console.log(failures === 0 ? "no failures" : `${failures} failure(s)`);
  process.exitCode = failures === 0 ? 0 : 1;
}
